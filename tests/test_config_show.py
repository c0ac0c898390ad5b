"""``pysched config show``: the effective configuration, defaults filled in, reads back to the same profiles."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from pysched.framework.config import load_config
from pysched.plugins import in_tree_registry
from tests.test_cli import ROOT, ok, run

BINPACK = str(ROOT / "fixtures" / "demo-config-binpack.yaml")


def test_defaults_are_filled_in() -> None:
    text = ok("config", "show")
    assert text.startswith("# Effective KubeSchedulerConfiguration")
    assert "#   podInitialBackoffSeconds: no clock" in text  # says what the simulation does not model
    cfg = yaml.safe_load(text)
    assert (cfg["apiVersion"], cfg["kind"]) == ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration")
    assert (cfg["parallelism"], cfg["percentageOfNodesToScore"], cfg["podInitialBackoffSeconds"],
            cfg["podMaxBackoffSeconds"]) == (16, 0, 1, 10)
    assert cfg["leaderElection"]["leaseDuration"] == "15s"
    (prof,) = cfg["profiles"]
    assert prof["schedulerName"] == "default-scheduler"
    score = {p["name"]: p["weight"] for p in prof["plugins"]["score"]["enabled"]}
    assert score["TaintToleration"] == 3 and score["PodTopologySpread"] == 2 and score["NodeResourcesFit"] == 1
    args = {a["name"]: a["args"] for a in prof["pluginConfig"]}
    assert args["NodeResourcesFit"]["scoringStrategy"]["type"] == "LeastAllocated"
    assert args["DefaultPreemption"] == {"apiVersion": "kubescheduler.config.k8s.io/v1",
                                         "kind": "DefaultPreemptionArgs", "minCandidateNodesAbsolute": 100,
                                         "minCandidateNodesPercentage": 10}
    assert args["PodTopologySpread"]["defaultingType"] == "System"


def test_reads_back_to_the_same_profiles(tmp_path: Path) -> None:
    for source in (None, BINPACK):
        args = ["config", "show"] + (["--config", source] if source else [])
        first = ok(*args)
        path = tmp_path / "effective.yaml"
        path.write_text(first)
        assert ok("config", "show", "--config", str(path)) == first
        registry = in_tree_registry()
        original, again = load_config(source, registry), load_config(str(path), registry)
        assert [p.plugins for p in again.profiles] == [p.plugins for p in original.profiles]
        assert [p.plugin_args for p in again.profiles] == [p.plugin_args for p in original.profiles]


def test_custom_config_and_json() -> None:
    data = json.loads(ok("config", "show", "--config", BINPACK, "-o", "json"))
    args = {a["name"]: a["args"] for a in data["config"]["profiles"][0]["pluginConfig"]}
    assert args["NodeResourcesFit"]["scoringStrategy"]["type"] == "MostAllocated"
    assert "podMaxBackoffSeconds" in data["notModelled"]


def test_unknown_profile_is_an_input_error() -> None:
    result = run("config", "show", "--profile", "nope")
    assert result.exit_code == 2
    assert "no profile with schedulerName 'nope' (profiles: default-scheduler)" in result.stderr
