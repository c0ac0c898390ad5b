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
import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from functools import cache
from itertools import chain, compress, repeat
from operator import eq
from pathlib import Path
from typing import Any

from pysched.apimachinery import DNS1035_LABEL, DNS1123_LABEL, DNS1123_SUBDOMAIN, NameRule
from pysched.lazyclass import dataclass
from pysched.model.labels import _VALID_KEYS as _VALID_LABEL_KEYS, label_key_error
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
        self.plan: dict[str, tuple[int, Any, bool]] = {}  # the batch check's steps (``_plan``), once every type is known

    def without(self, name: str, *keys: str) -> _Type:
        """This type under another name, whose batch check leaves ``keys`` to someone else."""
        twin = _Type.__new__(_Type)
        for slot in _Type.__slots__:
            setattr(twin, slot, getattr(self, slot))
        twin.name = name
        twin.plan = {k: step for k, step in self.plan.items() if k not in keys}
        return twin


_OBJECTS: dict[str, str] = {}  # "[V1Container" -> "V1Container": lists of a type of the table
TOP = "@top"  # "V1Pod@top": V1Pod as the top of an object read from a file (see ``_window_clean``)
TOP_META = "V1ObjectMeta" + TOP
TOP_META_STAMPED = TOP_META + "+stamped"  # the same, of objects whose creationTimestamps are known strings


class _Types(dict[str, _Type]):
    """Type code -> ``_Type``, each compiled when first asked for: a load meets a few dozen of the
    table's types."""

    def __init__(self, raw: dict[str, dict[str, str]]) -> None:
        super().__init__()
        self.raw = raw

    def __missing__(self, code: str) -> _Type:
        if code == TOP_META_STAMPED:
            tt = self[TOP_META].without(code, "creationTimestamp")
        elif code.endswith(TOP):  # the top of objects read from files (``_window_clean``): their apiVersion
            # and kind are known strings (``_codes``); their metadata, its name, namespace and labels are
            # checked there
            base = code[:-len(TOP)]
            tt = self[base].without(code, "labels", "name", "namespace") if base == "V1ObjectMeta" \
                else self[base].without(code, "metadata", "apiVersion", "kind")
        else:
            fields = self.raw[code]  # KeyError: not a type of the table
            tt = _Type(code, fields)
            tt.plan = {k: _plan(c, self) for k, c in fields.items() if c != "o"}
        self[code] = tt
        return tt

    def __contains__(self, code: object) -> bool:
        return code in self.raw

    def get(self, code: str, default: Any = None) -> Any:
        return self[code] if code in self.raw else default


@cache
def _schema() -> tuple[dict[str, _Type], dict[str, str]]:
    import orjson  # (a dependency; imported by every load already)

    # orjson reads the table to the same dicts of strings as the standard library's decoder, in 60 % of
    # its instructions (1.9 M against 3.1 M)
    raw = orjson.loads(SCHEMA_FILE.read_bytes())
    _OBJECTS.update((f"[{name}", name) for name in raw["types"])
    return _Types(raw["types"]), dict(raw["kinds"])


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
_DICT = frozenset({dict})
_STR_OR_NONE = frozenset({str, _NONE})
# steps of a field: its value is a scalar / an object of the table / a list or map of them / a list or
# map of scalars (``None`` as allowed types: anything) / a code the batch check does not know (the walk
# decides)
_SCALAR, _OBJ, _OBJ_LIST, _OBJ_MAP, _LIST, _MAP, _OTHER = range(7)
WINDOW = 512  # objects checked together; a window with a culprit is checked again in parts of PART
PART = 16


def _plan(code: str, types: dict[str, _Type]) -> tuple[int, Any, bool]:
    """(step, its argument, whether a string is one of the allowed scalars)."""
    allowed = _ALLOWED.get(code)
    if allowed is not None:
        return _SCALAR, allowed | {_NONE}, str in allowed
    if code in types:
        return _OBJ, code, False
    head, sub = code[:1], code[1:]
    if head in ("[", "{"):
        if sub in types:
            return (_OBJ_LIST if head == "[" else _OBJ_MAP), sub, False
        if sub == "o":
            return (_LIST if head == "[" else _MAP), None, False
        if sub in _ALLOWED:
            return (_LIST if head == "[" else _MAP), _ALLOWED[sub] | {_NONE}, str in _ALLOWED[sub]
    return _OTHER, None, False


