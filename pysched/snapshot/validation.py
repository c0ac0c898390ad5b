"""Field validation of Kubernetes objects against the v1.34 schema, at any depth, as the API server's
field validation does (``kubectl --validate=strict|warn|ignore``).

The schema is the compact table ``data/k8s-schema.json``, generated from the ``kubernetes`` client's
models by ``tools/gen_k8s_schema.py`` (the client is not needed at run time, and its model objects are
never built). Each type is compiled once into a dict ``field -> check``; an object is walked once, and a
mapping whose keys are all known costs one set difference plus one type test per field.

Names follow the API server too: object names are DNS-1123 subdomains (Namespaces: DNS-1123 labels;
Services: DNS-1035 labels), namespaces DNS-1123 labels.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pysched.snapshot.reader import echo

SCHEMA_FILE = Path(__file__).resolve().parent / "data" / "k8s-schema.json"
MODES = ("strict", "warn", "ignore")
MAX_ISSUES_PER_OBJECT = 50


@dataclass(frozen=True, slots=True)
class Issue:
    path: str  # spec.containers[0].resources.request
    pattern: str  # spec.containers[].resources.request (for aggregated warnings)
    message: str
    unknown: bool  # an unknown field (else a mistyped value or a bad name)


_TYPE_NAMES = {"s": "a string", "i": "an integer", "f": "a number", "b": "a boolean (true/false)",
               "t": "an RFC 3339 time string", "q": "a quantity (string or number)"}


def _got(value: object) -> str:
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"string {echo(value, 40)}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:40] + '...'}"


class _Type:
    __slots__ = ("fields", "known", "name", "names")

    def __init__(self, name: str) -> None:
        self.name = name
        self.fields: dict[str, str] = {}
        self.known: frozenset[str] = frozenset()
        self.names: list[str] = []


@cache
def _schema() -> tuple[dict[str, _Type], dict[str, str]]:
    raw = json.loads(SCHEMA_FILE.read_text())
    types: dict[str, _Type] = {}
    for name, fields in raw["types"].items():
        t = types.setdefault(name, _Type(name))
        t.fields = dict(fields)
        t.known = frozenset(fields)
        t.names = sorted(fields)
    return types, dict(raw["kinds"])


def known_kind(api_version: str, kind: str) -> bool:
    return f"{api_version}/{kind}" in _schema()[1]


def validate_object(obj: dict, api_version: str, kind: str) -> list[Issue]:
    """Unknown and mistyped fields of ``obj`` at any depth, and names the API server would refuse."""
    types, kinds = _schema()
    model = kinds.get(f"{api_version}/{kind}")
    if model is None:
        return []
    issues: list[Issue] = []
    _walk(obj, types[model], "", "", types, issues)
    issues.extend(_name_issues(obj, kind))
    return issues


def _walk(obj: dict, t: _Type, path: str, pattern: str, types: dict[str, _Type], issues: list[Issue]) -> None:
    # iterative over (value, type code, path, pattern): objects nest deep in templates
    stack: list[tuple[Any, str, str, str]] = [(obj, t.name, path, pattern)]
    while stack:
        value, code, path, pattern = stack.pop()
        if value is None:
            continue
        head = code[0]
        if head == "[":
            if type(value) is not list:
                _bad(issues, path, pattern, f"expected a list, got {_got(value)}")
                continue
            sub = code[1:]
            if sub in _SCALAR_OK:
                ok = _SCALAR_OK[sub]
                for i, item in enumerate(value):
                    if item is not None and not ok(item):
                        _bad(issues, f"{path}[{i}]", f"{pattern}[]", f"expected {_TYPE_NAMES[sub]}, got {_got(item)}")
                continue
            stack.extend((item, sub, f"{path}[{i}]", f"{pattern}[]") for i, item in enumerate(value))
            continue
        if head == "{":
            if type(value) is not dict:
                _bad(issues, path, pattern, f"expected a mapping, got {_got(value)}")
                continue
            sub = code[1:]
            if sub in _SCALAR_OK:
                ok = _SCALAR_OK[sub]
                for k, item in value.items():
                    if item is not None and not ok(item):
                        _bad(issues, _join(path, str(k)), f"{pattern}.*", f"expected {_TYPE_NAMES[sub]}, got {_got(item)}")
                continue
            stack.extend((item, sub, _join(path, str(k)), f"{pattern}.*") for k, item in value.items())
            continue
        if code in _SCALAR_OK:
            if not _SCALAR_OK[code](value):
                _bad(issues, path, pattern, f"expected {_TYPE_NAMES[code]}, got {_got(value)}")
            continue
        if code == "o":
            continue
        # a type of the table
        if type(value) is not dict:
            _bad(issues, path, pattern, f"expected a mapping ({_go_type(code)}), got {_got(value)}")
            continue
        tt = types[code]
        fields = tt.fields
        extra = value.keys() - tt.known
        if extra:
            for key in sorted(map(str, extra)):
                near = difflib.get_close_matches(key, tt.names, n=1, cutoff=0.75)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                issues.append(Issue(_join(path, key), _join(pattern, key), f"unknown field {echo(key)}{hint}", True))
        for key, item in value.items():
            if item is None:
                continue
            fcode = fields.get(key)
            if fcode is None:
                continue
            ok = _SCALAR_OK.get(fcode)
            if ok is not None:
                if not ok(item):
                    _bad(issues, _join(path, key), _join(pattern, key),
                         f"expected {_TYPE_NAMES[fcode]}, got {_got(item)}")
            elif fcode != "o":
                stack.append((item, fcode, _join(path, key), _join(pattern, key)))
        if len(issues) > MAX_ISSUES_PER_OBJECT:
            return


def _go_type(code: str) -> str:
    for prefix in ("V1beta2", "V1beta1", "V1alpha1", "V1", "CoreV1", "ResourceV1"):
        if code.startswith(prefix):
            return code[len(prefix):]
    return code


def _bad(issues: list[Issue], path: str, pattern: str, message: str) -> None:
    issues.append(Issue(path, pattern, message, False))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _is_str(v: object) -> bool:
    return type(v) is str


def _is_int(v: object) -> bool:
    return type(v) is int


def _is_num(v: object) -> bool:
    return type(v) is int or type(v) is float


def _is_bool(v: object) -> bool:
    return type(v) is bool


def _is_quantity(v: object) -> bool:
    return type(v) is str or type(v) is int or type(v) is float


_SCALAR_OK = {"s": _is_str, "t": _is_str, "i": _is_int, "f": _is_num, "b": _is_bool, "q": _is_quantity}


# ------------------------------------------------------------------------------------------ names

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")

#: kinds whose names are DNS-1123 labels / DNS-1035 labels; all others are DNS-1123 subdomains
LABEL_NAMED = {"Namespace"}
DNS1035_NAMED = {"Service"}
CLUSTER_SCOPED = {"Node", "Namespace", "PriorityClass", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver",
                  "VolumeAttachment", "ResourceSlice", "DeviceClass"}


def dns1123_label_error(value: str) -> str | None:
    if len(value) > DNS1123_LABEL_MAX:
        return f"must be no more than {DNS1123_LABEL_MAX} characters (it has {len(value)})"
    if not _DNS1123_LABEL.match(value):
        return ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                "start and end with an alphanumeric character (e.g. 'my-name')")
    return None


def dns1123_subdomain_error(value: str) -> str | None:
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        return f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters (it has {len(value)})"
    if not _DNS1123_SUBDOMAIN.match(value):
        return ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character (e.g. 'example.com')")
    return None


def dns1035_label_error(value: str) -> str | None:
    if len(value) > DNS1123_LABEL_MAX:
        return f"must be no more than {DNS1123_LABEL_MAX} characters (it has {len(value)})"
    if not _DNS1035_LABEL.match(value):
        return ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character (e.g. 'my-name')")
    return None


def name_error(kind: str, name: str) -> str | None:
    """What the API server says of ``name`` for an object of ``kind`` (None: valid)."""
    if name in (".", "..") or "/" in name or "%" in name:
        return "may not be '.' or '..' and may not contain '/' or '%'"
    if kind in LABEL_NAMED:
        return dns1123_label_error(name)
    if kind in DNS1035_NAMED:
        return dns1035_label_error(name)
    return dns1123_subdomain_error(name)


def _name_issues(obj: dict, kind: str) -> Iterator[Issue]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    name = meta.get("name")
    if isinstance(name, str) and name:
        err = name_error(kind, name)
        if err:
            yield Issue("metadata.name", "metadata.name", f"invalid name {echo(name)}: {err}", False)
    ns = meta.get("namespace")
    if kind not in CLUSTER_SCOPED and isinstance(ns, str) and ns:
        err = dns1123_label_error(ns)
        if err:
            yield Issue("metadata.namespace", "metadata.namespace", f"invalid namespace {echo(ns)}: {err}", False)
