"""DefaultBinder: binding succeeds; the scheduler itself places the pod into the in-memory cluster."""

from __future__ import annotations

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import BindPlugin, Handle
from pysched.framework.status import Status
from pysched.model.objects import Pod

NAME = "DefaultBinder"


class DefaultBinder(BindPlugin):
    NAME = NAME

    def __init__(self, handle: Handle | None = None) -> None:
        self.handle = handle

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        # Upstream posts a Binding to the API server; the simulation updates ClusterState after Bind.
        return None


PLUGIN = DefaultBinder


def factory(args: None, handle: Handle) -> DefaultBinder:
    return DefaultBinder(handle)
