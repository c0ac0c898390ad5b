"""Admission of pods the simulation creates, for other commands (``pysched capacity``) that make copies of
a pod template: ``SetDefaults_Pod``, then the namespace's LimitRanges (defaults and validation), as
``pysched.snapshot.admission`` does for the controllers' pods."""

from __future__ import annotations

import copy

from pysched.errors import InputError
from pysched.snapshot.admission import apply_limit_ranges, set_pod_defaults, validate_resources
from pysched.snapshot.cluster import Cluster


def admit_template_spec(spec: dict, namespace: str, cluster: Cluster) -> dict:
    """The pod spec as the API server would store it (a new dict; ``spec`` is not changed); ``InputError``
    when a LimitRange or the request/limit validation rejects it."""
    raw = {"metadata": {"namespace": namespace}, "spec": copy.deepcopy(spec)}
    set_pod_defaults(raw)
    ranges = [lr for lr in cluster.limit_ranges if lr.namespace == namespace]
    apply_limit_ranges(raw, ranges)
    problems = validate_resources(raw, ranges)
    if problems:
        raise InputError(f"forbidden: [{', '.join(problems)}]")
    return raw["spec"]
