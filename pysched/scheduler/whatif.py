"""Moved: the explain package (``pysched.scheduler.explain``) and, for each Filter plugin, its own
``what_would_fit`` beside it. The old names stay importable from here for code written against 0.1."""

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
    requirement_text as requirement_text,
    selector_text as selector_text,
    taint_dict as taint_dict,
    toleration_dict as toleration_dict,
)
from pysched.plugins.nodeports import ports_clash as ports_clash
from pysched.plugins.noderesources.fit import smallest_eviction as smallest_eviction
from pysched.scheduler.explain import (
    NEAREST as NEAREST,
    PREEMPTION_CRITERIA as PREEMPTION_CRITERIA,
    CandidateSummary as CandidateSummary,
    Explanation as Explanation,
    NodeSuggestion as NodeSuggestion,
    PreemptionReasoning as PreemptionReasoning,
    WhatIf as WhatIf,
    compute_whatif as compute_whatif,
    explain_pod as explain_pod,
    filter_verdicts as filter_verdicts,
    modified_node as modified_node,
    preemption_reasoning as preemption_reasoning,
)
