"""CEL for DRA device selectors: the ``device`` variable and the Kubernetes extension functions.

Evaluation uses ``cel-expr-python`` (Google's C++ CEL runtime behind Python bindings): the fastest of the
PyPI implementations compared and the reference runtime for the core language. Its Python bindings have
no opaque user types, so a Kubernetes ``Quantity`` and ``Semver`` travel through CEL as small tagged maps
whose fields are canonical (an exact fraction, a version without build metadata): ``==`` between two of
them is then the semantic equality upstream defines, and the member functions below dispatch on the tag.

What follows upstream (k8s.io/dynamic-resource-allocation/cel, k8s.io/apiserver/pkg/cel/library):
- ``device.driver``, ``device.attributes[domain][id]``, ``device.capacity[domain][id]``; a name without a
  domain is under the driver's domain; looking up a domain the device lacks gives an empty map, a missing
  id is a runtime error ("no such key").
- ``quantity``/``isQuantity`` and ``isLessThan``, ``isGreaterThan``, ``compareTo``, ``add``, ``sub``,
  ``asInteger``, ``asApproximateFloat``, ``isInteger``, ``sign``; ``semver``/``isSemver`` and ``major``,
  ``minor``, ``patch``, ``isLessThan``, ``isGreaterThan``, ``compareTo``; the strings extension; the
  lists library's ``isSorted``, ``sum``, ``min``, ``max``; ``cel.bind``.
- Not available: the lists library's ``indexOf``/``lastIndexOf`` on lists (the strings extension's
  ``indexOf`` owns the name in this runtime), regex ``find``/``findAll``, IP/CIDR/URL/format libraries.
  An expression using them fails to compile and is reported as an input error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from pysched.errors import QuantityError

if TYPE_CHECKING:
    from fractions import Fraction

# The CEL runtime, imported when the first selector is compiled (most snapshots have none: it would be
# a few per cent of every CLI start).
_cel: Any = None

Q_TAG = "__k8s_quantity__"
S_TAG = "__k8s_semver__"
MAX_INT64 = 2**63 - 1
MIN_INT64 = -(2**63)


class CelError(ValueError):
    """A selector that does not compile, or that failed on one device."""


# --------------------------------------------------------------------------- quantity and semver values

def _q(value: Fraction) -> dict:
    return {Q_TAG: f"{value.numerator}/{value.denominator}"}


def quantity_value(text: str) -> dict:
    from pysched.model.quantity import parse_quantity
    try:
        return _q(parse_quantity(text))
    except QuantityError as e:
        raise ValueError(str(e)) from None


def _qv(m: Any) -> Fraction:
    if not isinstance(m, Mapping) or Q_TAG not in m:
        raise ValueError("expected a quantity")
    from fractions import Fraction  # (here: a start without DRA does not import fractions and decimal)

    return Fraction(m[Q_TAG])



@cache
def _semver() -> re.Pattern[str]:
    """Compiled at the first version read, not at every start (2.7 M instructions; most runs have no DRA)."""
    return re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                      r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
                      r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")


def parse_semver(text: str) -> tuple[int, int, int, str]:
    """Strict semantic version 2.0.0 (what blang/semver's Parse accepts)."""
    m = _semver().match(text) if isinstance(text, str) else None
    if not m:
        raise ValueError(f"could not parse {text!r} as semver")
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or ""


def semver_value(text: str) -> dict:
    major, minor, patch, pre = parse_semver(text)
    return {S_TAG: f"{major}.{minor}.{patch}" + (f"-{pre}" if pre else "")}


def _sv(m: Any) -> tuple[int, int, int, str]:
    if not isinstance(m, Mapping) or S_TAG not in m:
        raise ValueError("expected a semver")
    return parse_semver(m[S_TAG])


def _pre_key(pre: str) -> tuple:
    """Semver precedence: a release sorts after its pre-releases; numeric identifiers before others."""
    if not pre:
        return (1,)
    parts = []
    for p in pre.split("."):
        parts.append((0, int(p), "") if p.isdigit() else (1, 0, p))
    return (0, tuple(parts))


def _semver_cmp(a: Any, b: Any) -> int:
    x, y = _sv(a), _sv(b)
    kx, ky = (x[:3], _pre_key(x[3])), (y[:3], _pre_key(y[3]))
    return (kx > ky) - (kx < ky)


def _cmp(a: Any, b: Any) -> int:
    if isinstance(a, Mapping) and S_TAG in a:
        return _semver_cmp(a, b)
    x, y = _qv(a), _qv(b)
    return (x > y) - (x < y)


def _as_integer(a: Any) -> int:
    v = _qv(a)
    if v.denominator != 1 or not MIN_INT64 <= v.numerator <= MAX_INT64:
        raise ValueError("cannot convert value to integer")
    return v.numerator


def _int_result(v: Fraction) -> dict:
    return _q(v)


def _is_quantity(s: str) -> bool:
    try:
        quantity_value(s)
        return True
    except ValueError:
        return False


def _is_semver(s: str) -> bool:
    try:
        parse_semver(s)
        return True
    except ValueError:
        return False


def _semver_part(i: int):
    return lambda a: _sv(a)[i]


def _list_sum(items: Any) -> Any:
    items = list(items)
    if not items:
        return 0
    total = items[0]
    for x in items[1:]:
        total = total + x
    return total


def _list_min(items: Any) -> Any:
    items = list(items)
    if not items:
        raise ValueError("min called on empty list")
    return min(items)


def _list_max(items: Any) -> Any:
    items = list(items)
    if not items:
        raise ValueError("max called on empty list")
    return max(items)


def _functions() -> list:
    c = _cel
    M = c.Type.Map(c.Type.STRING, c.Type.DYN)
    S, B, INT, D = c.Type.STRING, c.Type.BOOL, c.Type.INT, c.Type.DYN
    L = c.Type.List(D)

    def fn(name: str, *overloads: tuple) -> Any:
        return c.FunctionDecl(name, [c.Overload(oid, ret, params, is_member=member, impl=impl)
                                     for oid, ret, params, member, impl in overloads])

    return [
        fn("quantity", ("string_to_quantity", M, [S], False, quantity_value)),
        fn("isQuantity", ("is_quantity_string", B, [S], False, _is_quantity)),
        fn("semver", ("string_to_semver", M, [S], False, semver_value)),
        fn("isSemver", ("is_semver_string", B, [S], False, _is_semver)),
        fn("compareTo", ("k8s_compare_to", INT, [M, M], True, _cmp)),
        fn("isLessThan", ("k8s_is_less_than", B, [M, M], True, lambda a, b: _cmp(a, b) < 0)),
        fn("isGreaterThan", ("k8s_is_greater_than", B, [M, M], True, lambda a, b: _cmp(a, b) > 0)),
        fn("add", ("quantity_add", M, [M, M], True, lambda a, b: _q(_qv(a) + _qv(b))),
           ("quantity_add_int", M, [M, INT], True, lambda a, b: _q(_qv(a) + b))),
        fn("sub", ("quantity_sub", M, [M, M], True, lambda a, b: _q(_qv(a) - _qv(b))),
           ("quantity_sub_int", M, [M, INT], True, lambda a, b: _q(_qv(a) - b))),
        fn("asInteger", ("quantity_as_integer", INT, [M], True, _as_integer)),
        fn("asApproximateFloat", ("quantity_as_float", c.Type.DOUBLE, [M], True, lambda a: float(_qv(a)))),
        fn("isInteger", ("quantity_is_integer", B, [M], True,
                         lambda a: _qv(a).denominator == 1 and MIN_INT64 <= _qv(a).numerator <= MAX_INT64)),
        fn("sign", ("quantity_sign", INT, [M], True, lambda a: (_qv(a) > 0) - (_qv(a) < 0))),
        fn("major", ("semver_major", INT, [M], True, _semver_part(0))),
        fn("minor", ("semver_minor", INT, [M], True, _semver_part(1))),
        fn("patch", ("semver_patch", INT, [M], True, _semver_part(2))),
        fn("isSorted", ("list_is_sorted", B, [L], True, lambda xs: list(xs) == sorted(xs))),
        fn("sum", ("list_sum", D, [L], True, _list_sum)),
        fn("min", ("list_min", D, [L], True, _list_min)),
        fn("max", ("list_max", D, [L], True, _list_max)),
    ]


_env: Any = None


def _environment() -> Any:
    global _env, _cel
    if _env is None:
        try:  # the runtime is a binary wheel; a clear error beats an ImportError traceback
            from cel_expr_python import cel
            from cel_expr_python.ext import ext_bindings, ext_strings
        except ImportError:  # pragma: no cover - installed with pysched
            raise CelError("the CEL runtime (package cel-expr-python) is not installed") from None
        _cel = cel
        _env = cel.NewEnv(variables={"device": cel.Type.DYN}, functions=_functions(),
                          extensions=[ext_strings.ExtStrings(), ext_bindings.ExtBindings()])
    return _env


# --------------------------------------------------------------------------- compiled selectors


@cache
def _literal() -> re.Pattern[str]:
    """String literals of an expression; compiled at the first selector, not at every start."""
    return re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')


class Selector:
    """One compiled selector expression."""

    __slots__ = ("_domains", "_program", "expression")

    def __init__(self, expression: str) -> None:
        self.expression = expression
        env = _environment()
        try:
            prog = env.compile(expression)
        except RuntimeError as e:
            raise CelError(f"compilation failed: {_clean(str(e))}") from None
        rtype = prog.return_type()
        if rtype != _cel.Type.BOOL and rtype != _cel.Type.DYN:
            raise CelError(f"must evaluate to bool or the unknown type, not {rtype.name().lower()}")
        self._program = prog
        # Upstream's attribute and capacity maps answer an unknown domain with an empty map. This runtime
        # takes plain maps, so every string literal of the expression that could name a domain gets one.
        self._domains = tuple({a or b for a, b in _literal().findall(expression)})

    # Compiled programs are immutable and not picklable: copies share them, pickles recompile.
    def __copy__(self) -> Selector:
        return self

    def __deepcopy__(self, memo: dict) -> Selector:
        return self

    def __reduce__(self) -> tuple:
        return (compile_selector, (self.expression,))

    def matches(self, device: DeviceInput) -> bool:
        """True/False, or CelError for a runtime error on this device."""
        data: dict[str, Any] = device.data
        if self._domains:
            attrs: dict[str, dict] = data["attributes"]
            caps: dict[str, dict] = data["capacity"]
            missing = [d for d in self._domains if d not in attrs or d not in caps]
            if missing:
                attrs, caps = dict(attrs), dict(caps)
                for d in missing:
                    attrs.setdefault(d, {})
                    caps.setdefault(d, {})
                data = {"driver": data["driver"], "attributes": attrs, "capacity": caps}
        value = self._program.eval(data={"device": data})
        t = value.type()
        if t == _cel.Type.ERROR:
            raise CelError(_clean(str(value.value())))
        if t != _cel.Type.BOOL:
            raise CelError(f"CEL result of type {t.name().lower()} could not be converted to bool")
        return bool(value.value())


def _clean(text: str) -> str:
    return re.sub(r"\s*\[[A-Z_]+\]\s*$", "", text.strip())


_cache: dict[str, Selector | CelError] = {}


def compile_selector(expression: str) -> Selector:
    """The compiled selector (cached by text); raises CelError when it does not compile."""
    hit = _cache.get(expression)
    if hit is None:
        try:
            hit = Selector(expression)
        except CelError as e:
            hit = e
        if len(_cache) < 10_000:
            _cache[expression] = hit
    if isinstance(hit, CelError):
        raise hit
    return hit


class DeviceInput:
    """A device as the ``device`` variable: built once per device, reused by every selector."""

    __slots__ = ("data",)

    def __init__(self, driver: str, attributes: Mapping[str, Any], capacity: Mapping[str, Fraction]) -> None:
        attrs: dict[str, dict] = {}
        for name, value in attributes.items():
            domain, ident = split_qualified(name, driver)
            attrs.setdefault(domain, {})[ident] = semver_value(value.text) if isinstance(value, Version) else value
        caps: dict[str, dict] = {}
        for name, q in capacity.items():
            domain, ident = split_qualified(name, driver)
            caps.setdefault(domain, {})[ident] = _q(q)
        self.data: dict[str, Any] = {"driver": driver, "attributes": attrs, "capacity": caps}


class Version:
    """A version attribute (semver text)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and other.text == self.text

    def __hash__(self) -> int:
        return hash(("v", self.text))

    def __repr__(self) -> str:
        return f"Version({self.text!r})"


def split_qualified(name: str, default_domain: str) -> tuple[str, str]:
    i = name.find("/")
    if i < 0:
        return default_domain, name
    return name[:i], name[i + 1:]