def _batch_clean(groups: dict[str, list[dict]], plain: bool = False) -> bool:
    """True when ``_walk`` would find nothing in any of the mappings of ``groups`` (type code -> mappings
    of that type, each a dict); False says nothing.

    ``plain``: the values are of the types a JSON or YAML reader makes (``str`` itself, never a subclass of
    it). Strings, the most common scalars, are then tested with one ``str.join`` of a field's values (or of
    lists' items), which fails on anything but a string and costs less than a type test per value (which
    remains for what the join refuses: None, numbers, ...)."""
    types = _schema()[0]
    get, values, join, union = dict.get, dict.values, "".join, set().union
    # mappings still to check, by type: one group per field they were found in (and per kind at the top).
    # The groups of one type are not merged: the fields a type's mappings hold depend on where they stand
    # (init containers have a restartPolicy, containers not), and each field of a group is looked up in
    # every one of its mappings
    pending: list[tuple[str, list[dict]]] = list(groups.items())
    push = pending.append
    while pending:
        code, ds = pending.pop()
        tt = types[code]
        keys = union(*ds)  # dicts only (their parents were tested): set.union reads their keys directly
        if not tt.known.issuperset(keys):
            return False
        plan = tt.plan
        # a field's values: those present, read in one pass over the mappings' items where that costs less
        # (``_columns``), else looked up in every mapping (None where the field is absent)
        columns = _columns(ds, keys, plan) if len(keys) >= _SPARSE_KEYS else None
        for key in keys:
            step = plan.get(key)
            if step is None:  # anything goes
                continue
            kind, arg, strs = step
            column = None if columns is None else columns[key]
            if kind == _SCALAR:
                if strs and plain and _joins(join, map(get, ds, repeat(key), repeat("")) if column is None
                                             else column):
                    continue
                if not arg.issuperset(map(type, map(get, ds, repeat(key)) if column is None else column)):
                    return False
                continue
            if kind == _OTHER:
                return False
            vals: list[Any] = list(map(get, ds, repeat(key))) if column is None else column
            found = set(map(type, vals))  # (what the next steps need to know of the values, in one pass)
            if not (_LIST_OR_NONE if kind == _OBJ_LIST or kind == _LIST else _DICT_OR_NONE).issuperset(found):
                return False
            # None (an absent field) holds nothing to check, and the steps below cannot take it: dropped
            # when there is one. Empty containers hold nothing either, and pass the steps below as they are
            present = list(filter(None, vals)) if _NONE in found else vals
            if not present:
                continue
            if kind == _OBJ:
                push((arg, present))
            elif kind == _OBJ_LIST or kind == _OBJ_MAP:
                items = _flatten(present) if kind == _OBJ_LIST else list(chain.from_iterable(map(values, present)))
                found = set(map(type, items))
                if not _DICT_OR_NONE.issuperset(found):
                    return False
                push((arg, list(filter(None, items)) if _NONE in found else items))
            elif arg is not None:
                # lists' items and maps' values (quantities, mostly strings) as the scalars above
                inner: Iterable[Any] = _flatten(present) if kind == _LIST else chain.from_iterable(map(values, present))
                if strs and plain:
                    if _joins(join, inner):
                        continue
                    if kind == _MAP:  # (the join used the chain up)
                        inner = chain.from_iterable(map(values, present))
                if not arg.issuperset(map(type, inner)):
                    return False
    return True


# Looking a field up in every mapping of a type costs about as much where it is absent as where it is
# there: for types with many optional fields (a pod's spec: a dozen fields of which three or four are set)
# most lookups find nothing. Their values are then read in one pass over the mappings' items instead, a
# Python loop that costs more per value but nothing per absent field. Estimated costs (instructions, from
# callgrind): a lookup ~320 per mapping and field; the pass ~600 per mapping and ~500 per value. Measured on
# the mixed 5,000-node snapshot: a pod's spec (a third of its planned fields set) costs 13 M less read in a
# pass; tolerations and topology spread constraints (two thirds set) cost 2.3 M and 0.9 M less looked up
_SPARSE_KEYS = 5  # fewer planned fields than this: always looked up (without counting the mappings' fields)


