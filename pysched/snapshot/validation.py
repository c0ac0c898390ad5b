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
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pysched.apimachinery import DNS1035_LABEL, DNS1123_LABEL, DNS1123_SUBDOMAIN
from pysched.snapshot.kinds import CLUSTER_SCOPED
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


_STR, _INT, _NUM, _BOOL, _QTY = frozenset({str}), frozenset({int}), frozenset({int, float}), frozenset({bool}), \
    frozenset({str, int, float})
_ALLOWED = {"s": _STR, "t": _STR, "i": _INT, "f": _NUM, "b": _BOOL, "q": _QTY}


# "[s", "{q", "[o", ...: a list or map whose items are scalars (or anything): (container type, the Python
# types its items may have; everything for "o")
_ANY = frozenset({str, int, float, bool, dict, list, type(None)})
_FLAT = {f"{open_}{code}": (container, allowed)
         for open_, container in (("[", list), ("{", dict))
         for code, allowed in (*_ALLOWED.items(), ("o", _ANY))}


class _Type:
    """One type of the table, compiled: the known field names, and per field either the set of Python
    types a scalar may have or the code of what to walk into (None: anything goes)."""

    __slots__ = ("checks", "known", "name", "names", "scalars")

    def __init__(self, name: str, fields: dict[str, str]) -> None:
        self.name = name
        self.known = frozenset(fields)
        self.names = sorted(fields)
        self.scalars = {k: _ALLOWED[c] for k, c in fields.items() if c in _ALLOWED}
        # field -> allowed Python types (a scalar) or the code to walk into; "o" fields are not listed
        self.checks: dict[str, frozenset | str] = {k: _ALLOWED.get(c, c) for k, c in fields.items() if c != "o"}


_OBJECTS: dict[str, str] = {}  # "[V1Container" -> "V1Container": lists of a type of the table


@cache
def _schema() -> tuple[dict[str, _Type], dict[str, str]]:
    raw = json.loads(SCHEMA_FILE.read_text())
    types = {name: _Type(name, fields) for name, fields in raw["types"].items()}
    _OBJECTS.update((f"[{name}", name) for name in types)
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
    _walk(obj, model, types, issues)
    issues.extend(_name_issues(obj, kind))
    return issues


# A path is built only for an issue: the walk carries (parent, key) links, ``None`` at the root.
_Link = tuple[object, object] | None


def _path(link: _Link) -> tuple[str, str]:
    """(path, pattern) of a link chain: ``spec.containers[0].image``, ``spec.containers[].image``."""
    parts: list[object] = []
    while link is not None:
        link, key = link  # type: ignore[assignment]
        parts.append(key)
    path, pattern = "", ""
    for key in reversed(parts):
        if isinstance(key, int):
            path += f"[{key}]"
            pattern += "[]"
        elif isinstance(key, tuple):  # a key of a map: its own name in the path, '*' in the pattern
            path = _join(path, str(key[0]))
            pattern = _join(pattern, "*")
        else:
            path = _join(path, str(key))
            pattern = _join(pattern, str(key))
    return path, pattern


def _issue(issues: list[Issue], link: _Link, message: str, unknown: bool = False) -> None:
    path, pattern = _path(link)
    issues.append(Issue(path, pattern, message, unknown))


