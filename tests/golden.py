"""Golden files: ``PYSCHED_UPDATE_GOLDEN=1`` rewrites them from the current output."""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("PYSCHED_UPDATE_GOLDEN") == "1"


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"missing golden {path}: run with PYSCHED_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs (PYSCHED_UPDATE_GOLDEN=1 regenerates)"
