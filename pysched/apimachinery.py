"""apimachinery's conventions, once: Go's quoting and value printing, field paths and field errors
(``<path>: Invalid value: ...``), strict decoding of a YAML/JSON tree as Go's strict JSON decoder would,
Go durations, and the name and label validation of ``k8s.io/apimachinery/pkg/util/validation``.

Only ``pysched.errors`` below it: every layer may use it.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Collection, Mapping
from functools import cache
from typing import Any

from pysched.errors import ConfigError, ConfigErrors

INT32_RANGE = (-(2**31), 2**31 - 1)
INT64_RANGE = (-(2**63), 2**63 - 1)

# --------------------------------------------------------------------------------------------------
# Field paths and kube-scheduler style field errors


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def index(path: str, i: int | str) -> str:
    return f"{path}[{i}]"


def go_quote(text: str) -> str:
    """Roughly Go's ``%q``: a double-quoted string with escapes."""
    return json.dumps(text, ensure_ascii=False)


def go_value(value: Any) -> str:
    """How apimachinery prints a bad value: scalars plainly, strings quoted, the rest as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def field_error(path: str, body: str) -> ConfigError:
    return ConfigError(body, field=path or None)


def invalid(path: str, value: Any, detail: str) -> ConfigError:
    return field_error(path, f"Invalid value: {go_value(value)}: {detail}")


def required(path: str, detail: str = "") -> ConfigError:
    return field_error(path, f"Required value: {detail}" if detail else "Required value")


def duplicate(path: str, value: Any) -> ConfigError:
    return field_error(path, f"Duplicate value: {go_value(value)}")


def not_supported(path: str, value: Any, supported: Collection[str]) -> ConfigError:
    body = f"Unsupported value: {go_value(value)}"
    if supported:
        body += ": supported values: " + ", ".join(go_quote(s) for s in supported)
    return field_error(path, body)


def forbidden(path: str, detail: str) -> ConfigError:
    return field_error(path, f"Forbidden: {detail}")


def flatten(err: ConfigError) -> list[ConfigError]:
    return list(err.errors) if isinstance(err, ConfigErrors) else [err]


def raise_all(errors: list[ConfigError]) -> None:
    """Raise nothing, the one error, or all of them together."""
    flat = [e for err in errors for e in flatten(err)]
    if len(flat) == 1:
        raise flat[0]
    if flat:
        raise ConfigErrors(flat)


def did_you_mean(word: str, candidates: Collection[str]) -> str:
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {go_quote(close[0])}?)" if close else ""


# --------------------------------------------------------------------------------------------------
# Strict decoding of the YAML/JSON tree (what Go's strict JSON decoder would accept)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _type_error(path: str, value: Any, go_type: str) -> ConfigError:
    shown = json_type(value)
    if shown == "number":
        shown = f"number {value}"
    return field_error(path, f"json: cannot unmarshal {shown} into Go value of type {go_type}")


def as_mapping(raw: Any, path: str, go_type: str = "object") -> Mapping[str, Any]:
    """The mapping at ``path``; ``None`` is an empty mapping."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise _type_error(path, raw, go_type)
    return raw


def check_fields(raw: Mapping[str, Any], allowed: Collection[str], path: str) -> None:
    """Strict decoding: every key must be a known field (case-sensitive, as Kubernetes decodes)."""
    for key in raw:
        if key not in allowed:
            hint = did_you_mean(str(key), allowed)
            raise field_error(path, f"strict decoding error: unknown field {go_quote(str(key))}{hint}")


def get_int(raw: Mapping[str, Any], key: str, path: str, bits: int = 32) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    where = child(path, key)
    go_type = f"int{bits}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _type_error(where, value, go_type)
    if isinstance(value, float):
        if not value.is_integer():
            raise _type_error(where, value, go_type)
        value = int(value)
    lo, hi = INT32_RANGE if bits == 32 else INT64_RANGE
    if not lo <= value <= hi:
        raise _type_error(where, value, go_type)
    return value


def get_float(raw: Mapping[str, Any], key: str, path: str) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _type_error(child(path, key), value, "float32")
    return float(value)


def get_str(raw: Mapping[str, Any], key: str, path: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _type_error(child(path, key), value, "string")
    return value


def get_bool(raw: Mapping[str, Any], key: str, path: str) -> bool | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise _type_error(child(path, key), value, "bool")
    return value


def as_list(value: Any, path: str, go_type: str = "[]") -> list[Any] | None:
    """The list at ``path``; ``None`` stays ``None`` (a nil slice)."""
    if value is None:
        return None
    if not isinstance(value, list | tuple):
        raise _type_error(path, value, go_type)
    return list(value)


def get_list(raw: Mapping[str, Any], key: str, path: str) -> list[Any] | None:
    return as_list(raw.get(key), child(path, key))


def get_str_list(raw: Mapping[str, Any], key: str, path: str) -> list[str] | None:
    items = get_list(raw, key, path)
    if items is None:
        return None
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise _type_error(index(child(path, key), i), item, "string")
    return items


_DURATION_UNITS = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9,
                   "m": 60 * 10**9, "h": 3600 * 10**9}


@cache
def _duration_part() -> re.Pattern[str]:
    """Compiled at the first duration read, not at every start."""
    return re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")



