"""Per-cycle scratch space shared by a profile's plugins, keyed by plugin name."""

from __future__ import annotations

from typing import Any


class StateData:
    """Data a plugin keeps in CycleState; ``clone`` must copy what AddPod/RemovePod mutate."""

    def clone(self) -> StateData:
        return self


class CycleState:
    __slots__ = ("_data", "active_filters", "skip_filter_plugins", "skip_prebind_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_prebind_plugins: set[str] = set()
        # the Filter plugins left after PreFilter's skips, resolved once per cycle by the framework
        self.active_filters: list | None = None

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        """The value, or None when nothing was written (upstream returns ErrNotFound)."""
        return self._data.get(key)

    def has(self, key: str) -> bool:
        return key in self._data

    def clone(self) -> CycleState:
        c = CycleState()
        c._data = {k: (v.clone() if isinstance(v, StateData) else v) for k, v in self._data.items()}
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_prebind_plugins = set(self.skip_prebind_plugins)
        return c
