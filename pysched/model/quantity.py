"""Kubernetes resource quantities, parsed exactly as the API server does.

Quantities are kept as integer *milli-units*: the API server rounds every container quantity up to a
multiple of 0.001 of its unit before anything is summed, so milli-units are exact for every sum the
scheduler makes. ``MilliValue()`` of a sum is then the sum itself, and ``Value()`` is its ceiling / 1000.
"""

from __future__ import annotations

import math
import re
from functools import cache
from typing import TYPE_CHECKING

from pysched.errors import QuantityError

if TYPE_CHECKING:
    from fractions import Fraction

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
#: the decimal suffixes as powers of ten (``_decimal`` gives their exact values)
_DECIMAL_EXP = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


@cache
def _decimal() -> dict[str, Fraction]:
    """The decimal suffixes' exact values, built at the first quantity ``_WHOLE`` does not read: fractions
    (which imports decimal) is not imported at a start that meets none."""
    from fractions import Fraction

    return {k: Fraction(10) ** e for k, e in _DECIMAL_EXP.items()}


@cache
def _general() -> re.Pattern[str]:
    """Any quantity; compiled at the first one ``_WHOLE`` does not read, not at every start."""
    return re.compile(r"^([+-]?)(\d+\.?\d*|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")


_cache: dict[str, int] = {}
#: quantity text -> its milli-units, for the texts read so far (others may look up; only to_milli writes)
KNOWN_MILLI = _cache


_EXPECTED = ("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', "
             "for example 500m, 2, 1.5Gi or 129e6")
MAX_QUANTITY_CHARS = 100


def parse_quantity(text: object) -> Fraction:
    """The exact value of a quantity string (``"250m"``, ``"1.5Gi"``, ``"1e3"``); anything else that is not
    a number is a ``QuantityError``."""
    from fractions import Fraction

    if isinstance(text, bool):
        raise QuantityError(f"invalid quantity {text!r}: {_EXPECTED}")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        if math.isnan(text) or math.isinf(text):
            raise QuantityError(f"invalid quantity {text!r}: {_EXPECTED}")
        return Fraction(str(text))
    if not isinstance(text, str):
        raise QuantityError(f"invalid quantity {_short(text)} ({type(text).__name__}): {_EXPECTED}")
    s = text.strip()
    if len(s) > MAX_QUANTITY_CHARS:
        raise QuantityError(f"quantity is longer than {MAX_QUANTITY_CHARS} characters: {_short(text)}")
    m = _general().match(s)
    if not m:
        raise QuantityError(f"invalid quantity {text!r}: {_EXPECTED}")
    sign, number, suffix = m.group(1), m.group(2), m.group(3) or ""
    value = Fraction(number)
    if suffix in _BINARY:
        value *= _BINARY[suffix]
    elif suffix in _DECIMAL_EXP:
        value *= _decimal()[suffix]
    else:  # exponent
        exp = int(suffix[1:])
        if abs(exp) > 100:
            raise QuantityError(f"quantity exponent out of range: {text!r}")
        value *= Fraction(10) ** exp
    return -value if sign == "-" else value


def _short(v: object) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


# Whole numbers with no suffix, a binary or decimal multiplier, or ``m`` (``32492Mi``, ``8``, ``250m``): most
# quantities of a dump, each node's memory a different one; read with integer arithmetic, no Fraction.
_WHOLE = re.compile(r"(\d{1,18})(Ki|Mi|Gi|Ti|Pi|Ei|[kMGTPEm]?)\Z")
_WHOLE_MILLI = {"m": 1, "": 1000, **{k: v * 1000 for k, v in _BINARY.items()},
                **{k: 10**e * 1000 for k, e in _DECIMAL_EXP.items() if e > 0}}


def to_milli(text: str | int | float) -> int:
    """A quantity in milli-units, rounded up (as API defaulting rounds container quantities)."""
    key = text if isinstance(text, str) else None
    if key is not None:
        hit = _cache.get(key)
        if hit is not None:
            return hit
        m = _WHOLE.match(key)
        if m:
            milli = int(m.group(1)) * _WHOLE_MILLI[m.group(2)]
            if len(_cache) < 100_000:
                _cache[key] = milli
            return milli
    q = parse_quantity(text) * 1000
    milli = -((-q.numerator) // q.denominator)  # ceiling
    if key is not None and len(_cache) < 100_000:
        _cache[key] = milli
    return milli


def milli_to_value(milli: int) -> int:
    """``Quantity.Value()``: whole units, rounded up."""
    return -((-milli) // 1000)


def format_milli(milli: int, resource: str = "") -> str:
    """A short human form of a milli-unit amount: cpu in m/cores, bytes with binary suffixes."""
    if resource == "cpu":
        return f"{milli // 1000}" if milli % 1000 == 0 else f"{milli}m"
    value = milli_to_value(milli)
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for suffix, factor in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if value and value % factor == 0:
                return f"{value // factor}{suffix}"
    return str(value)
