"""timeutil: the remembered timestamps (``parse_time``) and the batch read of Kubernetes-shaped ones (``prime``)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from pysched.model import timeutil


def _reference(text: str) -> float | None:
    """What parse_time always returned: datetime's reading of the text."""
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@pytest.fixture(autouse=True)
def _fresh() -> None:
    timeutil._KNOWN.clear()


# (text, whether prime reads it itself: else it leaves it to parse_time)
CASES = [
    ("2026-01-01T00:00:00Z", True),
    ("2024-02-29T23:59:59Z", True),  # a leap day
    ("2000-02-29T12:00:00Z", True),  # divisible by 400: leap
    ("1900-02-29T00:00:00Z", False),  # divisible by 100 only: no leap day
    ("2023-02-29T00:00:00Z", False),
    ("2023-04-31T00:00:00Z", False),
    ("0000-01-01T00:00:00Z", False),  # year 0: datetime refuses it
    ("0001-01-01T00:00:00Z", True),
    ("9999-12-31T23:59:59Z", True),
    ("1969-12-31T23:59:59Z", True),  # before the epoch: negative
    ("2026-13-01T00:00:00Z", False),
    ("2026-00-10T00:00:00Z", False),
    ("2026-01-00T00:00:00Z", False),
    ("2026-01-32T00:00:00Z", False),
    ("2026-01-01T24:00:00Z", False),
    ("2026-01-01T00:60:00Z", False),
    ("2026-01-01T00:00:60Z", False),  # no leap second
    ("2026-01-01t00:00:00Z", False),  # other shapes datetime reads: left to it
    ("2026-01-01 00:00:00Z", False),
    ("2026-01-01T00:00:00z", False),
    ("2026-01-01T00:00:0/Z", False),  # the characters around the digits
    ("2026-01-01T00:00:0:Z", False),
    ("2026/01/01T00:00:00Z", False),
    ("xxxxxxxxxxxxxxxxxxxx", False),
    ("2026-01-01T00:00:00+00:00", False),
    ("2026-01-01T00:00:00.5Z", False),
]


@pytest.mark.parametrize(("text", "read"), CASES, ids=[c[0] for c in CASES])
def test_prime_reads_as_datetime(text: str, read: bool) -> None:
    timeutil.prime([None, text, "2026-06-01T00:00:00Z"])
    assert (text in timeutil._KNOWN) is read
    if read:
        value = timeutil._KNOWN[text]
        assert type(value) is float and value == _reference(text)
    assert timeutil.parse_time(text) == _reference(text)  # primed or not, the same answer


@pytest.mark.parametrize("junk", [[5, "2026-01-01T00:00:00Z"], [["x"] * 20, "2026-01-01T00:00:00Z"],
                                  ["٢٠٢٦-01-01T00:00:00Z", "2026-01-01T00:00:00Z"], [], [None, ""]],
                         ids=["a number", "a list of 20", "non-ascii digits", "nothing", "absent and empty"])
def test_prime_passes_over_what_it_cannot_read(junk: list) -> None:
    timeutil.prime(junk)  # (never raises; what it leaves is read by parse_time)
    for text in junk:
        if isinstance(text, str) and text:
            assert timeutil.parse_time(text) == _reference(text)


def test_prime_agrees_with_datetime_on_random_times() -> None:
    rnd = random.Random(7)
    start = datetime(1, 1, 1, tzinfo=UTC)
    texts = [(start + timedelta(seconds=rnd.randrange(315537897600))).strftime("%Y-%m-%dT%H:%M:%SZ")
             for _ in range(3000)]
    texts += [f"{rnd.randrange(10000):04d}-{rnd.randrange(14):02d}-{rnd.randrange(33):02d}T{rnd.randrange(26):02d}:"
              f"{rnd.randrange(62):02d}:{rnd.randrange(62):02d}Z" for _ in range(3000)]
    timeutil.prime(texts)
    primed = [t for t in texts if t in timeutil._KNOWN]
    assert len(primed) > 3000  # every valid one of the first half, and some of the second
    for text in texts:
        assert (text in timeutil._KNOWN) is (_reference(text) is not None)
        assert timeutil.parse_time(text) == _reference(text)


def test_known_times_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timeutil, "MAX_KNOWN", 4)
    for second in range(10):
        assert timeutil.parse_time(f"2026-01-01T00:00:0{second}Z") == 1767225600.0 + second
        assert len(timeutil._KNOWN) <= 4
    timeutil.prime([f"2026-01-01T00:00:0{second}Z" for second in range(3)])
    assert len(timeutil._KNOWN) <= 4 + 3  # emptied first when the batch would overflow it
