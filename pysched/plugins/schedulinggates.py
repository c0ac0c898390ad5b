"""SchedulingGates: a pod with scheduling gates never enters the active queue."""

from __future__ import annotations

from pysched.framework.interface import Handle, PreEnqueuePlugin
from pysched.framework.status import Status
from pysched.model.objects import Pod

NAME = "SchedulingGates"


def gates_reason(gates: list[str]) -> str:
    # Go prints a []string with %v as "[a b c]".
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


class SchedulingGates(PreEnqueuePlugin):
    NAME = NAME

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.scheduling_gates:
            return None
        return Status.unresolvable(gates_reason(pod.scheduling_gates))


PLUGIN = SchedulingGates


def factory(args: None, handle: Handle) -> SchedulingGates:
    return SchedulingGates()