def parse_go_duration(text: str) -> int:
    """Go's ``time.ParseDuration``, in nanoseconds. Raises ValueError with Go's message."""
    rest, sign = text, 1
    if rest[:1] in ("+", "-"):
        sign = -1 if rest[0] == "-" else 1
        rest = rest[1:]
    if rest == "0":
        return 0
    # (here: fractions imports decimal, some 4 ms at a start that reads no duration)
    from fractions import Fraction

    total, pos = Fraction(0), 0
    while pos < len(rest):
        m = _duration_part().match(rest, pos)
        if m is None:
            raise ValueError(f"time: invalid duration {go_quote(text)}")
        total += Fraction(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if pos == 0:
        raise ValueError(f"time: invalid duration {go_quote(text)}")
    return sign * int(total)


def _frac(value: int, digits: int) -> str:
    whole, part = divmod(value, 10**digits)
    tail = str(part).rjust(digits, "0").rstrip("0")
    return f"{whole}.{tail}" if tail else str(whole)


def format_go_duration(ns: int) -> str:
    """Go's ``time.Duration.String``."""
    if ns == 0:
        return "0s"
    sign, u = ("-" if ns < 0 else ""), abs(ns)
    if u < 10**3:
        return f"{sign}{u}ns"
    if u < 10**6:
        return f"{sign}{_frac(u, 3)}µs"
    if u < 10**9:
        return f"{sign}{_frac(u, 6)}ms"
    minutes, sec_ns = divmod(u, 60 * 10**9)
    text = f"{_frac(sec_ns, 9)}s"
    if minutes:
        hours, minutes = divmod(minutes, 60)
        text = f"{minutes}m{text}"
        if hours:
            text = f"{hours}h{text}"
    return sign + text


def get_duration(raw: Mapping[str, Any], key: str, path: str) -> int | None:
    """A ``metav1.Duration`` field (a Go duration string), in nanoseconds."""
    text = get_str(raw, key, path)
    if text is None:
        return None
    try:
        return parse_go_duration(text)
    except ValueError as e:
        raise field_error(child(path, key), str(e)) from None


def plain(value: Any) -> Any:
    """A deep copy made of plain dicts and lists."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return copy.copy(value)


# --------------------------------------------------------------------------------------------------
# apimachinery name validation (IsQualifiedName, IsValidLabelValue)

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              "alphanumeric character")
_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)  # compiled once: a loader checks thousands of values
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                    "'.', and must start and end with an alphanumeric character")


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def _length(value: str) -> int:
    """Go's ``len`` of a string: its UTF-8 bytes."""
    return len(value) if value.isascii() else len(value.encode())


class NameRule:
    """One of apimachinery's name formats (``IsDNS1123Label``, ``IsDNS1123Subdomain``, ``IsDNS1035Label``):
    ``errors`` in upstream's words, ``error`` as one short line for snapshot warnings (the first problem,
    the length with the actual count, the format with one example)."""

    __slots__ = ("examples", "fmt", "max_len", "msg", "pattern")

    def __init__(self, msg: str, fmt: str, max_len: int, *examples: str) -> None:
        self.msg, self.fmt, self.max_len, self.examples = msg, fmt, max_len, examples
        self.pattern = re.compile(fmt)

    def errors(self, value: str) -> list[str]:
        errs = []
        if _length(value) > self.max_len:
            errs.append(_max_len(self.max_len))
        if not self.pattern.fullmatch(value):
            errs.append(regex_error(self.msg, self.fmt, *self.examples))
        return errs

    def error(self, value: str) -> str | None:
        n = _length(value)
        if n > self.max_len:
            return f"{_max_len(self.max_len)} (it has {n})"
        if not self.pattern.fullmatch(value):
            return f"{self.msg} (e.g. '{self.examples[0]}')"
        return None


_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL = NameRule("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                         "and must start and end with an alphanumeric character", _DNS1123_LABEL_FMT, 63,
                         "my-name", "123-abc")
DNS1123_SUBDOMAIN = NameRule("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                             "'-' or '.', and must start and end with an alphanumeric character",
                             _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*", 253, "example.com")
DNS1035_LABEL = NameRule("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
                         "an alphabetic character, and end with an alphanumeric character",
                         "[a-z]([-a-z0-9]*[a-z0-9])?", 63, "my-name", "abc-123")


def dns1123_subdomain_errors(value: str) -> list[str]:
    return DNS1123_SUBDOMAIN.errors(value)


def qualified_name_errors(value: str) -> list[str]:
    """apimachinery ``IsQualifiedName``: an optional DNS subdomain prefix and '/', then a name."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return [f"a qualified name {regex_error(_QNAME_MSG, _QNAME_FMT, 'MyName', 'my.name', '123-abc')} "
                "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(parts[0]))
    if not name:
        errs.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errs.append("name part " + _max_len(63))
    if not re.fullmatch(_QNAME_FMT, name):
        errs.append("name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    errs = []
    if len(value.encode()) > 63:
        errs.append(_max_len(63))
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def label_name_errors(value: str, path: str) -> list[ConfigError]:
    """metav1 ``ValidateLabelName``: one Invalid error per problem."""
    return [invalid(path, value, msg) for msg in qualified_name_errors(value)]
