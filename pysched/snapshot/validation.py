"""Field validation of Kubernetes objects against the v1.34 schema, at any depth, as the API server's
field validation does (``kubectl --validate=strict|warn|ignore``).

The schema is the compact table ``data/k8s-schema.json``, generated from the ``kubernetes`` client's
models by ``tools/gen_k8s_schema.py`` (the client is not needed at run time, and its model objects are
never built). Each type is compiled once into a dict ``field -> check``; an object is walked once, and a
mapping whose keys are all known costs one set difference plus one type test per field.

A load does not walk every object: ``Validator`` first asks of a window of objects whether the walk
would find anything at all, with passes over all their mappings of one type at a time that run in C
(``_batch_clean``; names likewise, ``_names_clean``), and walks only the objects of a window (or part
of one) that holds a culprit. What is reported always comes from the walk.

Names follow the API server too: object names are DNS-1123 subdomains (Namespaces: DNS-1123 labels;
Services: DNS-1035 labels), namespaces DNS-1123 labels.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from itertools import chain, repeat
from pathlib import Path
from typing import Any

from pysched.apimachinery import DNS1035_LABEL, DNS1123_LABEL, DNS1123_SUBDOMAIN
from pysched.model.labels import remember_valid_values
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

    __slots__ = ("checks", "known", "name", "names", "plan", "scalars")

    def __init__(self, name: str, fields: dict[str, str]) -> None:
        self.name = name
        self.known = frozenset(fields)
        self.names = sorted(fields)
        self.scalars = {k: _ALLOWED[c] for k, c in fields.items() if c in _ALLOWED}
        # field -> allowed Python types (a scalar) or the code to walk into; "o" fields are not listed
        self.checks: dict[str, frozenset | str] = {k: _ALLOWED.get(c, c) for k, c in fields.items() if c != "o"}
        self.plan: dict[str, tuple[int, Any]] = {}  # the batch check's steps (``_plan``), once every type is known


_OBJECTS: dict[str, str] = {}  # "[V1Container" -> "V1Container": lists of a type of the table


@cache
def _schema() -> tuple[dict[str, _Type], dict[str, str]]:
    raw = json.loads(SCHEMA_FILE.read_text())
    types = {name: _Type(name, fields) for name, fields in raw["types"].items()}
    _OBJECTS.update((f"[{name}", name) for name in types)
    for tt in types.values():
        tt.plan = {k: _plan(c, types) for k, c in raw["types"][tt.name].items() if c != "o"}
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


# ------------------------------------------------------------------------------------------ batches

# The walk above costs about a microsecond per mapping in Python; a 5,000-node snapshot has some 200,000
# of them. Nearly all are clean, and most share a handful of shapes, so a load first asks a cheaper
# question of many objects at once: "would the walk find anything at all?" The batch check goes down the
# schema one type at a time with every mapping of that type from every object of the batch, testing keys
# and value types with C-level passes (set unions, ``map(type, ...)``): the Python work is per type and
# field, not per mapping. It is a sound filter only: "clean" means the walk finds no field issue (the
# differential tests hold it to that), anything else sends the objects to the walk, which alone writes
# issues. Names are always checked per object.

_NONE = type(None)
_DICT_OR_NONE, _LIST_OR_NONE = frozenset({dict, _NONE}), frozenset({list, _NONE})
# steps of a field: its value is a scalar / an object of the table / a list or map of them / a list or
# map of scalars (``None`` as allowed types: anything) / a code the batch check does not know (the walk
# decides)
_SCALAR, _OBJ, _OBJ_LIST, _OBJ_MAP, _LIST, _MAP, _OTHER = range(7)
WINDOW = 128  # objects checked together; a window with a culprit is checked again in parts of PART
PART = 16


def _plan(code: str, types: dict[str, _Type]) -> tuple[int, Any]:
    allowed = _ALLOWED.get(code)
    if allowed is not None:
        return _SCALAR, allowed | {_NONE}
    if code in types:
        return _OBJ, code
    head, sub = code[:1], code[1:]
    if head in ("[", "{"):
        if sub in types:
            return (_OBJ_LIST if head == "[" else _OBJ_MAP), sub
        if sub == "o":
            return (_LIST if head == "[" else _MAP), None
        if sub in _ALLOWED:
            return (_LIST if head == "[" else _MAP), _ALLOWED[sub] | {_NONE}
    return _OTHER, None


def _batch_clean(groups: dict[str, list[dict]]) -> bool:
    """True when ``_walk`` would find nothing in any of the mappings of ``groups`` (type code -> mappings
    of that type, each a dict); False says nothing."""
    types = _schema()[0]
    get, values = dict.get, dict.values
    pending = {code: list(ds) for code, ds in groups.items()}
    while pending:
        code, ds = pending.popitem()
        tt = types[code]
        keys = set(chain.from_iterable(ds))
        if not tt.known.issuperset(keys):
            return False
        plan = tt.plan
        for key in keys:
            step = plan.get(key)
            if step is None:  # anything goes
                continue
            kind, arg = step
            if kind == _SCALAR:
                if not arg.issuperset(map(type, map(get, ds, repeat(key)))):
                    return False
                continue
            vals = list(map(get, ds, repeat(key)))
            if kind == _OTHER or not (_LIST_OR_NONE if kind == _OBJ_LIST or kind == _LIST
                                      else _DICT_OR_NONE).issuperset(map(type, vals)):
                return False
            present = list(filter(None, vals))  # None and empty containers hold nothing to check
            if not present:
                continue
            if kind == _OBJ:
                pending.setdefault(arg, []).extend(present)
            elif kind == _OBJ_LIST or kind == _OBJ_MAP:
                items = list(chain.from_iterable(present) if kind == _OBJ_LIST
                             else chain.from_iterable(map(values, present)))
                if not _DICT_OR_NONE.issuperset(map(type, items)):
                    return False
                pending.setdefault(arg, []).extend(filter(None, items))
            elif arg is not None:
                inner = chain.from_iterable(present) if kind == _LIST else chain.from_iterable(map(values, present))
                if not arg.issuperset(map(type, inner)):
                    return False
    return True


def model_of(api_version: object, kind: object) -> str | None:
    """The schema's type code for objects of ``apiVersion``/``kind`` (None: not a kind it knows)."""
    return _schema()[1].get(f"{api_version}/{kind}")