def _columns(ds: list[dict], keys: set[Any], plan: dict[str, Any]) -> dict[Any, list[Any]] | None:
    """The values of each field of ``ds`` (mappings, all of whose fields are ``keys``), those present in
    the mappings' order, when that is cheaper to read than each planned field in every mapping; else None."""
    planned = len(keys & plan.keys())
    if planned < _SPARSE_KEYS:  # (the tops of objects: five fields, two of them planned)
        return None
    n = len(ds)
    if 32 * planned * n <= 60 * n + 50 * sum(map(len, ds)):
        return None
    columns: dict[Any, list[Any]] = {key: [] for key in keys}
    for key, value in chain.from_iterable(map(dict.items, ds)):
        columns[key].append(value)
    return columns


def _flatten(lists: list[list]) -> list[Any]:
    """The items of ``lists`` (lists all: their types were tested) in one list. ``list.extend`` of each
    costs some 150 instructions a list less than chaining their iterators (an iterator made per list, and
    ``str.join`` copying the chain into a list of its own)."""
    items: list[Any] = []
    any(map(items.extend, lists))  # (extend returns None: every list is taken)
    return items


def _joins(join: Any, strings: Iterable[object]) -> bool:
    """Whether ``strings`` are all strings (``join`` is ``"".join``)."""
    try:
        join(strings)
    except TypeError:
        return False
    return True


def model_of(api_version: object, kind: object) -> str | None:
    """The schema's type code for objects of ``apiVersion``/``kind`` (None: not a kind it knows)."""
    return _schema()[1].get(f"{api_version}/{kind}")


