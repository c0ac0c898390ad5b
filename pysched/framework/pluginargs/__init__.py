"""Typed arguments of the in-tree plugins, one module per plugin as upstream's ``types_pluginargs.go``,
``v1/defaults.go`` and ``validation_pluginargs.go`` hold them: each module has the plugin's args dataclass
and its ``parse_*_args(raw, path) -> (args, validation errors)`` (strict decoding errors raise at once,
with upstream's ``decoding args for plugin X:`` prefix; validation errors are returned, so that the whole
configuration's problems are reported together).

A new in-tree plugin with args: a module here and one line in ``PARSERS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pysched.apimachinery import raise_all
from pysched.errors import ConfigError
from pysched.framework.pluginargs import (
    balancedallocation,
    defaultpreemption,
    dynamicresources,
    interpodaffinity,
    nodeaffinity,
    noderesourcesfit,
    podtopologyspread,
    volumebinding,
)

ArgsParser = Callable[[Mapping[str, Any] | None, str], tuple[Any, list[ConfigError]]]

#: plugin name -> decode + default, returning (args, validation errors); decoding errors are raised
PARSERS: dict[str, ArgsParser] = {
    "NodeResourcesFit": noderesourcesfit.parse_node_resources_fit_args,
    "NodeResourcesBalancedAllocation": balancedallocation.parse_balanced_allocation_args,
    "InterPodAffinity": interpodaffinity.parse_inter_pod_affinity_args,
    "PodTopologySpread": podtopologyspread.parse_pod_topology_spread_args,
    "NodeAffinity": nodeaffinity.parse_node_affinity_args,
    "DefaultPreemption": defaultpreemption.parse_default_preemption_args,
    "VolumeBinding": volumebinding.parse_volume_binding_args,
    "DynamicResources": dynamicresources.parse_dynamic_resources_args,
}


def _raising(parse: ArgsParser) -> Callable[[Mapping[str, Any] | None, str], Any]:
    def decode(raw: Mapping[str, Any] | None, path: str = "") -> Any:
        args, errs = parse(raw, path)
        raise_all(errs)
        return args
    return decode


#: plugin name -> decode + default + validate (raises ConfigError)
DECODERS: dict[str, Callable[[Mapping[str, Any] | None, str], Any]] = {
    name: _raising(parse) for name, parse in PARSERS.items()}
