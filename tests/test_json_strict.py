"""The JSON reader's repeated-key check without the decoder hook (``reader._strict_raw_decode``,
``reader.strict_json_loads``) against the strict decoder itself: the same values, the same exceptions."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from pysched.snapshot import reader


def _outcome(decode, text: str):  # type: ignore[no-untyped-def]
    try:
        value = decode(text)
    except reader.JsonDuplicate as e:
        return ("duplicate", e.key)
    except json.JSONDecodeError as e:
        return ("syntax", e.msg, e.pos)
    except (ValueError, RecursionError) as e:
        return (type(e).__name__, str(e)[:40])
    return ("value", json.dumps(value, sort_keys=False, allow_nan=True))


def _both(text: str) -> tuple[object, object]:
    fast = _outcome(lambda t: reader._strict_raw_decode(t, 0)[0], text)
    strict = _outcome(lambda t: reader._STRICT_JSON.raw_decode(t, 0)[0], text)
    return fast, strict


CASES = {
    "plain": '{"a": 1, "b": [{"c": "x:y"}, {"d": "::"}]}',
    "repeated": '{"a": 1, "a": 2}',
    "repeated inside": '{"items": [{"m": {"name": "x", "name": "y"}}]}',
    "repeated with colons in values": '{"a": "1:2:3", "b": {"k": "::", "k": ":"}}',
    "escaped colon in a key": '{"a\\u003ab": 1, "a:b": 2}',
    "escaped colon, upper case": '{"x": "\\u003A\\u003a", "y": 1}',
    "escaped backslash before u003a": '{"x": "\\\\u003a", "x": 1}',
    "escaped backslash, no repeat": '{"x": "\\\\u003a", "y": 1}',
    "repeated, then a syntax error": '{"a": {"k": 1, "k": 2}, "b": [1, 2,]}',
    "syntax error": '{"a": 1,, "b": 2}',
    "integer over 64 bits": '{"a": 123456789012345678901234567890, "b": 1}',
    "integer over 64 bits, repeated": '{"a": 123456789012345678901234567890, "a": 1}',
    "nan": '{"a": NaN, "b": -Infinity}',
    "nan repeated": '{"a": NaN, "a": null}',
    "lone surrogate": '{"a": "\\ud800", "b": 1}',
    "lone surrogate repeated": '{"a": "\\ud800", "a": 1}',
    "deep": '{"a": ' * 300 + "1" + "}" * 300,
    "deep repeated": '{"a": ' * 300 + '{"b": 1, "b": 2}' + "}" * 300,
    "scalar": '"a:b"',
    "empty key repeated": '{"": 1, "": 2}',
    "unicode keys": '{"é:ü": "ß", "é:ü": "x"}',
}


@pytest.mark.parametrize("text", list(CASES.values()), ids=list(CASES))
def test_same_value_or_error_as_the_strict_decoder(text: str) -> None:
    fast, strict = _both(text)
    assert fast == strict
    assert _outcome(reader.strict_json_loads, text) == _outcome(reader._STRICT_JSON.decode, text)


def test_a_repeated_key_is_refused_with_its_line() -> None:
    text = '{"kind": "List", "items": [\n {"a": 1},\n {"b": 2,\n  "b": 3}]}'
    with pytest.raises(reader.InputError, match='mapping key "b" already defined at line 3') as e:
        list(reader.json_values(text, "x.json"))
    assert e.value.line == 4


def test_concatenated_values() -> None:
    got = [(i, v, line) for i, v, line in reader.json_values('{"a": 1}\n{"b": ":"}\n\n[1]', "x.json")]
    assert got == [(1, {"a": 1}, 1), (2, {"b": ":"}, 2), (3, [1], 4)]
    with pytest.raises(reader.InputError, match="already defined"):
        list(reader.json_values('{"a": 1}\n{"b": 1, "b": 2}', "x.json"))


_KEYS = st.sampled_from(["a", "b", "a:b", "c\u003ad", ":", "", "é", "\\u003a", "x y"])
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(1 << 70), 1 << 70),
                     st.floats(allow_nan=True, allow_infinity=True),
                     st.text(alphabet=":ab\\\"u03\u00e9\n", max_size=8))


def _write(value: object, dup: st.DrawFn) -> str:  # type: ignore[name-defined]
    """JSON text of ``value``; an object may repeat one of its keys (drawn)."""
    if isinstance(value, dict):
        pairs = [(json.dumps(k), _write(v, dup)) for k, v in value.items()]
        if pairs and dup(st.booleans()):
            k = pairs[dup(st.integers(0, len(pairs) - 1))][0]
            pairs.insert(dup(st.integers(0, len(pairs))), (k, _write(dup(_SCALARS), dup)))
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_write(v, dup) for v in value) + "]"
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return json.dumps(value)


_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=4)), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_generated_texts(data: st.DataObject) -> None:
    value = data.draw(_VALUES)
    text = _write(value, data.draw)
    fast, strict = _both(text)
    assert fast == strict, text


class _NoStrict:
    def raw_decode(self, text: str, pos: int = 0) -> object:
        raise AssertionError("the strict decoder was asked")

    decode = raw_decode


@pytest.mark.parametrize("text", ['{"a": 1, "b": {"c": "x:y"}}', '{"a\\u003ab": "\\u003A:", "c": [{"d": 1}]}', "[]"])
def test_texts_without_repeated_keys_take_the_plain_decoder(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    want = json.loads(text)
    monkeypatch.setattr(reader, "_STRICT_JSON", _NoStrict())
    assert reader._strict_raw_decode(text, 0) == (want, len(text))
    assert reader.strict_json_loads(text) == want


# ------------------------------------------------------------------------- orjson for large texts

_ORJSON_CASES = {
    **CASES,
    "integer of 19 digits in range": '{"a": 1234567890123456789}',
    "integer of 20 digits beyond 64 bits": '{"a": 98765432109876543210}',
    "negative beyond 64 bits": '{"a": -9223372036854775809}',
    "long digit run in a string": '{"a": "12345678901234567890123", "b": 2}',
    "digits at the very end": "[" + "7" * 25 + "]",
    "floats": '{"a": [1.5, 1e5, -0.0, 2.5e-300, 0.1, 1E2], "b": 1e308}',
    "infinite float": '{"a": 1e400}',
    "whitespace around": ' \n\t{"a": 1}\r\n ',
    "two values": '{"a": 1} {"b": 2}',
}


@pytest.mark.parametrize("text", list(_ORJSON_CASES.values()), ids=list(_ORJSON_CASES))
def test_orjson_reads_what_the_strict_decoder_reads(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With every text read by orjson first (``ORJSON_FROM`` 0): the same value or the same error."""
    monkeypatch.setattr(reader, "ORJSON_FROM", 0)
    assert _outcome(reader.strict_json_loads, text) == _outcome(reader._STRICT_JSON.decode, text)


