"""RFC 3339 timestamps as Kubernetes writes them, turned into sortable numbers."""

from __future__ import annotations

from datetime import datetime
from itertools import compress, repeat
from operator import eq
from typing import Any

NOW = float("inf")  # "now" is later than every recorded timestamp

#: texts remembered at most (a snapshot repeats its timestamps; a long process reads many snapshots)
MAX_KNOWN = 1 << 16


def _read(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class _Known(dict[str, "float | None"]):
    """Text -> ``_read(text)``, read at the first ask (``__missing__``): a hit is one C-level dict lookup.
    Bounded: emptied when it holds ``MAX_KNOWN`` texts (the values are the same read again)."""

    def __missing__(self, text: str) -> float | None:
        value = _read(text)
        if len(self) >= MAX_KNOWN:
            self.clear()
        self[text] = value
        return value


_KNOWN = _Known()


def parse_time(text: object) -> float | None:
    """Seconds since the epoch, or None when absent or unreadable."""
    if not text or not isinstance(text, str):
        return None
    return _KNOWN[text]


#: ``parse_time`` of a text the caller knows to be a non-empty ``str``: the remembered value itself, without
#: the Python-level call around it (the loader reads a timestamp or two per object)
parse_text = _KNOWN.__getitem__

# ``YYYY-MM-DDTHH:MM:SSZ``, the shape Kubernetes writes: where its digits and its other characters stand
_SHAPE_LEN = 20
_DIGITS_AT = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18)
_SEPARATORS_AT = (4, 7, 10, 13, 16, 19)
_SEPARATORS = b"--T::Z"
_MONTH_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _separators(np: Any) -> Any:
    return np.frombuffer(_SEPARATORS, np.uint8)


def prime(texts: list[Any]) -> None:
    """Read the timestamps among ``texts`` (anything: None, numbers, other texts are passed over) that have
    Kubernetes' own shape, ``2026-01-01T08:00:00Z``, all at once, and remember them as ``parse_time``
    reads them: a snapshot's objects each carry a timestamp of their own, which ``datetime`` reads in some
    7,000 instructions, NumPy's passes over all of them in a few hundred each. Only texts that
    ``datetime.fromisoformat`` reads (a valid date and time, year 1 on) are remembered, with the same
    value (whole seconds since the epoch, a float); anything else is left to ``parse_time``."""
    present = list(filter(None, texts))  # (absent ones: None)
    try:
        texts = list(compress(present, map(eq, map(len, present), repeat(_SHAPE_LEN))))
    except TypeError:  # something without a length (a number): left to parse_time, as all the others
        return
    if not texts:
        return
    try:
        data = "".join(texts).encode("ascii")  # TypeError: a list of 20 items; UnicodeEncodeError
    except (TypeError, UnicodeError):
        return
    import numpy as np  # (imported by every simulation already)

    rows = np.frombuffer(data, np.uint8).reshape(len(texts), _SHAPE_LEN)
    ok = (rows[:, _SEPARATORS_AT] == _separators(np)).all(axis=1)
    digits = rows[:, _DIGITS_AT] - np.uint8(ord("0"))  # (below '0': wrapped round, above 9 as well)
    ok &= (digits <= 9).all(axis=1)
    d = digits.T.astype(np.int64)
    year = d[0] * 1000 + d[1] * 100 + d[2] * 10 + d[3]
    month, day, hour, minute, second = (d[i] * 10 + d[i + 1] for i in range(4, 14, 2))
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    month_days = np.array(_MONTH_DAYS)[np.clip(month, 0, 12)] + (leap & (month == 2))
    ok &= (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1) & (day <= month_days) \
        & (hour <= 23) & (minute <= 59) & (second <= 59)
    if not ok.any():
        return
    # days since 1970-01-01 of the (proleptic Gregorian) date: counted in 400-year eras from March 1st, 0000
    y = year - (month <= 2)
    era = y // 400
    in_era = y - era * 400
    in_year = (153 * (month + np.where(month > 2, -3, 9)) + 2) // 5 + day - 1
    days = era * 146097 + in_era * 365 + in_era // 4 - in_era // 100 + in_year - 719468
    seconds = days * 86400 + hour * 3600 + minute * 60 + second
    # (whole seconds, far below 2**53: the float is the one datetime's division gives)
    known = _KNOWN
    if len(known) + len(texts) > MAX_KNOWN:
        known.clear()
    known.update(zip(compress(texts, ok.tolist()), seconds[ok].astype(np.float64).tolist(), strict=True))
