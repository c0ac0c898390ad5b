"""A registry of stand-ins for the in-tree plugins: right names and extension points, no behaviour.

The extension points follow the interfaces each upstream plugin implements (v1.34 source), so config
tests do not depend on the real plugin modules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pysched.framework.interface import EXTENSION_POINTS, Handle, Plugin
from pysched.framework.plugin_args import DECODERS
from pysched.framework.registry import PluginSpec, Registry

#: upstream plugin name -> the extension points it implements
IN_TREE_POINTS: dict[str, tuple[str, ...]] = {
    "SchedulingGates": ("preEnqueue",),
    "PrioritySort": ("queueSort",),
    "NodeUnschedulable": ("filter",),
    "NodeName": ("filter",),
    "TaintToleration": ("filter", "preScore", "score"),
    "NodeAffinity": ("preFilter", "filter", "preScore", "score"),
    "NodePorts": ("preFilter", "filter"),
    "NodeResourcesFit": ("preFilter", "filter", "preScore", "score"),
    "VolumeRestrictions": ("preFilter", "filter"),
    "NodeVolumeLimits": ("preFilter", "filter"),
    "VolumeBinding": ("preFilter", "filter", "reserve", "preBind", "preScore", "score"),
    "VolumeZone": ("preFilter", "filter"),
    "PodTopologySpread": ("preFilter", "filter", "preScore", "score"),
    "InterPodAffinity": ("preFilter", "filter", "preScore", "score"),
    "DynamicResources": ("preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"),
    "DefaultPreemption": ("preEnqueue", "postFilter"),
    "NodeResourcesBalancedAllocation": ("preScore", "score"),
    "ImageLocality": ("score",),
    "DefaultBinder": ("bind",),
}


def fake_plugin_class(name: str, points: Iterable[str]) -> type[Plugin]:
    """A concrete class named ``name`` inheriting the ABC of every given point (methods are stubs)."""
    bases = tuple(EXTENSION_POINTS[p] for p in points) or (Plugin,)
    cls = type(name, bases, {"NAME": name})
    cls.__abstractmethods__ = frozenset()  # type: ignore[attr-defined]
    return cls


def _factory(cls: type[Plugin]) -> Callable[[Any, Handle], Plugin]:
    def make(args: Any, handle: Handle) -> Plugin:
        plugin = cls()
        plugin.args = args  # type: ignore[attr-defined]
        return plugin
    return make


def _decoder(name: str) -> Callable[[Mapping[str, Any] | None], Any] | None:
    decode = DECODERS.get(name)
    if decode is None:
        return None
    return lambda raw: decode(raw, "args")


def fake_spec(name: str, points: Iterable[str], source: str = "in-tree",
              decoder: Callable[[Mapping[str, Any] | None], Any] | None = None) -> PluginSpec:
    cls = fake_plugin_class(name, points)
    return PluginSpec(name, cls, _factory(cls), decoder if decoder is not None else _decoder(name), source)


def fake_registry(extra: Iterable[PluginSpec] = ()) -> Registry:
    """Every in-tree plugin as a stand-in, plus ``extra`` (out-of-tree) specs."""
    registry = Registry()
    for name, points in IN_TREE_POINTS.items():
        registry.register(fake_spec(name, points))
    for spec in extra:
        registry.register(spec)
    return registry