@pytest.mark.parametrize("text", ['{"a": 98765432109876543210}', '{"a": -9223372036854775809}',
                                  '{"a": "x", "b": ' + "1" * 19 + "}", '{"s": "0123456789012345678"}',
                                  '{"a": 1, "a": 2}', '{"a": {"b": 1, "b": 1}}', '{"a": NaN}', "[1] [2]"])
def test_orjson_leaves_to_the_standard_decoder(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Integers that may lie beyond 64 bits (orjson would read floats: any run of 19 digits), repeated
    keys and what orjson refuses are read as before."""
    monkeypatch.setattr(reader, "ORJSON_FROM", 0)
    assert reader._whole_value(text) is None


def test_orjson_reads_a_large_text(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [{"kind": "Pod", "metadata": {"name": f"p-{i}", "labels": {"a:b": "c"}},
              "spec": {"n": 123456789012345678, "f": 0.5, "s": "t:" * 3}} for i in range(2000)]
    text = json.dumps({"kind": "List", "items": items}, indent=2).replace('"s": "t:', '"s": "t\\u003a', 5)
    assert len(text) >= reader.ORJSON_FROM
    assert reader._whole_value(text) == [json.loads(text)]
    assert list(reader.json_values("\n\n" + text, "x.json")) == [(1, json.loads(text), 3)]
    monkeypatch.setattr(reader, "_STRICT_JSON", _NoStrict())
    monkeypatch.setattr(reader, "_PLAIN_JSON", _NoStrict())
    assert reader.strict_json_loads(text) == json.loads(text)
    monkeypatch.undo()  # a repeated key: read again by the strict decoder, which names it
    with pytest.raises(reader.InputError, match='mapping key "n" already defined'):
        list(reader.json_values(text.replace('"n": 123', '"n": 1, "n": 123', 1), "x.json"))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_generated_texts_through_orjson(data: st.DataObject) -> None:
    value = data.draw(_VALUES)
    text = _write(value, data.draw)
    saved = reader.ORJSON_FROM
    reader.ORJSON_FROM = 0
    try:
        fast = _outcome(reader.strict_json_loads, text)
    finally:
        reader.ORJSON_FROM = saved
    assert fast == _outcome(reader._STRICT_JSON.decode, text), text


@pytest.mark.parametrize("block", [8, 16, 64])
def test_orjson_scan_in_small_blocks(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The NumPy scan goes block by block: a run of 19 digits is found wherever it starts and ends, and
    every colon is counted once."""
    monkeypatch.setattr(reader, "ORJSON_FROM", 0)
    monkeypatch.setattr(reader, "_SCAN_BLOCK", block)
    for pad in range(0, 40):
        for digits in (18, 19, 25):
            text = '{"k": "' + "a:" * pad + '", "n": ' + "7" * digits + ', "m": "::"}'
            got = reader._whole_value(text)
            assert (got is None) == (digits >= 19), (pad, digits)
            if got is not None:
                assert got == [json.loads(text)]
        repeated = '{"k": "' + "a" * pad + '", "x": 1, "x": 2}'
        assert reader._whole_value(repeated) is None
    for text in _ORJSON_CASES.values():
        assert _outcome(reader.strict_json_loads, text) == _outcome(reader._STRICT_JSON.decode, text)


_COLON_TEXTS = {"empty": b"", "one": b":", "none": b"abc", "runs": b"a:b::c" * 7, "every byte": bytes(range(256)) * 3,
                "only colons": b":" * 17}


@pytest.mark.parametrize("block", [8, 16, 1 << 20], ids=["block 8", "block 16", "block 1 MiB"])
@pytest.mark.parametrize("data", list(_COLON_TEXTS.values()), ids=list(_COLON_TEXTS))
def test_colons_counted_block_by_block(data: bytes, block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The written value's colons (``_whole_value``'s repeated-key check) counted by NumPy a block at a
    time: what ``bytes.count`` counts, wherever the blocks end."""
    import numpy as np

    monkeypatch.setattr(reader, "_SCAN_BLOCK", block)
    assert reader._colons(np, data) == data.count(b":")
