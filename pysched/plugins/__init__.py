"""In-tree plugins, one module each, named as upstream; and the registry that holds them."""

from __future__ import annotations

import importlib

from pysched.framework.registry import Registry

# module path (relative to this package) of every in-tree plugin
IN_TREE_MODULES = (
    "schedulinggates",
    "queuesort",
    "nodeunschedulable",
    "nodename",
    "tainttoleration",
    "nodeaffinity",
    "nodeports",
    "noderesources.fit",
    "noderesources.balanced_allocation",
    "volumerestrictions",
    "nodevolumelimits",
    "volumebinding",
    "volumezone",
    "podtopologyspread",
    "interpodaffinity",
    "dynamicresources",
    "defaultpreemption",
    "imagelocality",
    "defaultbinder",
)


def in_tree_registry() -> Registry:
    reg = Registry()
    for mod in IN_TREE_MODULES:
        reg.register_module(importlib.import_module(f"{__name__}.{mod}"), source="in-tree")
    return reg
