"""InterPodAffinityArgs: types, v1 defaults and validation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pysched.apimachinery import (
    child,
    get_bool,
    get_int,
    invalid,
)
from pysched.errors import ConfigError
from pysched.framework.pluginargs.common import args_body, decoding
from pysched.lazyclass import dataclass


@dataclass(slots=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


def parse_inter_pod_affinity_args(raw: Mapping[str, Any] | None,
                                  path: str) -> tuple[InterPodAffinityArgs, list[ConfigError]]:
    name = "InterPodAffinity"
    with decoding(name):
        body = args_body(raw, name, ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"), path)
        weight = get_int(body, "hardPodAffinityWeight", path)
        ignore = get_bool(body, "ignorePreferredTermsOfExistingPods", path) or False
    weight = 1 if weight is None else weight
    errs = []
    if not 0 <= weight <= 100:
        errs.append(invalid(child(path, "hardPodAffinityWeight"), weight, "not in valid range [0, 100]"))
    return InterPodAffinityArgs(weight, ignore), errs