class Validator:
    """``validate_object`` for the objects of one load, asked for in their order: each window of
    ``WINDOW`` objects is batch-checked when its first object is asked for, and an object found clean
    (fields, names, and the values of its labels) is not walked. The objects must not change in between
    (loaded objects never do). ``plain``: the objects are as a JSON or YAML reader makes them (see
    ``_batch_clean``). ``fields``: the objects' ``kind``, ``apiVersion`` and ``metadata`` as ``dict.get``
    reads them, and the metadata's ``name`` (None: not read, a metadata is no dict), lists in the objects'
    order, when the caller has read them already (the loader does, for its own checks): they are then not
    read again. ``stamps``: likewise the metadata's ``creationTimestamp`` (given with ``fields``)."""

    __slots__ = ("_clean", "_done", "_fields", "_objects", "_plain", "_repeated", "_same", "_stamps")

    def __init__(self, objects: Iterable[object], *, plain: bool = False,
                 fields: tuple[list[Any], list[Any], list[Any], list[Any] | None] | None = None,
                 same_spec: dict[int, int] | None = None, stamps: list[Any] | None = None) -> None:
        self._objects = list(objects)
        self._clean = bytearray(len(self._objects))  # 1 at the positions of the objects found clean
        self._done = 0  # the objects before this position have been batch-checked
        self._plain = plain
        self._fields = fields
        self._stamps = stamps if fields is not None else None
        # position of a pod -> position of an earlier pod whose spec equals its own, but for nodeName (plain
        # objects only: equal values of the same types); positions in order
        self._same = same_spec if plain and same_spec else None
        self._repeated = sorted(same_spec) if self._same is not None else []  # type: ignore[arg-type]

    def clean(self, obj: dict, at: int) -> bool:
        """True when ``obj``, the object at position ``at``, has no issue and every key and value of its
        ``metadata.labels`` is a valid label key and value; False says nothing."""
        if at >= self._done:
            self._check(at)
        return at < len(self._clean) and self._clean[at] == 1 and self._objects[at] is obj

    def flags(self) -> bytearray:
        """Every window batch-checked at once: 1 at the position of each object ``clean`` would call clean
        (the loader reads this instead of calling ``clean`` per object)."""
        while self._done < len(self._objects):
            self._check(self._done)
        return self._clean

    def issues(self, obj: dict, at: int) -> list[Issue]:
        """Exactly what ``validate_object`` returns for ``obj``, the object at position ``at`` of the
        objects given, against its own ``apiVersion`` and ``kind``."""
        if self.clean(obj, at):
            return []
        return validate_object(obj, obj["apiVersion"], obj["kind"])

    def _check(self, start: int) -> None:
        self._done = end = start + WINDOW
        objs = self._objects[start:end]
        metas: list[Any] | None = None
        names: list[Any] | None = None
        stamps = None if self._stamps is None else self._stamps[start:end]
        if self._fields is None:
            codes = _codes(objs)
        else:
            kinds, apis, metas, names = (None if column is None else column[start:end] for column in self._fields)
            codes = _codes(objs, kinds, apis)
        if self._clean_batch(start, objs, codes, metas, names, stamps):
            return
        for part in range(0, len(objs), PART):  # a culprit: the parts without one are still spared the walk
            self._clean_batch(start + part, objs[part:part + PART], codes[part:part + PART],
                              None if metas is None else metas[part:part + PART],
                              None if names is None else names[part:part + PART],
                              None if stamps is None else stamps[part:part + PART])

    def _clean_batch(self, start: int, objs: list[object], codes: list[str | None],
                     metas: list[Any] | None = None, names: list[Any] | None = None,
                     stamps: list[Any] | None = None) -> bool:
        if self._same is not None:
            objs, specs = self._known_specs(start, objs, codes)
            if specs and not _STR_OR_NONE.issuperset(map(type, map(dict.get, specs, repeat("nodeName")))):
                return False  # (their nodeName, the one field a repeated spec may hold of its own)
        known = set(codes)
        known.discard(None)
        tops: dict[Any, list[Any]] | None = None
        named: dict[Any, list[Any]] | None = None
        stamped = False  # every object's creationTimestamp a string (then not read again)
        if len(known) == 1 and None not in codes:  # the common case: one kind
            stamped = metas is not None and stamps is not None and _joins("".join, stamps)
            code = known.pop()
            groups = {code: objs}
            if metas is not None:
                tops = {code: metas}
                if names is not None:
                    named = {code: names}
        else:  # one C-level pass over the window per kind
            groups = {code: list(compress(objs, map(eq, codes, repeat(code)))) for code in known}
            if metas is not None:
                tops = {code: list(compress(metas, map(eq, codes, repeat(code)))) for code in known}
                if names is not None:
                    named = {code: list(compress(names, map(eq, codes, repeat(code)))) for code in known}
        if not _window_clean(groups, self._plain, tops, named, stamped):  # type: ignore[arg-type]
            return False
        if None in codes:
            for at, code in enumerate(codes, start):
                if code is not None:
                    self._clean[at] = 1
        else:
            self._clean[start:start + len(objs)] = b"\x01" * len(objs)
        return True


    def _known_specs(self, start: int, objs: list[object], codes: list[str | None]
                     ) -> tuple[list[object], list[dict]]:
        """``objs`` (the objects from position ``start`` on, of type codes ``codes``) without the specs that
        need no check of their own: a pod's whose spec (but for nodeName) is that of an earlier pod of the
        same type in ``objs`` (checked with them) or found clean before; and those specs, whose nodeName
        the caller checks. (Such a pod is given as a copy without its spec; ``objs`` is not changed.)"""
        repeated = self._repeated
        at, stop = bisect_left(repeated, start), bisect_left(repeated, start + len(objs))
        specs: list[dict] = []
        if at == stop:
            return objs, specs
        objs = list(objs)
        same, flags = self._same, self._clean
        for pos in repeated[at:stop]:
            first = same[pos]  # type: ignore[index]
            code = codes[pos - start]
            if code is not None and (flags[first] or (first >= start and codes[first - start] == code)):
                pod = objs[pos - start].copy()  # type: ignore[attr-defined]
                specs.append(pod.pop("spec"))
                objs[pos - start] = pod
        return objs, specs


