"""A Filter plugin, in-tree or out-of-tree, proposes its own what-if (``WhatIfPlugin``): explain asks it,
checks the change by running the filters again, and reports it like the built-in ones."""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from pysched.framework.config import load_config
from pysched.framework.discovery import build_registry
from pysched.framework.interface import FilterPlugin
from pysched.framework.whatif import (
    INTER_POD,
    NODE_AFFINITY,
    OTHER,
    PORTS,
    RESOURCES,
    SPREAD,
    TAINTS,
    UNSCHEDULABLE,
    WhatIfPlugin,
)
from pysched.plugins import in_tree_registry
from pysched.scheduler.explain import explain_pod
from pysched.snapshot.loader import load_snapshot

PLUGINS = textwrap.dedent('''
    from pysched.framework.interface import FilterPlugin
    from pysched.framework.status import Status
    from pysched.framework.whatif import Change, WhatIfPlugin


    class NeedsLabel(FilterPlugin, WhatIfPlugin):
        NAME = "NeedsLabel"

        def filter(self, state, pod, node):
            return None if node.node.labels.get("ok") == "yes" else Status.unschedulable("node lacks ok=yes")

        def what_would_fit(self, state, pod, node, status):
            return Change(self.NAME, "labels", "", details={"label": "ok"}, set_labels={"ok": "yes"})


    class Broken(FilterPlugin, WhatIfPlugin):
        NAME = "Broken"

        def filter(self, state, pod, node):
            return Status.unschedulable("never")

        def what_would_fit(self, state, pod, node, status):
            raise RuntimeError("no idea")
''')


def _explain(tmp_path: Path, enabled: list[str], files: dict[str, str] | None = None,
             labels: dict[str, str] | None = None):
    plugin_dir = tmp_path / "plugins"
    plugin_dir.mkdir()
    for name, text in (files or {}).items():
        (plugin_dir / name).write_text(text)
    (plugin_dir / "needs_label.py").write_text(PLUGINS + "\n\n" + "NAME = 'NeedsLabel'\nPLUGIN = NeedsLabel\n\n\n"
                                               "def factory(args, handle):\n    return NeedsLabel()\n")
    (plugin_dir / "broken.py").write_text(PLUGINS + "\n\n" + "NAME = 'Broken'\nPLUGIN = Broken\n\n\n"
                                          "def factory(args, handle):\n    return Broken()\n")
    registry = build_registry([str(plugin_dir)], include_repo_plugins=False, include_entry_points=False,
                              base=in_tree_registry())
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"filter": {"enabled": [{"name": n} for n in enabled]}}}]}))
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1", **(labels or {})}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    snap = tmp_path / "snap.yaml"
    snap.write_text(yaml.safe_dump_all([node, pod]))
    return explain_pod(load_snapshot([str(snap)]), load_config(str(config), registry), registry, "default/p")


def test_out_of_tree_plugin_proposes_a_checked_change(tmp_path: Path) -> None:
    e = _explain(tmp_path, ["NeedsLabel"])
    assert e.whatif is not None
    [suggestion] = e.whatif.suggestions
    [change] = suggestion.changes
    assert (change.plugin, change.kind, change.set_labels) == ("NeedsLabel", "labels", {"ok": "yes"})
    assert change.reason == "node lacks ok=yes"
    assert change.checked and change.flips
    assert suggestion.fits_after


def test_a_what_if_that_raises_is_reported_not_fatal(tmp_path: Path) -> None:
    e = _explain(tmp_path, ["Broken"])
    assert e.whatif is not None
    [change] = e.whatif.suggestions[0].changes
    assert (change.plugin, change.kind, change.has_modification) == ("Broken", OTHER, False)
    assert change.details == {"what_if_error": "RuntimeError: no idea"}


def test_the_readme_example_proposes_a_checked_change(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parent.parent / "plugins" / "README.md").read_text()
    example = next(block.split("```", 1)[0] for block in readme.split("```python")[1:] if "NoSpotNodes" in block)
    e = _explain(tmp_path, ["NoSpotNodes"], {"nospot.py": example}, {"example.com/spot": "true"})
    assert e.whatif is not None
    [suggestion] = e.whatif.suggestions
    [change] = suggestion.changes
    assert (change.plugin, change.remove_labels, change.reason) == (
        "NoSpotNodes", ["example.com/spot"], "node(s) are spot instances")
    assert change.checked and change.flips and suggestion.fits_after