def _walk(obj: dict, code: str, types: dict[str, _Type], issues: list[Issue]) -> None:
    # iterative over (value, type code, link): objects nest deep in templates. When all is well a
    # mapping costs one set test and one lookup per field; lists and maps of scalars are tested where
    # they are found, lists of objects have their items walked at once (``_FLAT``, ``_OBJECTS``).
    stack: list[tuple[Any, str, _Link]] = [(obj, code, None)]
    pop, push = stack.pop, stack.append
    flats, objects = _FLAT, _OBJECTS
    while stack:
        value, code, link = pop()
        tt = types.get(code)
        if tt is not None:  # a type of the table
            if type(value) is not dict:
                _issue(issues, link, f"expected a mapping ({_go_type(code)}), got {_got(value)}")
                continue
            if not tt.known.issuperset(value):
                for key in sorted(map(str, value.keys() - tt.known)):
                    near = difflib.get_close_matches(key, tt.names, n=1, cutoff=0.75)
                    hint = f" (did you mean {near[0]!r}?)" if near else ""
                    _issue(issues, (link, key), f"unknown field {echo(key)}{hint}", True)
            checks = tt.checks
            for key, item in value.items():
                check = checks.get(key)
                if check is None or item is None:
                    continue
                if check.__class__ is str:
                    flat = flats.get(check)
                    if flat is not None:
                        if type(item) is not flat[0] or not flat[1].issuperset(
                                map(type, item.values() if type(item) is dict else item)):
                            push((item, check, (link, key)))  # the branches below name the culprit
                        continue
                    sub = objects.get(check)
                    if sub is not None and type(item) is list:
                        here = (link, key)
                        for i, x in enumerate(item):
                            if x is not None:
                                push((x, sub, (here, i)))
                        continue
                    push((item, check, (link, key)))
                elif type(item) not in check:
                    _issue(issues, (link, key), f"expected {_TYPE_NAMES[tt_code(tt, key)]}, got {_got(item)}")
            if len(issues) > MAX_ISSUES_PER_OBJECT:
                return
            continue
        head = code[0]
        if head == "[":
            if type(value) is not list:
                _issue(issues, link, f"expected a list, got {_got(value)}")
                continue
            sub = code[1:]
            allowed = _ALLOWED.get(sub)
            if allowed is not None:
                if not allowed.issuperset(map(type, value)):
                    for i, item in enumerate(value):
                        if item is not None and type(item) not in allowed:
                            _issue(issues, (link, i), f"expected {_TYPE_NAMES[sub]}, got {_got(item)}")
                continue
            if sub != "o":
                for i, item in enumerate(value):
                    if item is not None:
                        push((item, sub, (link, i)))
            continue
        if head == "{":
            if type(value) is not dict:
                _issue(issues, link, f"expected a mapping, got {_got(value)}")
                continue
            sub = code[1:]
            allowed = _ALLOWED.get(sub)
            if allowed is not None:
                if not allowed.issuperset(map(type, value.values())):
                    for k, item in value.items():
                        if item is not None and type(item) not in allowed:
                            _issue(issues, (link, (k,)), f"expected {_TYPE_NAMES[sub]}, got {_got(item)}")
                continue
            if sub != "o":
                for k, item in value.items():
                    if item is not None:
                        push((item, sub, (link, (k,))))
            continue


def tt_code(t: _Type, key: str) -> str:
    allowed = t.scalars[key]
    return next(c for c, a in _ALLOWED.items() if a is allowed)


def _go_type(code: str) -> str:
    for prefix in ("V1beta2", "V1beta1", "V1alpha1", "V1", "CoreV1", "ResourceV1"):
        if code.startswith(prefix):
            return code[len(prefix):]
    return code


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# ------------------------------------------------------------------------------------------ names

#: kinds whose names are DNS-1123 labels / DNS-1035 labels; all others are DNS-1123 subdomains
LABEL_NAMED = {"Namespace"}
DNS1035_NAMED = {"Service"}


def name_error(kind: str, name: str) -> str | None:
    """What the API server says of ``name`` for an object of ``kind`` (None: valid)."""
    if name in (".", "..") or "/" in name or "%" in name:
        return "may not be '.' or '..' and may not contain '/' or '%'"
    if kind in LABEL_NAMED:
        return DNS1123_LABEL.error(name)
    if kind in DNS1035_NAMED:
        return DNS1035_LABEL.error(name)
    return DNS1123_SUBDOMAIN.error(name)


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
        err = DNS1123_LABEL.error(ns)
        if err:
            yield Issue("metadata.namespace", "metadata.namespace", f"invalid namespace {echo(ns)}: {err}", False)