def _codes(objs: list[object], kinds: list[Any] | None = None, apis: list[Any] | None = None
           ) -> list[str | None]:
    """The schema's type code of each of ``objs`` (None: not a dict, or of a kind the schema does not know).
    ``kinds`` and ``apis``: the objects' ``kind`` and ``apiVersion`` (dicts all), when the caller has them."""
    models = _models()
    get: Any = dict.get
    if kinds is not None or _DICT.issuperset(map(type, objs)):
        if kinds is None or apis is None:
            kinds, apis = list(map(get, objs, repeat("kind"))), list(map(get, objs, repeat("apiVersion")))
        # the common case, objects of one kind: apiVersions compared without hashing each; the kinds hashed
        # into a set (the loader hashes each kind all the same, to look it up, and then finds its hash)
        if kinds and apis.count(apis[0]) == len(apis) and type(kinds[0]) is str and type(apis[0]) is str \
                and _one(kinds):
            return [models.get((apis[0], kinds[0]))] * len(objs)
        try:
            pairs = zip(apis, kinds, strict=True)
            return list(map(models.get, pairs))
        except TypeError:  # an unhashable apiVersion or kind (a list): found below
            pass
    out: list[str | None] = []
    for obj in objs:
        code = None
        if type(obj) is dict:
            api, kind = obj.get("apiVersion"), obj.get("kind")
            if type(api) is str and type(kind) is str:
                code = models.get((api, kind))
        out.append(code)
    return out


def _one(values: list[Any]) -> bool:
    """Whether ``values`` (not empty) are all equal to the first, hashable all."""
    try:
        return len(set(values)) == 1
    except TypeError:
        return False


@cache
def _models() -> dict[tuple[object, object], str]:
    return {tuple(key.rsplit("/", 1)): code for key, code in _schema()[1].items()}  # type: ignore[misc]


@cache
def _joined(fmt: str) -> re.Pattern[str]:
    """A pattern that matches texts of one or more lines, each matching ``fmt`` (whose groups must be
    plain ones): a window's names are checked with one match of the names joined by newlines. Compiled
    when first needed (about 1.7 M instructions each): only DNS-1035 labels take it, the others are
    checked without the engine."""
    assert "(?" not in fmt
    one = fmt.replace("(", "(?:")
    return re.compile(f"(?>{one})(?>\n(?>{one}))*+")  # atomic: no backtracking state kept per line


def _all_match(pattern: re.Pattern[str], texts: list[str]) -> bool:
    """Whether every one of ``texts`` (strings, none of them empty) matches the joined ``pattern``."""
    joined = "\n".join(texts)
    return joined.count("\n") == len(texts) - 1 and pattern.fullmatch(joined) is not None


# DNS-1123 labels and subdomains without the regular expression engine (which costs some 80 instructions
# a character): the characters allowed, then where '-' and '.' may not stand, found with substring searches
# (``_names_valid``)
_LOWER_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"
# label values (apimachinery's IsValidLabelValue): at most 63 characters, empty or alphanumeric at both
# ends, '-', '_', '.' inside
_LABEL_VALUE_MAX = 63
_DROP_LABEL_VALUE = str.maketrans("", "", _LOWER_ALNUM + "ABCDEFGHIJKLMNOPQRSTUVWXYZ-_.\n")
_LABEL_VALUE_ENDS = ("-", "_", ".")
_BAD_LABEL_VALUE = ("\n-", "\n_", "\n.", "-\n", "_\n", ".\n")


def _label_values_match(values: set[str] | list[str]) -> bool:
    """Whether every one of ``values`` (strings; anything else raises TypeError) is a valid label value:
    the rule's pattern without the regular expression engine, as for names."""
    joined = "\n".join(values)
    if joined.count("\n") != len(values) - 1 or joined.translate(_DROP_LABEL_VALUE):
        return False
    if joined[:1] in _LABEL_VALUE_ENDS or joined[-1:] in _LABEL_VALUE_ENDS:
        return False
    if any(bad in joined for bad in _BAD_LABEL_VALUE):
        return False
    return len(joined) <= _LABEL_VALUE_MAX or max(map(len, values)) <= _LABEL_VALUE_MAX


