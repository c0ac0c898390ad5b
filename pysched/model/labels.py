"""Label selectors and node selectors with apimachinery's semantics.

* ``LabelSelector`` from a ``metav1.LabelSelector`` dict: ``None`` matches nothing, ``{}`` matches
  everything (and counts as *empty*).
* ``NodeSelector`` from ``requiredDuringSchedulingIgnoredDuringExecution``: terms are ORed, a term with
  no requirements is dropped, an invalid term matches nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pysched.apimachinery import label_value_errors, qualified_name_errors
from pysched.errors import SelectorError
from pysched.lazyclass import dataclass
from pysched.safetext import echo

# plain dicts (what the readers make) settled before the ABC check, a Python-level call
_MAP = (dict, Mapping)


def selector_error(path: str, detail: str) -> SelectorError:
    """A ``SelectorError`` whose text is ``path: detail``."""
    return SelectorError(path, detail)


# Keys and values already found valid: a snapshot repeats the same few thousands of them on every
# object, and the regular expressions cost more than the rest of reading a label. Bounded.
_VALID_KEYS: set[str] = set()
_VALID_VALUES: set[str] = set()
_MAX_REMEMBERED = 200_000


def _remember(cache: set[str], text: str) -> None:
    if len(cache) >= _MAX_REMEMBERED:
        cache.clear()
    cache.add(text)


def labels_known_valid(labels: Mapping, values: bool = True) -> bool:
    """True when every key (and value, unless ``values`` is false) of ``labels`` was found valid
    before: a cheap test that lets a loader skip the per-label checks; False says nothing."""
    try:
        return _VALID_KEYS.issuperset(labels) and (not values or _VALID_VALUES.issuperset(labels.values()))
    except TypeError:  # an unhashable value (a list where a string belongs): the slow checks say what
        return False


def label_key_error(key: object) -> str | None:
    """Why ``key`` is not a valid qualified label key, or None. The rules are apimachinery's
    ``IsQualifiedName`` (``pysched.apimachinery``); the message is a snapshot reader's short one."""
    if key.__class__ is str and key in _VALID_KEYS:
        return None
    if not isinstance(key, str):
        return f"label key must be a string, got {type(key).__name__}"
    errs = qualified_name_errors(key)
    if not errs:
        if key.__class__ is str:
            _remember(_VALID_KEYS, key)
        return None
    prefix, _, _ = key.rpartition("/")
    if "/" in key and not prefix:
        return f"invalid label key {echo(key)}: prefix part must be non-empty"
    if "/" in prefix or any(e.startswith("prefix part") for e in errs):
        return f"invalid label key {echo(key)}: prefix part must be a DNS-1123 subdomain"
    return (f"invalid label key {echo(key)}: name part must consist of alphanumeric characters, '-', '_' "
            f"or '.', and must start and end with an alphanumeric character")


def label_value_error(value: object) -> str | None:
    """Why ``value`` is not a valid label value, or None (apimachinery's ``IsValidLabelValue`` rules)."""
    if value.__class__ is str and value in _VALID_VALUES:
        return None
    if not isinstance(value, str):
        return f"label value must be a string, got {type(value).__name__} {echo(value)}"
    if label_value_errors(value):
        return (f"invalid label value {echo(value)}: must be 63 characters or less and must be empty or begin "
                f"and end with an alphanumeric character")
    if value.__class__ is str:
        _remember(_VALID_VALUES, value)
    return None


@dataclass(slots=True, frozen=True)
class Requirement:
    key: str
    op: str  # In, NotIn, Exists, DoesNotExist, Gt, Lt (Gt/Lt only for node selectors)
    values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        if op == "In":
            v = labels.get(self.key)
            return v is not None and v in self.values
        if op == "NotIn":
            v = labels.get(self.key)
            return v is None or v not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if op in ("Gt", "Lt"):
            v = labels.get(self.key)
            if v is None:
                return False
            try:
                have = _parse_int64(v)
            except ValueError:
                return False
            want = _parse_int64(next(iter(self.values)))
            return have > want if op == "Gt" else have < want
        return False


def _parse_int64(text: str) -> int:
    n = _INT64.get(text)
    if n is None:
        if not re.fullmatch(r"[+-]?\d+", text):
            raise ValueError(text)
        n = int(text)
        if not -(2**63) <= n < 2**63:
            raise ValueError(text)
        if len(_INT64) < 65536:  # node label values and selector operands: few distinct words
            _INT64[text] = n
    return n


_INT64: dict[str, int] = {}


_LABEL_OPS = {"In", "NotIn", "Exists", "DoesNotExist"}


