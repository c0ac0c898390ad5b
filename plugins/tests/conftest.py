"""Helpers for the example plugins' tests: the plugins are loaded from this folder's parent exactly as
``pysched simulate --plugin-dir plugins`` loads them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from pysched.framework.config import build_config
from pysched.framework.discovery import build_registry
from pysched.framework.registry import Registry
from pysched.plugins import in_tree_registry
from pysched.scheduler.simulation import Simulation, SimulationOptions, SimulationResult
from pysched.scheduler.trace import CycleTrace
from pysched.snapshot.loader import Document, build_cluster

PLUGINS = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def registry() -> Registry:
    return build_registry([str(PLUGINS)], include_repo_plugins=False, include_entry_points=False,
                          base=in_tree_registry())


def node(name: str, cpu: str = "1", labels: dict[str, str] | None = None) -> dict:
    alloc = {"cpu": cpu, "memory": "4Gi", "pods": "10"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "status": {"allocatable": alloc}}


def pod(name: str, cpu: str = "1", created: int = 0, priority: int = 0, labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None, gates: list[str] | None = None) -> dict:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "img", "resources": {"requests": {"cpu": cpu}}}],
                            "priority": priority}
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}",
                            "creationTimestamp": f"2026-01-01T00:{created // 60:02d}:{created % 60:02d}Z"}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Pending"}}


def config(text: str, registry: Registry) -> Any:
    raw = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           **(yaml.safe_load(text) or {})}
    return build_config(raw, registry)


def simulate(objs: list[dict], cfg: Any, registry: Registry, **opts: Any) -> SimulationResult:
    cluster = build_cluster([(Document("test", i + 1, o), o, "") for i, o in enumerate(objs)])
    return Simulation(cluster, cfg, registry, SimulationOptions(trace=True, **opts)).run()


def cycles_of(result: SimulationResult, pod_key: str) -> list[CycleTrace]:
    return [c for c in result.cycles if c.pod == pod_key]
