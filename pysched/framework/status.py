"""Upstream's ``fwk.Code`` and ``fwk.Status``: plugin outcomes are values, never exceptions."""

from __future__ import annotations

from enum import IntEnum


class Code(IntEnum):
    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6


class Status:
    __slots__ = ("code", "error", "plugin", "reasons")

    def __init__(self, code: Code = Code.Success, *reasons: str, plugin: str = "", error: str | None = None):
        self.code = code
        self.reasons = list(reasons)
        self.plugin = plugin
        self.error = error
        if error is not None and not self.reasons:
            self.reasons = [error]

    # constructors ------------------------------------------------------------
    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.Unschedulable, *reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        return cls(Code.UnschedulableAndUnresolvable, *reasons)

    @classmethod
    def as_error(cls, err: str) -> Status:
        return cls(Code.Error, error=err)

    # predicates --------------------------------------------------------------
    def is_success(self) -> bool:
        return self.code == Code.Success

    def is_skip(self) -> bool:
        return self.code == Code.Skip

    def is_rejected(self) -> bool:
        return self.code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        self.plugin = plugin
        return self

    def to_dict(self, with_plugin: bool = True) -> dict:
        d: dict = {"code": self.code.name}
        if with_plugin and self.plugin:
            d["plugin"] = self.plugin
        if self.reasons:
            d["reasons"] = list(self.reasons)
        return d

    def __repr__(self) -> str:
        return f"Status({self.code.name}, {self.reasons!r}, plugin={self.plugin!r})"


# PreFilter's Skip, shared: ``Framework.run_pre_filter`` only reads its code (never names a plugin on it)
PRE_FILTER_SKIP = Status(Code.Skip)
# PreScore's Skip, shared: ``Framework.run_pre_score`` only reads its code as well
PRE_SCORE_SKIP = Status(Code.Skip)

