"""Why preemption chose its node: the dry run's candidates compared by DefaultPreemption's own ordered
criteria (``defaultpreemption.CANDIDATE_CRITERIA``, defined once and used by the plugin too)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pysched.lazyclass import dataclass
from pysched.plugins.defaultpreemption import CANDIDATE_CRITERIA, PreemptionDetails, candidate_key
from pysched.scheduler.explain.checks import plugin_reason

PREEMPTION_CRITERIA = CANDIDATE_CRITERIA  # the plugin's own list, in its order


@dataclass(slots=True)
class CandidateSummary:
    node: str
    victims: list[tuple[str, int]]  # (pod, priority), most important first
    pdb_violations: int
    top_priority: int
    priority_sum: int
    chosen: bool = False


@dataclass(slots=True)
class PreemptionReasoning:
    potential_nodes: int
    candidates: list[CandidateSummary]  # in dry-run order
    chosen: str
    runner_up: str | None
    decided_by: str  # the first criterion that put the chosen node ahead of the runner-up
    rejected: list[tuple[str, int]]  # why other nodes were no candidates: (reason, nodes)

    def to_dict(self) -> dict:
        return {"potential_nodes": self.potential_nodes, "chosen": self.chosen or None,
                "runner_up": self.runner_up, "decided_by": self.decided_by,
                "candidates": [{"node": c.node, "victims": [{"pod": p, "priority": pr} for p, pr in c.victims],
                                "pdb_violations": c.pdb_violations, "chosen": c.chosen} for c in self.candidates],
                "rejected": [{"reason": r, "nodes": n} for r, n in self.rejected]}


def preemption_reasoning(details: PreemptionDetails) -> PreemptionReasoning:
    """Why the dry run chose its node: upstream's ordered criteria, compared with the best other candidate."""
    def keys(c: Any) -> tuple[float, ...]:
        return candidate_key(c, details.bound_here)

    cands = []
    for c in details.candidates:
        top = c.victims[0].priority if c.victims else 0
        cands.append(CandidateSummary(c.node, [(v.key, v.priority) for v in c.victims], c.num_pdb_violations, top,
                                      sum(v.priority for v in c.victims), c.node == details.chosen))
    why = Counter(plugin_reason(st) for st in details.node_statuses.values())
    rejected = sorted(why.items(), key=lambda kv: (-kv[1], kv[0]))
    chosen = next((c for c in details.candidates if c.node == details.chosen), None)
    runner_up, decided_by = None, ""
    if chosen is not None:
        best_level = -1
        ck = keys(chosen)
        for c in details.candidates:
            if c is chosen:
                continue
            k = keys(c)
            level = next((i for i in range(len(ck)) if ck[i] != k[i]), len(ck))
            if level > best_level or (level == best_level and runner_up is not None and c.node < runner_up):
                best_level, runner_up = level, c.node
        if runner_up is None:
            decided_by = "the only candidate"
        elif best_level < len(PREEMPTION_CRITERIA):
            decided_by = PREEMPTION_CRITERIA[best_level]
        else:
            decided_by = "a tie on every criterion, broken " + (
                "by the smallest node name" if details.chosen == min(details.tied or [details.chosen])
                else "at random")
    return PreemptionReasoning(len(details.potential_nodes), cands, details.chosen, runner_up, decided_by, rejected)
