"""kube-scheduler-simulator interop: its export JSON read as a snapshot (with its schedulerConfig), and
pysched's results written as its result annotations (``--annotate``).

The fixtures in ``fixtures/kube-scheduler-simulator/`` are written for pysched after the simulator's
documented examples: ``debuggable-scheduler-example.json`` rebuilds the cluster of the annotated pod shown in
the simulator's debuggable-scheduler documentation (two equal nodes, one pod asking for 100m cpu and 16Gi),
``export.json`` has the export's shape with a configuration as the simulator exports it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pysched.report import simulator as ann
from pysched.snapshot.simulator import export_config, is_export
from tests.test_cli import ROOT, ok, run

SIM = ROOT / "fixtures" / "kube-scheduler-simulator"
EXPORT = str(SIM / "export.json")
DOC_EXAMPLE = str(SIM / "debuggable-scheduler-example.json")

# Annotation values of the documented example (the simulator's debuggable-scheduler page) that pysched's
# v1.34 semantics share: the final scores of the two resource plugins and TaintToleration (weight 3), and
# the chosen node. (The example's PodTopologySpread 200 comes from an older scheduler whose PreScore did not
# skip a pod without constraints; its NodeNumber is a sample out-of-tree plugin.)
DOCUMENTED_FINAL = {"NodeResourcesBalancedAllocation": "76", "NodeResourcesFit": "73", "TaintToleration": "300",
                    "ImageLocality": "0"}
DOCUMENTED_SELECTED = "node-282x7"


def _annotate(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "annotated.json"
    ok("simulate", *args, "--annotate", str(out), "-q")
    return json.loads(out.read_text())


def test_export_is_read_as_a_snapshot() -> None:
    data = json.loads(ok("simulate", EXPORT, "-o", "json", "-q"))
    assert data["bindings"] == {"default/critical-1": "sim-node-2", "default/web-1": "sim-node-3",
                                "default/web-2": "sim-node-1"}
    assert data["pending"] == ["default/batch-1"]
    assert data["summary"]["counts"]["nodes"] == 3
    c1 = next(c for c in data["cycles"] if c["pod"] == "default/critical-1")
    assert c1["priority"] == 100000  # from the export's priorityClasses


def test_embedded_config_is_used_and_what_v134_refuses_is_named() -> None:
    result = run("simulate", EXPORT, "-o", "json")
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    where = f"warning: {EXPORT}: schedulerConfig"
    assert f"{where}.healthzBindAddress is not a KubeSchedulerConfiguration v1 field in v1.34: ignored" in warnings
    for plugin in ("EBSLimits", "GCEPDLimits", "AzureDiskLimits"):
        assert (f"{where}.profiles[0].plugins.filter.enabled: plugin {plugin} was removed from kube-scheduler "
                "(v1.34 has NodeVolumeLimits): ignored") in warnings
    assert warnings[-1] == f"warning: using the scheduler configuration of {EXPORT}: schedulerConfig " \
                           "(--config overrides it)"
    # its TaintToleration weight 3 is in force: the final score shows 3 x 100
    with_config = run("simulate", EXPORT, "--config", "default", "-o", "json")
    assert "using the scheduler configuration" not in with_config.stderr


def test_config_flag_overrides_the_embedded_one(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    score:\n      disabled:\n"
                   "      - name: TaintToleration\n")
    pods = _annotate(tmp_path, DOC_EXAMPLE, "--config", str(cfg))["pods"]
    final = json.loads(pods[0]["metadata"]["annotations"][ann.FINALSCORE])
    assert "TaintToleration" not in final["node-282x7"]


@pytest.mark.parametrize(("doc", "expected"), [
    ({"nodes": [], "pods": []}, True),
    ({"nodes": [{}], "schedulerConfig": {}}, True),
    ({"kind": "List", "items": []}, False),
    ({"schedulerConfig": {}}, False),
    ({"pods": [], "spec": {}}, False),
    ([{"nodes": []}], False),
], ids=["lists", "with-config", "kubectl-list", "config-only", "foreign-key", "not-a-mapping"])
def test_export_detection(doc: object, expected: bool) -> None:
    assert is_export(doc) is expected


def test_export_config_keeps_valid_fields() -> None:
    cfg, warnings = export_config({"nodes": [], "schedulerConfig": {"percentageOfNodesToScore": 0, "profiles": []}},
                                  "x.json")
    assert cfg == {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                   "percentageOfNodesToScore": 0, "profiles": []}
    assert warnings == []


def test_annotations_match_the_documented_example(tmp_path: Path) -> None:
    pod = _annotate(tmp_path, DOC_EXAMPLE)["pods"][0]
    a = pod["metadata"]["annotations"]
    assert set(ann.RESULT_KEYS) | {ann.RESULT_HISTORY} == set(a)
    for key in ann.RESULT_KEYS:
        if key != ann.SELECTED_NODE:
            json.loads(a[key])  # every value is a JSON string, as the simulator writes them
    assert a[ann.SELECTED_NODE] == DOCUMENTED_SELECTED and pod["spec"]["nodeName"] == DOCUMENTED_SELECTED
    assert json.loads(a[ann.BIND]) == {"DefaultBinder": "success"}
    final = json.loads(a[ann.FINALSCORE])
    assert set(final) == {"node-282x7", "node-gp9t4"}
    for node in final:
        for plugin, value in DOCUMENTED_FINAL.items():
            assert final[node][plugin] == value, (node, plugin)
        assert all(isinstance(v, str) for v in final[node].values())
    filters = json.loads(a[ann.FILTER])
    assert set(filters) == {"node-282x7", "node-gp9t4"}
    assert all(v == "passed" for per in filters.values() for v in per.values())
    assert {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeResourcesFit"} <= set(filters["node-282x7"])
    history = json.loads(a[ann.RESULT_HISTORY])
    assert isinstance(history, list) and history[-1][ann.SELECTED_NODE] == DOCUMENTED_SELECTED


def test_rejections_and_unschedulable_pods(tmp_path: Path) -> None:
    pods = {p["metadata"]["name"]: p for p in _annotate(tmp_path, EXPORT)["pods"]}
    assert "annotations" not in pods["db-0"]["metadata"]  # a running pod is written as it was
    batch = pods["batch-1"]
    assert "nodeName" not in batch["spec"]
    a = batch["metadata"]["annotations"]
    assert ann.SELECTED_NODE not in a and json.loads(a[ann.BIND]) == {}
    filters = json.loads(a[ann.FILTER])
    # the plugins run in order until the first rejection, which carries the reason
    assert filters["sim-node-3"] == {"NodeUnschedulable": "passed", "NodeName": "passed",
                                     "TaintToleration": "passed", "NodeResourcesFit": "Insufficient cpu"}
    assert json.loads(a[ann.SCORE]) == {}
    web1 = pods["web-1"]["metadata"]["annotations"]
    assert json.loads(web1[ann.FILTER])["sim-node-2"]["NodeResourcesFit"] == "Insufficient cpu"


def test_annotate_output_reads_back_as_a_snapshot(tmp_path: Path) -> None:
    _annotate(tmp_path, EXPORT)
    again = json.loads(ok("simulate", str(tmp_path / "annotated.json"), "-o", "json", "-q"))
    assert again["pending"] == ["default/batch-1"]  # the bound pods are now running pods
    assert again["summary"]["counts"]["simulated"] == 1


def test_explain_and_capacity_use_the_embedded_config(tmp_path: Path) -> None:
    result = run("explain", "default/hoge-pod", "-f", DOC_EXAMPLE, "-o", "json")
    assert result.exit_code == 0, result.output
    assert "using the scheduler configuration of" in result.stderr
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: extra, namespace: default}\nspec:\n  containers:\n"
                   "  - name: app\n    image: x\n    resources: {requests: {cpu: '1', memory: 1Gi}}\n")
    result = run("capacity", EXPORT, "--pod", str(pod), "-o", "json")
    assert result.exit_code == 0, result.output
    assert "using the scheduler configuration of" in result.stderr
