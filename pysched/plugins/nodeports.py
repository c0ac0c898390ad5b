"""NodePorts: the pod's host ports must be free on the node."""

from __future__ import annotations

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import FilterPlugin, Handle, PreFilterPlugin, PreFilterResult
from pysched.framework.status import Code, Status
from pysched.model.objects import HostPort, Pod
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "NodePorts"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


def fits_ports(want: list[HostPort], node: NodeInfo) -> bool:
    """No wanted (ip, protocol, port) clashes with a port in use (0.0.0.0 clashes with every IP)."""
    for hp in want:
        if node.port_conflict(hp):
            return False
    return True


def fits(pod: Pod, node: NodeInfo) -> bool:
    return fits_ports(pod.host_ports, node)


class NodePorts(PreFilterPlugin, FilterPlugin):
    NAME = NAME

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        # host_ports: sidecar init containers then containers, hostPort > 0 (hostNetwork: containerPort).
        if not pod.host_ports:
            return None, Status(Code.Skip)
        state.write(PRE_FILTER_STATE_KEY, list(pod.host_ports))
        return None, None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        want = state.read(PRE_FILTER_STATE_KEY)
        if want is None:
            return Status.as_error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if not fits_ports(want, node):
            return Status.unschedulable(ERR_REASON)
        return None


PLUGIN = NodePorts


def factory(args: None, handle: Handle) -> NodePorts:
    return NodePorts()
