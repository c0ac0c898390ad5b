"""LabelPreference: the avoid-label filter, the numeric-label score, and its argument checks."""

from __future__ import annotations

import pytest
from conftest import config, cycles_of, node, pod, simulate

from pysched.errors import ConfigError
from pysched.framework.registry import Registry

ENABLE = """
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: LabelPreference, weight: 5}]
  pluginConfig:
  - name: LabelPreference
    args: %s
"""

NODES = [node("old", cpu="4", labels={"example.com/generation": "3"}),
         node("new", cpu="4", labels={"example.com/generation": "7"}),
         node("mid", cpu="4", labels={"example.com/generation": "5"}),
         node("odd", cpu="4", labels={"example.com/generation": "n/a"}),
         node("down", cpu="4", labels={"example.com/generation": "9", "example.com/maintenance": ""})]


def test_filter_and_descending_score(registry: Registry) -> None:
    args = "{avoidLabels: [example.com/maintenance], scoreLabel: example.com/generation}"
    result = simulate([*NODES, pod("p")], config(ENABLE % args, registry), registry)
    [c] = cycles_of(result, "default/p")
    assert c.node == "new"
    assert c.filter["down"].reasons == ["node(s) had the avoided label example.com/maintenance"]
    assert c.filter["down"].code.name == "UnschedulableAndUnresolvable"
    weighted = {n: s["LabelPreference"] for n, s in c.scores.items()}
    assert weighted == {"old": 0, "new": 500, "mid": 250, "odd": 0}  # 0..100 over 3..7, weight 5


def test_ascending_order(registry: Registry) -> None:
    args = "{avoidLabels: [example.com/maintenance], scoreLabel: example.com/generation, order: Ascending}"
    result = simulate([*NODES, pod("p")], config(ENABLE % args, registry), registry)
    [c] = cycles_of(result, "default/p")
    assert c.node == "old"
    assert c.scores["old"]["LabelPreference"] == 500 and c.scores["odd"]["LabelPreference"] == 0


def test_every_node_avoided(registry: Registry) -> None:
    result = simulate([*NODES, pod("p")], config(ENABLE % "{avoidLabels: [example.com/generation]}", registry),
                      registry)
    c = cycles_of(result, "default/p")[0]
    assert c.outcome == "Unschedulable"
    assert c.message.startswith("0/5 nodes are available: 5 node(s) had the avoided label example.com/generation.")


def test_filter_only_skips_scoring(registry: Registry) -> None:
    result = simulate([*NODES, pod("p")], config(ENABLE % "{avoidLabels: [example.com/maintenance]}", registry),
                      registry)
    [c] = cycles_of(result, "default/p")
    assert c.outcome == "Scheduled" and c.node != "down"
    assert all("LabelPreference" not in per for per in c.scores.values())


@pytest.mark.parametrize(("args", "field", "text"), [
    ("{scoreLabel: example.com/x, colour: red}", ".args.colour", "unknown field"),
    ("{avoidLabels: [-bad-]}", ".args.avoidLabels[0]", "not a valid label key"),
    ("{avoidLabels: example.com/x}", ".args.avoidLabels", "must be a list"),
    ("{scoreLabel: example.com/x, order: Up}", ".args.order", "must be one of Descending, Ascending"),
    ("{}", ".args", "set avoidLabels, scoreLabel or both"),
])
def test_argument_errors(registry: Registry, args: str, field: str, text: str) -> None:
    with pytest.raises(ConfigError) as info:
        config(ENABLE % args, registry)
    assert info.value.field == "profiles[0].pluginConfig[0]" + field
    assert text in info.value.detail


def test_enabled_without_args(registry: Registry) -> None:
    with pytest.raises(ConfigError, match="LabelPreference needs arguments"):
        config("profiles: [{plugins: {filter: {enabled: [{name: LabelPreference}]}}}]", registry)