# ---------------------------------------------------------------------------------------------- in-tree plugins
def _in_tree_cases() -> list[tuple[str, str, Callable[[], tuple[list[dict], list[dict], dict]]]]:
    """(plugin, kind, scenario in which the plugin rejects the pending pod on n1)."""
    from tests.test_whatif import HOST, SPREAD_ZONE, _anti, node, pod

    return [
        ("NodeResourcesFit", RESOURCES, lambda: ([node("n1", cpu="2")], [pod("a", "n1", "2")], pod("new", cpu="1"))),
        ("TaintToleration", TAINTS, lambda: (
            [node("n1", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])], [], pod("new"))),
        ("NodeUnschedulable", UNSCHEDULABLE, lambda: ([node("n1", unschedulable=True)], [], pod("new"))),
        ("NodeAffinity", NODE_AFFINITY, lambda: ([node("n1")], [], pod("new", nodeSelector={"disk": "ssd"}))),
        ("NodePorts", PORTS, lambda: ([node("n1")], [pod("a", "n1", ports=[{"containerPort": 80, "hostPort": 80}])],
                                       pod("new", ports=[{"containerPort": 80, "hostPort": 80}]))),
        ("PodTopologySpread", SPREAD, lambda: (
            [node("n1", zone="a"), node("n2", zone="b")],
            [pod("w1", "n1", labels={"app": "web"}), pod("w2", "n1", labels={"app": "web"})],
            pod("new", labels={"app": "web"}, topologySpreadConstraints=SPREAD_ZONE))),
        ("InterPodAffinity", INTER_POD, lambda: (
            [node("n1"), node("n2")], [pod("web-a", "n1", labels={"app": "web"})],
            pod("new", labels={"app": "web"}, affinity=_anti(HOST, app="web")))),
    ]


# DynamicResources' what-if (a diagnosis without modification) is exercised by tests/test_dra.py's explain cases.
WHAT_IF_ELSEWHERE = {"DynamicResources"}


def test_every_in_tree_filter_plugin_with_a_suggestion_is_covered() -> None:
    registry = in_tree_registry()
    with_method = {spec.name for spec in registry.specs()
                   if issubclass(spec.cls, FilterPlugin) and issubclass(spec.cls, WhatIfPlugin)}
    assert with_method == {name for name, _, _ in _in_tree_cases()} | WHAT_IF_ELSEWHERE


@pytest.mark.parametrize(("plugin", "kind", "scenario"), _in_tree_cases(), ids=[c[0] for c in _in_tree_cases()])
def test_in_tree_plugin_offers_its_suggestion_through_the_method(
        plugin: str, kind: str, scenario: Callable[[], tuple[list[dict], list[dict], dict]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_whatif import change_for, whatif

    spec = in_tree_registry().get(plugin)
    assert spec is not None
    cls = spec.cls
    original = cls.what_would_fit
    calls: list[str] = []

    def spy(self, state, pod, node, status, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(node.name)
        return original(self, state, pod, node, status, **kwargs)

    spy.__signature__ = inspect.signature(original)  # type: ignore[attr-defined]
    monkeypatch.setattr(cls, "what_would_fit", spy)
    change = change_for(whatif(*scenario()), "n1", plugin)
    assert "n1" in calls
    assert (change.plugin, change.kind) == (plugin, kind)
    assert change.has_modification and change.checked and change.flips, change


def test_explain_reads_no_plugin_privates_and_names_no_plugin() -> None:
    """The explain package asks plugins through ``WhatIfPlugin`` only: no switch on a plugin's name, no
    ``getattr`` on a plugin, no private name of a plugin module."""
    registry = in_tree_registry()
    names = set(registry.names())
    package = Path(__file__).resolve().parent.parent / "pysched" / "scheduler" / "explain"
    problems = []
    for path in sorted(package.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        plugin_modules = set()
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("pysched.plugins"):
                for a in n.names:
                    if a.name.startswith("_"):
                        problems.append(f"{path.name}:{n.lineno}: imports {n.module}.{a.name}")
                    plugin_modules.add(a.asname or a.name)
            elif isinstance(n, ast.Import):
                plugin_modules |= {a.asname or a.name for a in n.names if a.name.startswith("pysched.plugins")}
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and n.value in names:
                problems.append(f"{path.name}:{n.lineno}: names the plugin {n.value!r}")
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "getattr":
                problems.append(f"{path.name}:{n.lineno}: getattr")
            if isinstance(n, ast.Attribute) and n.attr.startswith("_") and not n.attr.startswith("__") \
                    and isinstance(n.value, ast.Name) and n.value.id in plugin_modules:
                problems.append(f"{path.name}:{n.lineno}: reads {n.value.id}.{n.attr}")
    assert not problems, problems