# the same for a window's names, as ASCII bytes, whose translate and searches cost a few instructions a
# character (str.translate deleting characters looks each one up in a dict): the allowed characters, then
# every dot made a line break (a subdomain's labels each on a line of their own, as the names are) so that
# three searches find what seven did, and the length by the longest run of a line's characters
_LABEL_BYTES = (_LOWER_ALNUM + "-\n").encode()
_SUBDOMAIN_BYTES = (_LOWER_ALNUM + "-.\n").encode()
_DOT_TO_BREAK = bytes.maketrans(b".", b"\n")
_LINE_TO_X = bytes.maketrans(bytes(range(256)), b"x" * 10 + b"\n" + b"x" * 245)  # all but '\n' to 'x'
_BAD_LABELS = (b"\n-", b"-\n", b"\n\n")  # a label starts and ends with an alphanumeric character, is not empty


def _names_valid(rule: NameRule, names: list[str]) -> bool:
    """Whether every one of ``names`` (non-empty strings) matches ``rule``'s pattern and is at most
    ``rule.max_len`` characters long."""
    if rule is DNS1035_LABEL:
        return max(map(len, names)) <= rule.max_len and _all_match(_joined(rule.fmt), names)
    joined = "\n".join(names)
    try:
        data = joined.encode("ascii")
    except UnicodeEncodeError:  # a character no name may hold
        return False
    if not data or data.count(b"\n") != len(names) - 1:  # an empty name alone; a name holding a line break
        return False
    subdomain = rule is DNS1123_SUBDOMAIN
    if data.translate(None, _SUBDOMAIN_BYTES if subdomain else _LABEL_BYTES):
        return False
    longest = rule.max_len
    if len(data) > longest and b"x" * (longest + 1) in data.translate(_LINE_TO_X):
        return False
    if subdomain:
        data = data.translate(_DOT_TO_BREAK)
    if data[0] in b"-\n" or data[-1] in b"-\n":
        return False
    return not (_BAD_LABELS[0] in data or _BAD_LABELS[1] in data or _BAD_LABELS[2] in data)


# label values found valid: a snapshot repeats a few thousand of them (zones, pools, template hashes)
# on every object, so each is matched once; bounded as the model's own memory of valid values
_VALID_LABEL_VALUES: set[str] = set()
_MAX_VALID_LABEL_VALUES = 200_000


def _labels_valid(maps: list[dict]) -> bool:
    """Whether every key of the label maps ``maps`` is a valid label key, and every value a valid label
    value (a string): checked here once per distinct key and value of a window, the loader's own check of
    each object's labels is skipped for a clean object."""
    new_keys = set().union(*maps) - _VALID_LABEL_KEYS  # the model's memory of valid keys
    if new_keys and any(map(label_key_error, new_keys)):  # each valid one remembered there
        return False
    try:
        new = set().union(*map(dict.values, maps)) - _VALID_LABEL_VALUES  # unhashable values: TypeError
        if not new:
            return True
        if not _label_values_match(new):  # values that are no strings: TypeError
            return False
    except TypeError:
        return False
    if len(_VALID_LABEL_VALUES) + len(new) > _MAX_VALID_LABEL_VALUES:
        _VALID_LABEL_VALUES.clear()
    _VALID_LABEL_VALUES.update(new)
    return True


def _plain_labels_valid(maps: list[Any]) -> bool:
    """``_labels_valid`` of the label maps of a reader's objects taken as they are, none absent (the usual
    case), without a pass over their types: set.union refuses None and numbers, dict.values anything but
    a dict (a reader's dicts are dicts themselves). False says nothing: the caller judges them as before."""
    try:
        return _labels_valid(maps)
    except TypeError:  # an absent map (None), or something that is no mapping
        return False


