"""Per-cycle scratch space shared by a profile's plugins, keyed by plugin name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class StateData:
    """Data a plugin keeps in CycleState; ``clone`` must copy what AddPod/RemovePod mutate."""

    def clone(self) -> StateData:
        return self


class CycleState:
    """``write(key, value)``; ``read(key)``: the value, or None when nothing was written (upstream returns
    ErrNotFound). Both are the data dict's own methods (plugins call them about 20 times a cycle: no Python
    frame each time)."""

    __slots__ = ("_data", "active_filters", "read", "skip_filter_plugins", "skip_prebind_plugins",
                 "skip_score_plugins", "write")

    def __init__(self) -> None:
        self._set_data({})
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_prebind_plugins: set[str] = set()
        # the Filter plugins left after PreFilter's skips, resolved once per cycle by the framework
        self.active_filters: list | None = None

    def _set_data(self, data: dict[str, Any]) -> None:
        self._data = data
        self.read: Callable[[str], Any] = data.get
        self.write: Callable[[str, Any], None] = data.__setitem__

    def has(self, key: str) -> bool:
        return key in self._data

    def clone(self) -> CycleState:
        c = CycleState()
        c._set_data({k: (v.clone() if isinstance(v, StateData) else v) for k, v in self._data.items()})
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_prebind_plugins = set(self.skip_prebind_plugins)
        return c
