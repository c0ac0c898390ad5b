"""A Filter plugin, in-tree or out-of-tree, proposes its own what-if (``WhatIfPlugin``): explain asks it,
checks the change by running the filters again, and reports it like the built-in ones."""

from __future__ import annotations

import textwrap
from pathlib import Path

import yaml

from pysched.framework.config import load_config
from pysched.framework.discovery import build_registry
from pysched.framework.whatif import OTHER
from pysched.plugins import in_tree_registry
from pysched.scheduler.whatif import explain_pod
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


def _explain(tmp_path: Path, enabled: list[str]):
    plugin_dir = tmp_path / "plugins"
    plugin_dir.mkdir()
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
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
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