class LabelSelector:
    """A parsed ``metav1.LabelSelector``."""

    __slots__ = ("_eq", "nothing", "requirements")

    def __init__(self, requirements: tuple[Requirement, ...] = (), nothing: bool = False) -> None:
        self.requirements = requirements
        self.nothing = nothing
        # Fast path: a selector made only of equalities.
        eq = [(r.key, next(iter(r.values))) for r in requirements if r.op == "In" and len(r.values) == 1]
        self._eq = tuple(eq) if len(eq) == len(requirements) else None

    @classmethod
    def parse(cls, raw: Mapping | None, field: str = "labelSelector") -> LabelSelector:
        """Parse a LabelSelector dict; None → matches nothing. Raises SelectorError."""
        if raw is None:
            return NOTHING
        if not isinstance(raw, _MAP):
            raise selector_error(field, f"expected an object, got {type(raw).__name__}")
        reqs: list[Requirement] = []
        ml = raw.get("matchLabels") or {}
        if not isinstance(ml, _MAP):
            raise selector_error(f"{field}.matchLabels", f"expected a map of strings, got {type(ml).__name__}")
        for k, v in ml.items():
            err = label_key_error(k) or label_value_error(v)
            if err:
                raise selector_error(f"{field}.matchLabels", err)
            reqs.append(Requirement(k, "In", frozenset((v,))))
        exprs = raw.get("matchExpressions") or []
        if not isinstance(exprs, list):
            raise selector_error(f"{field}.matchExpressions", f"expected a list, got {type(exprs).__name__}")
        for i, e in enumerate(exprs):
            reqs.append(_parse_requirement(e, f"{field}.matchExpressions[{i}]", _LABEL_OPS))
        # apimachinery sorts requirements by key; order only matters for printing.
        reqs.sort(key=lambda r: r.key)
        return cls(tuple(reqs))

    @classmethod
    def from_map(cls, labels: Mapping[str, str]) -> LabelSelector:
        """``labels.SelectorFromSet``: equality on every pair (an empty map selects everything)."""
        return cls(tuple(Requirement(k, "In", frozenset((v,))) for k, v in sorted(labels.items())))

    @property
    def empty(self) -> bool:
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        eq = self._eq
        if eq is not None:
            for k, v in eq:
                if labels.get(k) != v:
                    return False
            return True
        for r in self.requirements:
            if not r.matches(labels):
                return False
        return True

    def with_requirements(self, extra: tuple[Requirement, ...]) -> LabelSelector:
        if self.nothing:
            return self
        return LabelSelector(tuple(sorted(self.requirements + extra, key=lambda r: r.key)))

    def __repr__(self) -> str:
        if self.nothing:
            return "LabelSelector(<nothing>)"
        return f"LabelSelector({', '.join(f'{r.key} {r.op} {sorted(r.values)}' for r in self.requirements)})"


NOTHING = LabelSelector((), nothing=True)
EVERYTHING = LabelSelector(())


def _parse_requirement(e: object, field: str, ops: set[str]) -> Requirement:
    if not isinstance(e, _MAP):
        raise selector_error(field, f"expected an object, got {type(e).__name__}")
    key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
    err = label_key_error(key)
    if err:
        raise selector_error(f"{field}.key", err)
    if not isinstance(op, str) or op not in ops:
        raise selector_error(f"{field}.operator", f"{op!r} is not a valid selector operator "
                             f"(expected one of {', '.join(sorted(ops))})")
    if not isinstance(values, list):
        raise selector_error(f"{field}.values", f"expected a list of strings, got {type(values).__name__}")
    if op in ("In", "NotIn") and not values:
        raise selector_error(f"{field}.values", "for 'in', 'notin' operators, values set can't be empty")
    if op in ("Exists", "DoesNotExist") and values:
        raise selector_error(f"{field}.values", "values set must be empty for exists and does not exist")
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise selector_error(f"{field}.values", "for 'Gt', 'Lt' operators, exactly one value is required")
        try:
            _parse_int64(str(values[0]))
        except ValueError:
            raise selector_error(f"{field}.values", "for 'Gt', 'Lt' operators, the value must be an integer") from None
    for i, v in enumerate(values):
        verr = label_value_error(v)
        if verr:
            raise selector_error(f"{field}.values[{i}]", verr)
    return Requirement(str(key), op, frozenset(values))  # label_key_error passed: a string


_NODE_OPS = _LABEL_OPS | {"Gt", "Lt"}


def validate_node_selector(raw: object, field: str) -> None:
    """What the API server's validation of a pod's ``requiredDuringSchedulingIgnoredDuringExecution``
    (a ``NodeSelector``) rejects, raised as ``SelectorError``: wrong types, an unknown operator, an
    invalid key, a values list that does not fit the operator.

    Problems the scheduler itself copes with stay soft (the term then matches nothing, see
    ``NodeSelectorTerm.parse``): a value that is no valid label value or no integer for Gt/Lt, and
    matchFields with several values; upstream's own tests feed pods like that to the scheduler."""
    if not isinstance(raw, _MAP):
        raise selector_error(field, f"expected an object, got {type(raw).__name__}")
    terms = raw.get("nodeSelectorTerms")
    if terms is None:
        return
    if not isinstance(terms, list):
        raise selector_error(f"{field}.nodeSelectorTerms", f"expected a list, got {type(terms).__name__}")
    for i, t in enumerate(terms):
        validate_node_selector_term(t, f"{field}.nodeSelectorTerms[{i}]")