def _window_clean(groups: dict[str, list[dict]], plain: bool = False,
                  given: dict[str, list[Any]] | None = None, names: dict[str, list[Any]] | None = None,
                  stamped: bool = False) -> bool:
    """``_batch_clean`` and ``_names_clean`` of ``groups`` (type code -> objects of that kind, each a
    dict), their metadata read once. ``plain`` (see ``_batch_clean``): the batch check leaves the objects'
    own ``apiVersion`` and ``kind`` (strings: ``_codes`` found their code) and ``metadata.name``,
    ``namespace`` and ``labels`` to ``_metas_clean``, which checks their types too (label values as
    distinct ones, all strings). ``given``: the objects' ``metadata`` (by type code, in the objects' order),
    when the caller has read them; ``names``: likewise their ``metadata.name``. ``stamped``: the caller
    found every ``metadata.creationTimestamp`` a string (with ``plain``)."""
    meta_code = TOP_META_STAMPED if stamped and plain else TOP_META
    get: Any = dict.get
    tops: dict[str, list[dict]] = {}
    batch: dict[str, list[dict]] = {}
    for code, objs in groups.items():
        metas: list[Any] = list(map(get, objs, repeat("metadata"))) if given is None else given[code]
        # given names were read from every metadata with dict.get, which takes nothing but a dict (and
        # a reader's dicts are dicts themselves): their types are known then
        found = _DICT if names is not None and plain else set(map(type, metas))
        if not _DICT_OR_NONE.issuperset(found):
            return False
        if _NONE in found:  # (an empty mapping, like an absent one, holds nothing to check)
            metas = list(filter(None, metas))
            names = None  # (theirs no longer stand by them)
        tops[code] = metas
        if plain:
            batch[code + TOP] = objs
            batch.setdefault(meta_code, []).extend(metas)
        else:
            batch[code] = objs
    return _batch_clean(batch, plain) and _metas_clean(tops, names, plain)


def _names_clean(groups: dict[str, list[dict]]) -> bool:
    """True when ``_name_issues`` finds nothing for any object of ``groups`` (type code -> objects of
    that type whose fields ``_batch_clean`` found clean: metadata, name and namespace hold a mapping, a
    string or None), and every key and value of their labels is a valid label key and value (the
    loader's own check of labels is then skipped: ``Validator.clean``)."""
    get: Any = dict.get
    return _metas_clean({code: list(filter(None, map(get, objs, repeat("metadata")))) for code, objs in groups.items()})


def _metas_clean(tops: dict[str, list[dict]], given: dict[str, list[Any]] | None = None,
                 plain: bool = False) -> bool:
    """``_names_clean`` of the metadata (mappings) of objects, by type code; their labels are mappings or
    None, all their keys and values valid label keys and values. ``given``: their names (by type code, in
    their order), when the caller has read them. ``plain``: the objects are a reader's (``_batch_clean``)."""
    get: Any = dict.get
    kinds = _kind_of_code()
    for code, metas in tops.items():
        kind = kinds[code]
        maps = list(map(get, metas, repeat("labels")))
        if not (plain and _plain_labels_valid(maps)):
            found = set(map(type, maps))
            if not _DICT_OR_NONE.issuperset(found):
                return False
            if _NONE in found:  # (an empty map, like an absent one, holds no label)
                maps = list(filter(None, maps))
            if maps and not _labels_valid(maps):
                return False
        rule = _RULES.get(kind, DNS1123_SUBDOMAIN)
        if given is None:
            if not _some_names_valid(rule, list(map(get, metas, repeat("name")))):
                return False
        elif not _given_names_valid(rule, given[code]):
            return False
        try:
            spaces = set(map(get, metas, repeat("namespace")))  # a few, each checked once
        except TypeError:  # unhashable: no string
            return False
        spaces.discard(None)
        spaces.discard("")
        if not spaces:
            continue
        if not _STR.issuperset(map(type, spaces)):
            return False
        if kind not in CLUSTER_SCOPED and (max(map(len, spaces)) > DNS1123_LABEL.max_len
                                           or not all(map(DNS1123_LABEL.pattern.fullmatch, spaces))):
            return False
    return True


def _some_names_valid(rule: NameRule, names: list[Any]) -> bool:
    """Whether each of ``names`` is None, empty, or a string matching ``rule``."""
    if not _STR_OR_NONE.issuperset(map(type, names)):
        return False
    names = list(filter(None, names))
    return not names or _names_valid(rule, names)


def _given_names_valid(rule: NameRule, names: list[Any]) -> bool:
    """``_some_names_valid`` of names the loader read from a reader's objects, which are non-empty strings
    as a rule: taken as such first (a string refuses anything else, and an empty one fails the rule's
    test), without a pass over their types nor a copy; anything else is judged as ``_some_names_valid``
    judges it."""
    try:
        if _names_valid(rule, names):
            return True
    except TypeError:  # None (an absent name), or something that is no string
        pass
    return _some_names_valid(rule, names)


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
