"""FIFOSort: pods are tried oldest first, whatever their priority; one queue sort for every profile."""

from __future__ import annotations

import pytest
from conftest import config, node, pod, simulate

from pysched.errors import ConfigError
from pysched.framework.registry import Registry

FIFO = """
profiles:
- schedulerName: default-scheduler
  plugins:
    queueSort:
      enabled: [{name: FIFOSort}]
      disabled: [{name: "*"}]
"""

PODS = [pod("young-important", priority=1000, created=30), pod("old", created=10), pod("middle", created=20),
        pod("same-time", created=10)]


def test_fifo_ignores_priority(registry: Registry) -> None:
    result = simulate([node("n1", cpu="8"), *PODS], config(FIFO, registry), registry)
    assert [c.pod for c in result.cycles] == ["default/old", "default/same-time", "default/middle",
                                              "default/young-important"]


def test_priority_sort_is_the_default(registry: Registry) -> None:
    result = simulate([node("n1", cpu="8"), *PODS], config("", registry), registry)
    assert result.cycles[0].pod == "default/young-important"


def test_fifo_decides_who_gets_the_last_room(registry: Registry) -> None:
    objs = [node("n1", cpu="1"), pod("late-but-important", priority=1000, created=5), pod("early", created=1)]
    result = simulate(objs, config(FIFO, registry), registry, passes=1)
    first = result.cycles[0]
    assert (first.pod, first.outcome, first.node) == ("default/early", "Scheduled", "n1")


def test_every_profile_must_use_it(registry: Registry) -> None:
    two = FIFO + "- schedulerName: other\n"
    with pytest.raises(ConfigError, match="queueSort"):
        config(two, registry)
    both = two + '  plugins:\n    queueSort:\n      enabled: [{name: FIFOSort}]\n      disabled: [{name: "*"}]\n'
    assert [p.enabled("queueSort")[0].name for p in config(both, registry).profiles] == ["FIFOSort", "FIFOSort"]


def test_only_one_queue_sort(registry: Registry) -> None:
    with pytest.raises(ConfigError, match="only one queue sort plugin"):
        config("profiles: [{plugins: {queueSort: {enabled: [{name: FIFOSort}]}}}]", registry)
