"""NodePorts: the pod's host ports must be free on the node."""

from __future__ import annotations

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import FilterPlugin, Handle, PreFilterPlugin, PreFilterResult
from pysched.framework.status import PRE_FILTER_SKIP, Status
from pysched.framework.whatif import PORTS, Change, Eviction, WhatIfContext, WhatIfPlugin
from pysched.model.objects import HostPort, Pod
from pysched.snapshot.nodeinfo import ZERO_IP, NodeInfo

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


def ports_clash(a: HostPort, b: HostPort) -> bool:
    """Whether two host ports collide (same protocol and port, overlapping IPs; 0.0.0.0 overlaps all)."""
    if (a.protocol or "TCP") != (b.protocol or "TCP") or a.port != b.port:
        return False
    ia, ib = a.ip or ZERO_IP, b.ip or ZERO_IP
    return ia == ZERO_IP or ib == ZERO_IP or ia == ib


class NodePorts(PreFilterPlugin, FilterPlugin, WhatIfPlugin):
    NAME = NAME

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        # host_ports: sidecar init containers then containers, hostPort > 0 (hostNetwork: containerPort).
        if not pod.host_ports:
            return None, PRE_FILTER_SKIP
        state.write(PRE_FILTER_STATE_KEY, list(pod.host_ports))
        return None, None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        want = state.read(PRE_FILTER_STATE_KEY)
        if want is None:
            return Status.as_error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if not fits_ports(want, node):
            return Status.unschedulable(ERR_REASON)
        return None

    def what_would_fit(self, state: CycleState, pod: Pod, node: NodeInfo, status: Status,
                       ctx: WhatIfContext | None = None) -> Change:
        """Evict the running pods that hold the ports the pod wants."""
        running = ctx.node(node.name) if ctx is not None else node  # nominated pods are not on the node
        ports = []
        holders: dict[str, Pod] = {}
        for hp in pod.host_ports:
            if not running.port_conflict(hp):
                continue
            held_by = [p for p in running.pods if any(ports_clash(hp, q) for q in p.host_ports)]
            ports.append({"protocol": hp.protocol or "TCP", "port": hp.port, "ip": hp.ip or ZERO_IP,
                          "held_by": [p.key for p in held_by]})
            for p in held_by:
                holders.setdefault(p.key, p)
        return Change(NAME, PORTS, status.message(), details={"ports": ports},
                      evict=[Eviction(p.key, node.name, p.priority, p)
                             for p in sorted(holders.values(), key=lambda p: p.key)])


PLUGIN = NodePorts


def factory(args: None, handle: Handle) -> NodePorts:
    return NodePorts()
