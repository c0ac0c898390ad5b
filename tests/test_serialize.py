"""JSON output: orjson writes it, byte for byte as the standard library's indenting encoder does (both then
escape the invisible and bidi characters a terminal would act on)."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from pysched.report.serialize import _escape_invisible, to_json

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
