"""RFC 3339 timestamps as Kubernetes writes them, turned into sortable numbers."""

from __future__ import annotations

from datetime import datetime

_cache: dict[str, float] = {}
NOW = float("inf")  # "now" is later than every recorded timestamp


def parse_time(text: object) -> float | None:
    """Seconds since the epoch, or None when absent or unreadable."""
    if not text or not isinstance(text, str):
        return None
    hit = _cache.get(text)
    if hit is not None:
        return hit
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
    _cache[text] = value
    return value
