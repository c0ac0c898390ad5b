"""``Framework.run_pre_filter`` / ``run_pre_score`` call each plugin's bound method looked up once per
plugin list (``_pre_filter_calls`` / ``_pre_score_calls``): the same statuses, skips and faults as
asking each plugin object every cycle, and a framework whose plugin list is replaced runs the new list."""

from __future__ import annotations

from typing import Any

import pytest

from pysched.framework.cycle_state import CycleState
from pysched.framework.runtime import Framework
from pysched.framework.status import Code, Status


class _Plugin:
    def __init__(self, name: str, st: Status | None, raises: bool = False) -> None:
        self.name = name
        self.st = st
        self.raises = raises
        self.calls = 0

    def pre_filter(self, state: Any, pod: Any, nodes: Any) -> tuple[None, Status | None]:
        self.calls += 1
        if self.raises:
            raise ValueError("boom")
        return None, self.st

    def pre_score(self, state: Any, pod: Any, nodes: Any) -> Status | None:
        self.calls += 1
        if self.raises:
            raise ValueError("boom")
        return self.st


class _Pod:
    key = "default/p"


def _framework(point: str, plugins: list[_Plugin]) -> Framework:
    fwk = Framework.__new__(Framework)
    setattr(fwk, point, plugins)
    return fwk


@pytest.mark.parametrize(("statuses", "skipped", "error"), [
    ([None, None], [], None),
    ([Status(Code.Skip), None], ["a"], None),
    ([Status(Code.Skip), Status(Code.Skip)], ["a", "b"], None),
    ([None, Status(Code.Error, error="bad")], [], 'running PreScore plugin "b": bad'),
    ([None, "raise"], [], "plugin b raised in PreScore for pod default/p: ValueError: boom"),
], ids=["none", "one-skips", "both-skip", "error", "raises"])
def test_pre_score_calls(statuses: list[Any], skipped: list[str], error: str | None) -> None:
    plugins = [_Plugin(name, None if st == "raise" else st, st == "raise") for name, st in zip("ab", statuses, strict=True)]
    fwk = _framework("pre_score", plugins)
    for _ in range(2):  # (the second cycle through the kept calls)
        state = CycleState()
        st = fwk.run_pre_score(state, _Pod(), [])  # type: ignore[arg-type]
        assert sorted(state.skip_score_plugins) == skipped
        assert (st.message() if st is not None else None) == error
    assert [p.calls for p in plugins] == [2, 2]
    other = _Plugin("c", Status(Code.Skip))
    fwk.pre_score = [other]  # type: ignore[list-item]
    state = CycleState()
    assert fwk.run_pre_score(state, _Pod(), []) is None  # type: ignore[arg-type]
    assert state.skip_score_plugins == {"c"} and other.calls == 1


@pytest.mark.parametrize(("statuses", "skipped", "code", "message"), [
    ([None, None], [], None, None),
    ([Status(Code.Skip), None], ["a"], None, None),
    ([Status(Code.Unschedulable, "no"), Status(Code.Skip)], ["b"], Code.Unschedulable, "no"),
    ([Status(Code.UnschedulableAndUnresolvable, "never"), None], [], Code.UnschedulableAndUnresolvable, "never"),
    ([None, Status(Code.Error, error="bad")], [], Code.Error, 'running PreFilter plugin "b": bad'),
    ([None, "raise"], [], Code.Error, "plugin b raised in PreFilter for pod default/p: ValueError: boom"),
], ids=["none", "one-skips", "unschedulable-remembered", "unresolvable", "error", "raises"])
def test_pre_filter_calls(statuses: list[Any], skipped: list[str], code: Code | None, message: str | None) -> None:
    plugins = [_Plugin(name, None if st == "raise" else st, st == "raise") for name, st in zip("ab", statuses, strict=True)]
    fwk = _framework("pre_filter", plugins)
    for _ in range(2):
        state = CycleState()
        result, st, returned = fwk.run_pre_filter(state, _Pod(), [])  # type: ignore[arg-type]
        assert result is None and returned == []
        assert sorted(state.skip_filter_plugins) == skipped
        assert (st.code if st is not None else None) == code
        assert (st.message() if st is not None else None) == message
        if st is not None:
            assert st.plugin in ("a", "b")
    other = _Plugin("c", Status(Code.Skip))
    fwk.pre_filter = [other]  # type: ignore[list-item]
    state = CycleState()
    assert fwk.run_pre_filter(state, _Pod(), [])[1] is None  # type: ignore[arg-type]
    assert state.skip_filter_plugins == {"c"} and other.calls == 1


def test_shared_pre_score_skip_is_only_read() -> None:
    """VolumeBinding's PreScore returns the shared Skip (``PRE_SCORE_SKIP``): the framework records the
    skip and leaves the shared object as it is."""
    from pysched.framework.status import PRE_SCORE_SKIP
    from pysched.plugins.volumebinding import VolumeBinding

    plugin = VolumeBinding.__new__(VolumeBinding)
    assert plugin.pre_score(CycleState(), _Pod(), []) is PRE_SCORE_SKIP  # type: ignore[arg-type]
    fwk = _framework("pre_score", [plugin])  # type: ignore[list-item]
    state = CycleState()
    assert fwk.run_pre_score(state, _Pod(), []) is None  # type: ignore[arg-type]
    assert state.skip_score_plugins == {plugin.name}
    assert PRE_SCORE_SKIP.code == Code.Skip and PRE_SCORE_SKIP.plugin == "" and PRE_SCORE_SKIP.reasons == []
