"""PrioritySort: higher priority first, then the earlier queue timestamp."""

from __future__ import annotations

from collections.abc import Callable

from pysched.framework.interface import Handle, QueuedPodInfo, QueueSortPlugin

NAME = "PrioritySort"


class PrioritySort(QueueSortPlugin):
    NAME = NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        p1 = a.pod.priority
        p2 = b.pod.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)

    def sort_key(self, a: QueuedPodInfo) -> tuple[int, float]:
        """A key ordering the queue as ``less`` does (ties left to the caller)."""
        return -a.pod.priority, a.timestamp


def sort_key_of(plugin: object) -> Callable[[QueuedPodInfo], tuple[int, float]] | None:
    """PrioritySort's key, unless ``plugin`` is another QueueSort (or one overriding ``less``)."""
    if isinstance(plugin, PrioritySort) and type(plugin).less is PrioritySort.less \
            and type(plugin).sort_key is PrioritySort.sort_key:
        return plugin.sort_key
    return None


PLUGIN = PrioritySort


def factory(args: None, handle: Handle) -> PrioritySort:
    return PrioritySort()
