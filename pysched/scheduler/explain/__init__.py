"""Explain one pod: the run up to its last cycle (``run``), what would make it fit (``suggestions``, asking
each failing Filter plugin's ``WhatIfPlugin.what_would_fit``), the re-checks behind every suggestion
(``checks``), and why preemption chose its node (``preemption``)."""

from pysched.framework.whatif import (
    DEVICES as DEVICES,
    INTER_POD as INTER_POD,
    NODE_AFFINITY as NODE_AFFINITY,
    OTHER as OTHER,
    PORTS as PORTS,
    RESOURCES as RESOURCES,
    SPREAD as SPREAD,
    TAINTS as TAINTS,
    UNSCHEDULABLE as UNSCHEDULABLE,
    Change as Change,
    Eviction as Eviction,
)
from pysched.scheduler.explain.checks import (
    filter_verdicts as filter_verdicts,
    modified_node as modified_node,
)
from pysched.scheduler.explain.preemption import (
    PREEMPTION_CRITERIA as PREEMPTION_CRITERIA,
    CandidateSummary as CandidateSummary,
    PreemptionReasoning as PreemptionReasoning,
    preemption_reasoning as preemption_reasoning,
)
from pysched.scheduler.explain.run import Explanation as Explanation, explain_pod as explain_pod
from pysched.scheduler.explain.suggestions import (
    NEAREST as NEAREST,
    NodeSuggestion as NodeSuggestion,
    WhatIf as WhatIf,
    compute_whatif as compute_whatif,
)
