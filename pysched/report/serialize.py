"""JSON and YAML output: same input and options give byte-identical text."""

from __future__ import annotations

import json
import re
from functools import cache
from itertools import chain
from typing import Any

import orjson


@cache
def _invisible() -> re.Pattern[str]:
    """Characters JSON may carry raw but a terminal or an editor would act on (DEL, C1 controls, bidi).
    Compiled when first needed (YAML output, JSON output beyond ASCII), not at every start (2.5 M
    instructions)."""
    return re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\u2028\u2029]")


_ORJSON_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
_SCALARS = frozenset((str, int, bool, type(None)))  # types _plain needs not look into


class Checked(dict[str, Any]):
    """A dict whose every float (at any depth) its maker has seen to be :func:`plain_float`: ``to_json``
    does not walk it (a report's summary holds 3,000 fractions in 4,000 dicts, and a few hundred distinct
    values). Both encoders write it as the dict it is; PyYAML's safe dumper refuses it (JSON only)."""

    __slots__ = ()


def plain_float(x: float) -> bool:
    """Whether orjson writes ``x`` as the standard library does: finite and without an exponent."""
    return x == 0.0 or 1e-4 <= abs(x) < 1e16  # (False for NaN)


def to_json(data: Any) -> str:
    """Indented JSON with sorted keys. orjson writes it many times faster than the standard library's
    indenting encoder (pure Python), byte for byte the same for strings, integers, booleans, null and
    floats written without an exponent (finite, 0 or 1e-4 <= |x| < 1e16: both print the shortest
    round-trip digits); data holding other floats (``1e-05`` vs ``1e-5``, ``NaN`` vs ``null``), non-string
    keys or integers beyond 64 bits goes through the standard library."""
    if _plain(data):
        try:
            return _escape_invisible(orjson.dumps(data, option=_ORJSON_OPTIONS).decode() + "\n")
        except (TypeError, orjson.JSONEncodeError):
            pass
    return _escape_invisible(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def _escape_invisible(text: str) -> str:
    # outside strings JSON has only ASCII, so these can only be inside strings: same value, escaped.
    # Every one of them but DEL is beyond ASCII: ASCII text without DEL (the usual case) has none.
    if text.isascii() and "\x7f" not in text:
        return text
    invisible = _invisible()
    return invisible.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text) if invisible.search(text) else text


def _plain(data: Any) -> bool:
    """No float written with an exponent (or NaN/inf) anywhere in ``data`` (as :func:`plain_float`, inlined).
    (Keys are not looked at: orjson refuses every key that is not exactly a ``str``, and ``to_json`` then
    takes the standard library. Only exact dicts, lists and tuples are looked into: a :class:`Checked`
    dict was checked by its maker.)"""
    scalars = _SCALARS
    stack = [data]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is dict:
            items = v.values()
        elif t is list or t is tuple:
            if len(v) >= _RECORDS_FROM and _scalar_records(v):
                continue
            items = v
        elif t is float:
            if v != 0.0 and not (1e-4 <= abs(v) < 1e16):  # also False for NaN
                return False
            continue
        elif isinstance(v, float):
            return False
        else:
            continue
        for x in items:  # scalars and floats are judged here; only the rest goes on the stack
            tx = type(x)
            if tx in scalars:
                continue
            if tx is float:
                if x != 0.0 and not (1e-4 <= abs(x) < 1e16):  # also False for NaN
                    return False
            else:
                stack.append(x)
    return True


#: lists this long are first looked at as records (the cycles of a run: 2,000 dicts of a pod's strings and
#: integers), all at once in C, before item by item
_RECORDS_FROM = 16


def _scalar_records(items: list[Any] | tuple[Any, ...]) -> bool:
    """Whether every item is an exact dict whose every value is a string, an integer, a boolean or None:
    nothing in it for ``_plain`` to look at (False says nothing: the items are then looked at one by one)."""
    return set(map(type, items)) == {dict} and _SCALARS.issuperset(
        map(type, chain.from_iterable(map(dict.values, items))))


_dumper: Any = None  # built by the first to_yaml: a JSON run never imports PyYAML


def _yaml_dumper() -> Any:
    """PyYAML's safe dumper, with multi-line strings (and str subclasses such as Outcome) as literal blocks."""
    global _dumper
    if _dumper is None:
        import yaml

        class _Dumper(yaml.SafeDumper):
            pass

        def _str_repr(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
            style = "|" if "\n" in value else None
            return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style=style)

        _Dumper.add_representer(str, _str_repr)
        _Dumper.add_multi_representer(str, _str_repr)  # str subclasses too (StrEnum values such as Outcome)
        _dumper = _Dumper
    return _dumper


def to_yaml(data: Any) -> str:
    import yaml

    dumper = _yaml_dumper()
    text = yaml.dump(data, Dumper=dumper, sort_keys=True, allow_unicode=True, default_flow_style=False, width=120)
    if _invisible().search(text):  # PyYAML writes bidi characters raw when unicode is allowed: escape everything
        text = yaml.dump(data, Dumper=dumper, sort_keys=True, allow_unicode=False, default_flow_style=False,
                         width=120)
    return text
