"""Golden files: ``PYSCHED_UPDATE_GOLDEN=1`` rewrites them from the current output.

The goldens were rendered with the typer and rich that ``tests/constraints.txt`` names. With those
installed (CI) the text must match byte for byte; with other versions (a user's ``pip install``) only the
words must match, since line wrapping and box drawing are the libraries' own layout."""

from __future__ import annotations

import os
import re
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("PYSCHED_UPDATE_GOLDEN") == "1"
CONSTRAINTS = Path(__file__).resolve().parent / "constraints.txt"
_BOX = re.compile(r"[\u2500-\u259f]+")  # box drawing and block elements


@cache
def layout_pinned() -> bool:
    """Whether typer and rich are the versions the goldens were rendered with."""
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+),<([0-9.]+)", line.strip())
        if m is None:
            continue
        try:
            have = _numbers(version(m[1]))
        except PackageNotFoundError:
            return False
        if not _numbers(m[2]) <= have < _numbers(m[3]):
            return False
    return True


def _numbers(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def words(text: str) -> list[str]:
    return _BOX.sub(" ", text).split()


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"missing golden {path}: run with PYSCHED_UPDATE_GOLDEN=1 to create it"
    want = path.read_text(encoding="utf-8")
    if layout_pinned():
        assert text == want, f"{name} differs (PYSCHED_UPDATE_GOLDEN=1 regenerates)"
    else:
        assert words(text) == words(want), f"{name} differs in its words (layout aside)"