def validate_node_selector_term(raw: object, field: str) -> None:
    """``validate_node_selector`` for one ``NodeSelectorTerm``."""
    if raw is None:
        return
    if not isinstance(raw, _MAP):
        raise selector_error(field, f"expected an object, got {type(raw).__name__}")
    for part in ("matchExpressions", "matchFields"):
        items = raw.get(part)
        if items is None:
            continue
        if not isinstance(items, list):
            raise selector_error(f"{field}.{part}", f"expected a list, got {type(items).__name__}")
        for j, e in enumerate(items):
            path = f"{field}.{part}[{j}]"
            if not isinstance(e, _MAP):
                raise selector_error(path, f"expected an object, got {type(e).__name__}")
            key, op, values = e.get("key"), e.get("operator"), e.get("values")
            if values is not None and (not isinstance(values, list) or not all(isinstance(v, str) for v in values)):
                raise selector_error(f"{path}.values", "expected a list of strings")
            n = len(values or ())
            if part == "matchFields":
                if key != "metadata.name":
                    raise selector_error(f"{path}.key", f"{key!r} is not a valid field selector key "
                                         f"(expected 'metadata.name')")
                if op not in ("In", "NotIn"):
                    raise selector_error(f"{path}.operator", f"{op!r} is not a valid selector operator "
                                         f"(expected one of In, NotIn)")
                continue
            err = label_key_error(key)
            if err:
                raise selector_error(f"{path}.key", err)
            if not isinstance(op, str) or op not in _NODE_OPS:
                raise selector_error(f"{path}.operator", f"{op!r} is not a valid selector operator "
                                     f"(expected one of {', '.join(sorted(_NODE_OPS))})")
            if op in ("In", "NotIn") and n == 0:
                raise selector_error(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
            if op in ("Exists", "DoesNotExist") and n:
                raise selector_error(f"{path}.values",
                                     "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
            if op in ("Gt", "Lt") and n != 1:
                raise selector_error(f"{path}.values", "must be specified single value when `operator` is "
                                     "'Lt' or 'Gt'")


class NodeSelectorTerm:
    __slots__ = ("expressions", "fields", "valid")

    def __init__(self, expressions: tuple[Requirement, ...], fields: tuple[Requirement, ...], valid: bool):
        self.expressions = expressions
        self.fields = fields
        self.valid = valid

    @classmethod
    def parse(cls, raw: object) -> NodeSelectorTerm | None:
        """None when the term has no requirements (upstream drops it)."""
        if not isinstance(raw, _MAP):
            return cls((), (), False)
        exprs = raw.get("matchExpressions") or []
        fields = raw.get("matchFields") or []
        if not exprs and not fields:
            return None
        if not isinstance(exprs, list) or not isinstance(fields, list):
            return cls((), (), False)
        try:
            e = tuple(_parse_requirement(x, "matchExpressions", _NODE_OPS) for x in exprs)
            f = tuple(_parse_field_requirement(x) for x in fields)
        except SelectorError:
            return cls((), (), False)
        return cls(e, f, True)

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if not self.valid:
            return False
        for r in self.expressions:
            if not r.matches(labels):
                return False
        if self.fields and node_name:
            fl = {"metadata.name": node_name}
            for r in self.fields:
                if not r.matches(fl):
                    return False
        return True


def _parse_field_requirement(e: object) -> Requirement:
    if not isinstance(e, _MAP):
        raise selector_error("matchFields", "expected an object")
    key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
    if key != "metadata.name" or op not in ("In", "NotIn") or not isinstance(values, list) or len(values) != 1:
        raise selector_error("matchFields", "only metadata.name with In/NotIn and one value")
    return Requirement(key, op, frozenset(str(v) for v in values))


class NodeSelector:
    """``v1.NodeSelector``: ORed terms."""

    __slots__ = ("terms",)

    def __init__(self, terms: tuple[NodeSelectorTerm, ...]) -> None:
        self.terms = terms

    @classmethod
    def parse(cls, raw: Mapping | None) -> NodeSelector:
        terms_raw = (raw.get("nodeSelectorTerms") if isinstance(raw, _MAP) else None) or []
        terms = []
        for t in terms_raw if isinstance(terms_raw, list) else []:
            parsed = NodeSelectorTerm.parse(t)
            if parsed is not None:
                terms.append(parsed)
        return cls(tuple(terms))

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        for t in self.terms:
            if t.matches(labels, node_name):
                return True
        return False


def validate_label_map(labels: object, field: str) -> list[str]:
    """Errors of a metadata.labels map (empty when valid)."""
    if labels is None:
        return []
    if not isinstance(labels, _MAP):
        return [f"{field}: expected a map of strings, got {type(labels).__name__}"]
    errs = []
    for k, v in labels.items():
        err = label_key_error(k) or label_value_error(v)
        if err:
            errs.append(f"{field}: {err}")
    return errs
