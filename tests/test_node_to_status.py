"""NodeToStatus.defer: the batched Filter's rejected statuses are filled in when first read, and nothing a
reader sees (count, content, order) differs from filling them at once."""

from __future__ import annotations

from collections.abc import Callable

from pysched.framework.interface import NodeToStatus
from pysched.framework.status import Status


def _fill(calls: list[int], names: list[str]) -> Callable[[dict[str, Status]], None]:
    def fill(into: dict[str, Status]) -> None:
        calls.append(1)
        into.update((n, Status.unschedulable(f"no {n}")) for n in names)
    return fill


def test_deferred_statuses_count_at_once_and_fill_on_first_read() -> None:
    calls: list[int] = []
    s = NodeToStatus()
    s.defer(2, _fill(calls, ["a", "b"]))
    assert len(s) == 2 and calls == []
    assert s.get("b").reasons == ["no b"] and calls == [1]
    assert list(s.statuses) == ["a", "b"] and len(s) == 2
    assert s.get("zz") is s.absent and calls == [1]  # filled once


def test_defer_onto_a_non_empty_map_fills_at_once_in_order() -> None:
    calls: list[int] = []
    s = NodeToStatus()
    s.set("n0", Status.unresolvable("nominated node"))
    s.defer(2, _fill(calls, ["a", "n0"]))  # a node already there is overwritten, counted once
    assert calls == [1]
    assert list(s.statuses) == ["n0", "a"] and len(s) == 2
    assert s.get("n0").reasons == ["no n0"]


def test_set_after_defer_keeps_the_order_of_eager_filling() -> None:
    s = NodeToStatus()
    s.defer(1, _fill([], ["a"]))
    s.set("b", Status.unschedulable("x"))
    assert list(s.statuses) == ["a", "b"] and len(s) == 2
