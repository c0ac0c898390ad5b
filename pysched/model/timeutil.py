"""RFC 3339 timestamps as Kubernetes writes them, turned into sortable numbers."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

NOW = float("inf")  # "now" is later than every recorded timestamp


def parse_time(text: object) -> float | None:
    """Seconds since the epoch, or None when absent or unreadable."""
    if not text or not isinstance(text, str):
        return None
    return _parse(text)


@lru_cache(maxsize=1 << 16)  # bounded: timestamps repeat within a snapshot, not across a long process
def _parse(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


#: ``parse_time`` of a text the caller knows to be a non-empty ``str``: the cached parse itself, without the
#: Python-level call around it (the loader reads a timestamp or two per object)
parse_text = _parse
