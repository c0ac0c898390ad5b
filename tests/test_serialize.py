"""JSON output: orjson writes it, byte for byte as the standard library's indenting encoder does (both then
escape the invisible and bidi characters a terminal would act on)."""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import given, settings, strategies as st

import pysched.report.serialize as ser
from pysched.report.serialize import Checked, _escape_invisible, _plain, plain_float, to_json

LEAF = (st.none() | st.booleans() | st.integers(min_value=-(1 << 70), max_value=1 << 70) | st.floats()
        | st.text())


def stdlib(data: object) -> str:
    return _escape_invisible(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


@settings(max_examples=300, deadline=None)
@given(st.recursive(LEAF, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=25))
def test_byte_identical_to_the_standard_library(data: object) -> None:
    assert to_json(data) == stdlib(data)


def test_strings_escaped_alike() -> None:
    data = {"é": "line\nbreak\ttab \x00\x1f\x7f \u2028 \"q\" \\ 🙂", "empty": {}, "none": [], "n": -(1 << 63)}
    assert to_json(data) == stdlib(data)


def test_floats_and_non_string_keys_keep_the_standard_notation() -> None:
    assert to_json({10: "a", 9: [1e-05, float("nan")]}) == '{\n  "9": [\n    1e-05,\n    NaN\n  ],\n  "10": "a"\n}\n'


def test_invisible_characters_escaped() -> None:
    assert to_json({"name": "a\x7fb\u202ec"}) == '{\n  "name": "a\\u007fb\\u202ec"\n}\n'
    assert to_json({"name": "a\x7fb"}) == '{\n  "name": "a\\u007fb"\n}\n'  # DEL alone: ASCII text too


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, min_value=1e-4, max_value=9.999e15)
                | st.floats(min_value=0, max_value=1).map(lambda x: round(x, 4))
                | st.floats(allow_nan=False, allow_infinity=False, min_value=-9.999e15, max_value=-1e-4),
                max_size=20))
def test_floats_without_exponent_go_through_orjson_alike(values: list[float]) -> None:
    data = {"fraction": values, "n": 3}
    assert to_json(data) == stdlib(data)


def test_summary_fractions_take_the_fast_encoder(monkeypatch: object) -> None:
    import pysched.report.serialize as ser

    def refuse(*args: object, **kw: object) -> str:
        raise AssertionError("the standard library encoder ran")

    monkeypatch.setattr(ser.json, "dumps", refuse)  # type: ignore[attr-defined]
    assert to_json({"cpu": {"fraction": 0.5062, "zero": 0.0}}) == \
        '{\n  "cpu": {\n    "fraction": 0.5062,\n    "zero": 0.0\n  }\n}\n'


@pytest.mark.parametrize(("value", "plain"), [
    (0.0, True), (-0.0, True), (1e-4, True), (-1e-4, True), (0.5062, True), (9.999e15, True), (-9.999e15, True),
    (1e16, False), (-1e16, False), (5e-05, False), (-5e-05, False), (1e-300, False),
    (float("nan"), False), (float("inf"), False), (float("-inf"), False),
], ids=["zero", "negative-zero", "smallest", "smallest-negative", "fraction", "largest", "largest-negative",
        "1e16", "-1e16", "small", "small-negative", "tiny", "nan", "inf", "-inf"])
def test_plain_float_is_written_alike_by_both_encoders(value: float, plain: bool) -> None:
    """Plain floats are written alike (other floats may be too: 1e+16, but not 1e-05, so not trusted)."""
    assert plain_float(value) is plain
    if plain:
        assert _agree(value)


@settings(max_examples=300, deadline=None)
@given(st.floats())
def test_plain_floats_are_written_alike(value: float) -> None:
    if plain_float(value):
        assert _agree(value)


def _agree(value: float) -> bool:
    return orjson.dumps([value]).decode() == json.dumps([value], separators=(",", ":"))


@pytest.mark.parametrize("data", [
    {"nodes": [{"cpu": {"fraction": 0.5062, "requested": 3}, "name": "n1"}], "total": {"fraction": 0.0}},
    {"b": {"fraction": None}, "a": [1, "x", True, None, 12.5]},
    {},
], ids=["fractions", "mixed", "empty"])
def test_checked_dict_written_as_the_dict_it_holds(data: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = stdlib(data)
    assert to_json({"summary": Checked(data), "n": 1}) == stdlib({"summary": data, "n": 1})
    monkeypatch.setattr(ser.json, "dumps", _refuse)  # the fast encoder writes it: not walked, not refused
    assert to_json(Checked(data)) == expected


def test_checked_dict_is_not_walked() -> None:
    """Its maker has checked its floats: ``_plain`` trusts it (and looks into every exact dict and list)."""
    assert _plain([Checked({"x": 1e-05})])
    assert not _plain([{"x": 1e-05}])


def _refuse(*args: object, **kw: object) -> str:
    raise AssertionError("the standard library encoder ran")


def _records(n: int, **last: object) -> list[dict]:
    """``n`` dicts of scalars (a cycle's pod, pass, node), the last one with ``last`` added."""
    rows: list[dict] = [{"pod": f"ns/p{i}", "pass": 1, "node": None, "ok": True} for i in range(n)]
    rows[-1].update(last)
    return rows


@pytest.mark.parametrize(("data", "plain"), [
    (_records(16), True),
    (_records(40, fraction=0.25), True),
    (_records(40, fraction=1e-05), False),
    (_records(40, fraction=float("nan")), False),
    (_records(40, victims=["a", "b"]), True),
    (_records(40, victims=[1e-05]), False),
    (_records(40, more={"deep": [{"x": 1e20}]}), False),
    (_records(15, fraction=1e-05), False),
    ([*_records(20), 1e-05], False),
    ([*_records(20), Checked({"x": 1e-05})], True),  # (its maker checked it)
    (tuple(_records(20, fraction=1e-05)), False),
], ids=["scalars", "plain-float", "exponent", "nan", "nested-list", "nested-exponent", "deep-exponent",
        "short-list", "float-item", "checked-item", "tuple"])
def test_records_looked_at_at_once(data: list | tuple, plain: bool) -> None:
    assert _plain(data) is plain
    assert _plain({"cycles": data, "n": 1}) is plain
    if all(type(x) is dict for x in data):
        assert to_json({"cycles": data}) == stdlib({"cycles": data})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=3), LEAF | st.lists(LEAF, max_size=2), max_size=3),
                min_size=16, max_size=24))
def test_many_records_byte_identical_to_the_standard_library(data: list[dict]) -> None:
    assert to_json(data) == stdlib(data)
