"""The scheduler: queue, one scheduling cycle, preemption outcome, binding, the whole simulation."""
