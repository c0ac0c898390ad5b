"""DefaultPreemptionArgs: types, v1 defaults and validation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pysched.apimachinery import (
    child,
    get_int,
    invalid,
)
from pysched.errors import ConfigError
from pysched.framework.pluginargs.common import args_body, decoding
from pysched.lazyclass import dataclass


@dataclass(slots=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


def parse_default_preemption_args(raw: Mapping[str, Any] | None,
                                  path: str) -> tuple[DefaultPreemptionArgs, list[ConfigError]]:
    name = "DefaultPreemption"
    with decoding(name):
        body = args_body(raw, name, ("minCandidateNodesPercentage", "minCandidateNodesAbsolute"), path)
        pct = get_int(body, "minCandidateNodesPercentage", path)
        absolute = get_int(body, "minCandidateNodesAbsolute", path)
    pct = 10 if pct is None else pct
    absolute = 100 if absolute is None else absolute
    ppath, apath = child(path, "minCandidateNodesPercentage"), child(path, "minCandidateNodesAbsolute")
    errs = []
    if not 0 <= pct <= 100:
        errs.append(invalid(ppath, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(invalid(apath, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(invalid(ppath, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(invalid(apath, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
    return DefaultPreemptionArgs(pct, absolute), errs