class Validator:
    """``validate_object`` for the objects of one load, asked for in their order: each window of
    ``WINDOW`` objects is batch-checked when its first object is asked for, and an object found clean,
    fields and names, is not walked. The objects must not change in between (loaded objects never do)."""

    __slots__ = ("_clean", "_done", "_objects")

    def __init__(self, objects: Iterable[object]) -> None:
        self._objects = list(objects)  # kept alive: their ids stay theirs
        self._clean: set[int] = set()  # ids of the objects found clean
        self._done = 0  # the objects before this position have been batch-checked

    def issues(self, obj: dict, at: int) -> list[Issue]:
        """Exactly what ``validate_object`` returns for ``obj``, the object at position ``at`` of the
        objects given, against its own ``apiVersion`` and ``kind``."""
        if at >= self._done:
            self._check(at)
        if id(obj) in self._clean and self._objects[at] is obj:
            return []
        return validate_object(obj, obj["apiVersion"], obj["kind"])

    def _check(self, start: int) -> None:
        self._done = end = start + WINDOW
        roots: list[tuple[dict, str]] = []
        models = _models()
        for obj in self._objects[start:end]:
            if type(obj) is dict:
                code = models.get((obj.get("apiVersion"), obj.get("kind")))
                if code is not None:
                    roots.append((obj, code))
        if self._clean_batch(roots):
            return
        for part in range(0, len(roots), PART):  # a culprit: the parts without one are still spared the walk
            self._clean_batch(roots[part:part + PART])

    def _clean_batch(self, roots: list[tuple[dict, str]]) -> bool:
        groups: dict[str, list[dict]] = {}
        for obj, code in roots:
            groups.setdefault(code, []).append(obj)
        if not _batch_clean(groups) or not _names_clean(groups):
            return False
        self._clean.update(map(id, chain.from_iterable(groups.values())))
        return True


@cache
def _models() -> dict[tuple[object, object], str]:
    return {tuple(key.rsplit("/", 1)): code for key, code in _schema()[1].items()}  # type: ignore[misc]


def _names_clean(groups: dict[str, list[dict]]) -> bool:
    """True when ``_name_issues`` finds nothing for any object of ``groups`` (type code -> objects of
    that type whose fields ``_batch_clean`` found clean: metadata, name and namespace hold a mapping, a
    string or None)."""
    get, values = dict.get, dict.values
    kinds = _kind_of_code()
    for code, objs in groups.items():
        kind = kinds[code]
        metas = list(filter(None, map(get, objs, repeat("metadata"))))
        # the loader checks label values one object at a time, quickly once they are known valid
        remember_valid_values(set(chain.from_iterable(map(values, filter(None, map(get, metas, repeat("labels")))))))
        rule = _RULES.get(kind, DNS1123_SUBDOMAIN)
        names = list(filter(None, map(get, metas, repeat("name"))))
        if names and (max(map(len, names)) > rule.max_len or not all(map(rule.pattern.fullmatch, names))):
            return False
        if kind not in CLUSTER_SCOPED:
            spaces = set(filter(None, map(get, metas, repeat("namespace"))))  # a few, each checked once
            if spaces and (max(map(len, spaces)) > DNS1123_LABEL.max_len
                           or not all(map(DNS1123_LABEL.pattern.fullmatch, spaces))):
                return False
    return True


@cache
def _kind_of_code() -> dict[str, str]:
    return {code: key.rsplit("/", 1)[1] for key, code in _schema()[1].items()}


# ------------------------------------------------------------------------------------------ names

#: kinds whose names are DNS-1123 labels / DNS-1035 labels; all others are DNS-1123 subdomains
LABEL_NAMED = {"Namespace"}
DNS1035_NAMED = {"Service"}
_RULES = {**{k: DNS1123_LABEL for k in LABEL_NAMED}, **{k: DNS1035_LABEL for k in DNS1035_NAMED}}


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
