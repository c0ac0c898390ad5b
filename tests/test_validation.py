"""Schema-driven field validation (issue 17): unknown and mistyped fields at any depth, names, the
--validate modes, and the generated schema file agreeing with the kubernetes client's models."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pysched.cli.main import app
from pysched.errors import InputError, InputErrors
from pysched.snapshot import validation
from pysched.snapshot.loader import load_snapshot

ROOT = Path(__file__).resolve().parent.parent
BAD = ROOT / "tests" / "bad_inputs"


def _pod(**spec: object) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}


CASES = [
    ("typo-deep", _pod(affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": {"topologyKey": "k", "labelSelecter": {}}}]}}),
     "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelecter",
     "unknown field 'labelSelecter' (did you mean 'labelSelector'?)"),
    ("string-for-int", _pod(containers=[{"name": "c", "image": "i", "ports": [{"containerPort": "80"}]}]),
     "spec.containers[0].ports[0].containerPort", "expected an integer, got string '80'"),
    ("bool-as-string", _pod(hostNetwork="yes"), "spec.hostNetwork", "expected a boolean (true/false), got string 'yes'"),
    ("mapping-for-list", _pod(tolerations={"key": "a"}), "spec.tolerations", "expected a list, got a mapping"),
    ("list-of-ints-for-strings", _pod(containers=[{"name": "c", "image": "i", "args": [1]}]),
     "spec.containers[0].args[0]", "expected a string, got int 1"),
    ("unknown-in-template", {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "ns"},
                             "spec": {"selector": {"matchLabels": {"a": "b"}},
                                      "template": {"spec": {"containers": [{"name": "c", "image": "i",
                                                                            "resourcez": {}}]}}}},
     "spec.template.spec.containers[0].resourcez", "unknown field 'resourcez' (did you mean 'resources'?)"),
]


@pytest.mark.parametrize(("obj", "path", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_issues_at_any_depth(obj: dict, path: str, message: str) -> None:
    issues = validation.validate_object(obj, obj["apiVersion"], obj["kind"])
    assert [(i.path, i.message) for i in issues] == [(path, message)]


def test_valid_objects_and_quantities_as_numbers_pass() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"a": "b"}},
            "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
            "status": {"allocatable": {"cpu": 4, "memory": "8Gi", "pods": 110}, "capacity": {"cpu": 4.5}}}
    assert validation.validate_object(node, "v1", "Node") == []
    pod = _pod(priority=None, overhead={"cpu": 1},
               containers=[{"name": "c", "image": "i", "resources": {"requests": {"cpu": 0.5}}}])
    assert validation.validate_object(pod, "v1", "Pod") == []


@pytest.mark.parametrize(("kind", "name", "ok"), [
    ("Pod", "web-1", True), ("Pod", "a.b.c", True), ("Pod", "Web", False), ("Pod", "x" * 254, False),
    ("Namespace", "a.b", False), ("Namespace", "x" * 64, False), ("Namespace", "team-a", True),
    ("Service", "1abc", False), ("Service", "abc", True), ("Node", "..", False), ("Node", "n\u202e1", False)])
def test_names_as_the_api_server_checks_them(kind: str, name: str, ok: bool) -> None:
    assert (validation.name_error(kind, name) is None) == ok


def test_modes(tmp_path: Path) -> None:
    path = BAD / "nested-typos.yaml"
    warned = load_snapshot([str(path)])
    assert sum("unknown field" in w for w in warned.warnings) == 7
    assert not any("unknown field" in w for w in load_snapshot([str(path)], validate="ignore").warnings)
    with pytest.raises(InputErrors) as info:
        load_snapshot([str(path)], validate="strict")
    assert len(info.value.errors) == 7
    assert str(info.value.errors[0]).startswith(f"{path}:9: document 1: Node node-1: spec.taints[0].vaule: ")
    with pytest.raises(InputErrors):
        load_snapshot([str(path)], strict=True)  # the old spelling
    with pytest.raises(InputError, match="--validate must be one of strict, warn, ignore"):
        load_snapshot([str(path)], validate="loud")


def test_cli_validate_flag_and_strict_alias() -> None:
    runner = CliRunner()
    for args in (["--validate=strict"], ["--strict"]):
        result = runner.invoke(app, ["simulate", str(BAD / "nested-typos.yaml"), "-o", "json", *args])
        assert result.exit_code == 2, result.output
        assert "spec.containers[0].resources.request: unknown field 'request'" in result.stderr
    result = runner.invoke(app, ["simulate", str(BAD / "nested-typos.yaml"), "-o", "json", "--validate", "ignore"])
    assert result.exit_code == 0 and "unknown field" not in result.stderr


def test_typo_that_changed_the_decision_is_named(tmp_path: Path) -> None:
    # matchLabel (for matchLabels) made an empty selector that matched every pod
    result = CliRunner().invoke(app, ["simulate", str(BAD / "nested-typos.yaml"), "-o", "json"])
    assert result.exit_code == 0
    assert "labelSelector.matchLabel: unknown field 'matchLabel' (did you mean 'matchLabels'?)" in result.stderr


# --------------------------------------------------------------------------- the schema file


def test_schema_file_is_the_v1_34_client_and_covers_every_kind_read() -> None:
    raw = json.loads(validation.SCHEMA_FILE.read_text())
    assert raw["client"].startswith("34.")
    for kind in ("v1/Pod", "v1/Node", "scheduling.k8s.io/v1/PriorityClass", "policy/v1/PodDisruptionBudget",
                 "apps/v1/StatefulSet", "storage.k8s.io/v1/CSIStorageCapacity", "resource.k8s.io/v1/ResourceClaim"):
        assert kind in raw["kinds"]
    for name, fields in raw["types"].items():
        for field, code in fields.items():
            inner = code.lstrip("[{")
            assert inner in ("s", "i", "f", "b", "t", "q", "o") or inner in raw["types"], (name, field, code)


@pytest.mark.skipif(importlib.util.find_spec("kubernetes") is None, reason="the kubernetes client is not installed")
def test_schema_file_matches_the_installed_client(tmp_path: Path) -> None:
    out = tmp_path / "schema.json"
    subprocess.run([sys.executable, str(ROOT / "tools" / "gen_k8s_schema.py"), "--out", str(out)], check=True,
                   capture_output=True, timeout=120)
    mine = json.loads(validation.SCHEMA_FILE.read_text())
    theirs = json.loads(out.read_text())
    if theirs["client"].split(".")[0] == mine["client"].split(".")[0]:
        assert theirs == mine
        return
    # another client version: every field both know has the same type (newer clients only add fields)
    differ = [(t, f) for t, fields in mine["types"].items() for f, code in fields.items()
              if f in theirs["types"].get(t, {}) and theirs["types"][t][f] != code]
    assert differ == []
