"""The command line of workloads and edits: flags in the order given, scenario files, errors, the JSON keys,
the README's examples on the bundled fixture."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.test_cli import ROOT, run

FIX = ROOT / "fixtures"
WL = str(FIX / "workloads.yaml")
NODE = str(FIX / "node-template.yaml")
SCENARIO = str(FIX / "whatif-scenario.yaml")


def as_json(*args: str) -> dict:
    r = run("simulate", WL, "-o", "json", *args)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_workload_pods_carry_their_workload_and_the_top_level_sections() -> None:
    d = as_json()
    owners = {c["pod"]: c.get("workload") for c in d["cycles"]}
    assert owners["shop/db-0"] == "StatefulSet/shop/db"
    assert {w for p, w in owners.items() if p.startswith("shop/web-")} == {"Deployment/shop/web"}
    assert d["workloads"]["Deployment/shop/web"]["created"] == 2
    assert d["workloads"]["CronJob/shop/report"]["note"].startswith("not run")
    assert d["edits"] == [] and d["now"] == "2025-03-01T08:00:07Z"


def test_edits_apply_in_command_line_order_across_flags() -> None:
    # uncordon before cordon leaves the node cordoned; the other order leaves it schedulable
    a = as_json("--uncordon", "node-a1", "--cordon", "node-a1")
    b = as_json("--cordon", "node-a1", "--uncordon", "node-a1")
    assert [e["edit"] for e in a["edits"]] == ["uncordon", "cordon"]
    assert [e["edit"] for e in b["edits"]] == ["cordon", "uncordon"]
    def shop_nodes(d: dict) -> set[str]:  # the DaemonSet's pods tolerate the cordon
        return {n for p, n in d["bindings"].items() if p.startswith("shop/")}
    assert "node-a1" not in shop_nodes(a) and "node-a1" in shop_nodes(b)


def test_scenario_file_and_flags_interleave() -> None:
    d = as_json("--label", "node-a2=disk=ssd", "--scenario", SCENARIO, "--run-cronjobs", "--now",
                "2025-03-01T09:00:00Z")
    assert [e["edit"] for e in d["edits"]] == ["label", "cordon", "drain", "add-node", "scale"]
    drain = d["edits"][2]
    assert drain["evicted"] == ["shop/web-5d8f7-abcde"] and list(drain["refused"]) == ["shop/web-5d8f7-fghjk"]
    assert d["now"] == "2025-03-01T09:00:00Z"
    assert any(p.startswith("shop/report-29013660-") for p in d["bindings"])  # 09:00 in minutes


@pytest.mark.parametrize(("args", "message"), [
    (["--drain", "node-x1"], "--drain node-x1: no node named 'node-x1' (closest: node-"),
    (["--scale", "deploy/shop/wbe=3"], "closest: Deployment/shop/web"),
    (["--taint", "node-a1=k"], "expected NODE=KEY[=VALUE]:EFFECT"),
    (["--now", "yesterday"], "--now: expected an RFC 3339 time"),
], ids=["node", "workload", "taint", "now"])
def test_bad_edits_exit_2_and_simulate_nothing(args: list[str], message: str) -> None:
    r = run("simulate", WL, *args)
    assert r.exit_code == 2 and message in r.output and "Summary" not in r.output


def test_only_unexpanded_workloads_is_said_clearly(tmp_path: Path) -> None:
    text = FIX.joinpath("workloads.yaml").read_text()
    docs = [d for d in text.split("\n---\n") if "kind: CronJob" in d or "kind: Node\n" in d]
    f = tmp_path / "cron.yaml"
    f.write_text("\n---\n".join(docs))
    r = run("simulate", str(f))
    assert r.exit_code == 0
    assert re.search(r"nothing to do: the 1 workload\(s\) of the snapshot create no pending pods \(not run", r.output)


README_COMMAND = re.compile(r"^\$ (pysched (?:simulate|explain) .*fixtures/workloads\.yaml.*)$", re.M)


def test_readme_workload_examples_work(monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (ROOT / "README.md").read_text()
    commands = README_COMMAND.findall(readme)
    assert len(commands) >= 8
    monkeypatch.chdir(ROOT)  # the commands are shown run from the checkout
    for cmd in commands:
        r = run(*cmd.split()[1:])
        assert r.exit_code in (0, 3), f"{cmd}: {r.output}"
