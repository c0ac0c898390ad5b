"""``pysched diff``: goldens on the fixtures, the JSON contract (``changed`` lists exactly the pods whose final
node or outcome differs), usage errors, and on the conformance ``config`` scenarios the exact set of pods the
real scheduler placed differently under the scenario's configuration than pysched does under the defaults.

Goldens live in ``tests/golden/``; regenerate them with ``PYSCHED_UPDATE_GOLDEN=1 python -m pytest
tests/test_diff.py`` and review ``git diff tests/golden``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml

from pysched.cli import diff_cmd
from pysched.framework.config import load_config
from pysched.plugins import in_tree_registry
from pysched.report.diff import build_diff, changed_pods, diff_data, placements, spread_of
from pysched.scheduler import paired
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.loader import load_snapshot
from tests.conformance.harness import SCENARIOS, scenario_inputs
from tests.golden import assert_golden
from tests.test_cli import DEMO, ROOT, ok, run

BINPACK = str(ROOT / "fixtures" / "demo-config-binpack.yaml")


# ---------------------------------------------------------------------------------------------- goldens
def test_diff_table_golden() -> None:
    text = ok("diff", "default", BINPACK, "-f", DEMO)
    assert_golden("diff_demo_binpack.txt", text.replace(f"{ROOT}/", ""))
    assert not set(text) & set("─│━┏█\x1b")


def test_diff_help_golden() -> None:
    text = ok("diff", "--help")
    assert_golden("diff_help.txt", text)
    for option in ("--filename", "--snapshot-b", "--tie-break", "--seed", "--output", "--format", "--no-color"):
        assert option in text


def test_diff_snapshot_b_golden(tmp_path: Path) -> None:
    untainted = tmp_path / "demo-untainted.yaml"
    untainted.write_text(Path(DEMO).read_text().replace(
        "  taints:\n  - key: dedicated\n    value: gpu\n    effect: NoSchedule\n", ""))
    text = ok("diff", "-f", DEMO, "--snapshot-b", str(untainted))
    assert_golden("diff_demo_untainted.txt", text.replace(str(untainted), "demo-untainted.yaml").replace(f"{ROOT}/", ""))
    assert "ml/trainer-1     node-4  Unschedulable" in text


# ---------------------------------------------------------------------------------------------- json
def _simulate(path: str, config: str | None = None):
    registry = in_tree_registry()
    return Simulation(load_snapshot([path]), load_config(config, registry), registry,
                      SimulationOptions(trace=True)).run()


def test_json_changed_lists_exactly_the_pods_that_differ() -> None:
    data = json.loads(ok("diff", "default", BINPACK, "-f", DEMO, "-o", "json"))
    assert set(data) == {"a", "b", "changed", "summary"}
    ra, rb = _simulate(DEMO), _simulate(DEMO, BINPACK)
    last_a = {c.pod: c for c in ra.cycles}
    last_b = {c.pod: c for c in rb.cycles}
    expected = sorted(p for p in set(last_a) | set(last_b)
                      if (last_a[p].outcome, last_a[p].node) != (last_b[p].outcome, last_b[p].node))
    assert [c["pod"] for c in data["changed"]] == expected == ["shop/web-1", "shop/web-2"]
    web1 = data["changed"][0]
    assert web1["a"] == {"node": "node-1", "outcome": "Scheduled", "margin": 56, "runner_up": "node-3"}
    assert web1["b"] == {"node": "node-2", "outcome": "Scheduled", "margin": 25, "runner_up": "node-3"}
    assert data["changed"][1]["a"]["margin_note"] == "the only feasible node"
    assert data["a"]["config"] == "default" and data["b"]["config"] == BINPACK
    assert data["a"]["counts"]["scheduled"] == data["b"]["counts"]["scheduled"] == 4
    assert data["summary"]["changed"] == 2
    assert data["a"]["nodes"]["node-1"] == {"cpu": 1.0, "memory": 0.1875, "pods": round(2 / 110, 4)}
    verdicts = {m["metric"]: m["verdict"] for m in data["summary"]["metrics"]}
    assert verdicts["scheduled"] == "same"
    assert verdicts["cpu across nodes"].startswith("B spreads cpu more evenly")


def test_same_config_changes_nothing() -> None:
    data = json.loads(ok("diff", "default", "default", "-f", DEMO, "-o", "json"))
    assert data["changed"] == [] and data["a"] == data["b"]
    assert "every pod has the same outcome and node under A and B" in ok("diff", "default", "default", "-f", DEMO)


def test_yaml_is_the_json_document() -> None:
    args = ("diff", "default", BINPACK, "-f", DEMO)
    assert yaml.safe_load(ok(*args, "-o", "yaml")) == json.loads(ok(*args, "-o", "json"))
    assert ok(*args, "-o", "json") == ok(*args, "-o", "json")


def test_large_cluster_path_gives_the_same_margins(monkeypatch: pytest.MonkeyPatch) -> None:
    small = ok("diff", "default", BINPACK, "-f", DEMO, "-o", "json")
    monkeypatch.setattr(paired, "TRACE_ALL_LIMIT", 0)  # untraced runs, then the changed pods traced
    assert ok("diff", "default", BINPACK, "-f", DEMO, "-o", "json") == small


def test_margin_budget_limits_the_traced_pods(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paired, "TRACE_ALL_LIMIT", 0)
    monkeypatch.setattr(paired, "MARGIN_BUDGET", 4)  # 4 nodes: one pod's worth of tracing
    data = json.loads(ok("diff", "default", BINPACK, "-f", DEMO, "-o", "json"))
    web1, web2 = data["changed"]
    assert web1["a"]["margin"] == 56 and web2["a"]["margin_note"] == web2["b"]["margin_note"] == "not traced"
    text = ok("diff", "default", BINPACK, "-f", DEMO, env={"COLUMNS": "1000"})
    assert "not traced: on a large cluster the margins are computed for the first pods that differ only" in text


def test_snapshot_b_counts_and_pods(tmp_path: Path) -> None:
    untainted = tmp_path / "b.yaml"
    untainted.write_text(Path(DEMO).read_text().replace(
        "  taints:\n  - key: dedicated\n    value: gpu\n    effect: NoSchedule\n", ""))
    data = json.loads(ok("diff", "-f", DEMO, "--snapshot-b", str(untainted), "-o", "json"))
    changed = {c["pod"]: c for c in data["changed"]}
    # without the taint the preemptor fits on node-4 at once, and the GPU pod no longer finds room there
    assert list(changed) == ["ml/trainer-1", "shop/checkout-1", "shop/web-1"]
    assert changed["shop/checkout-1"]["b"] == {"node": "node-4", "outcome": "Scheduled", "margin": None,
                                               "margin_note": "the only feasible node"}
    assert changed["ml/trainer-1"]["b"] == {"node": None, "outcome": "Unschedulable", "margin": None}
    assert (data["a"]["counts"]["victims"], data["b"]["counts"]["victims"]) == (1, 0)
    assert data["a"]["snapshot"] == [DEMO] and data["b"]["snapshot"] == [str(untainted)]
    assert data["a"]["config"] == data["b"]["config"] == "default"


# ---------------------------------------------------------------------------------------------- usage errors
@pytest.mark.parametrize(("args", "message"), [
    (["default", "-f", DEMO], "diff needs two configurations"),
    (["-f", DEMO], "diff needs two configurations"),
    (["default", BINPACK, "-f", DEMO, "--snapshot-b", DEMO], "with --snapshot-b give one configuration"),
    (["default", "nope.yaml", "-f", DEMO], "nope.yaml"),
    (["default", "default", "-f", "nope.yaml"], "nope.yaml: no such file or folder"),
])
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    result = run("diff", *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and result.stdout == ""


def test_internal_error_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(diff_cmd, "simulate_pair", boom)
    result = run("diff", "default", "default", "-f", DEMO)
    assert result.exit_code == 1 and "internal error: RuntimeError: boom" in result.stderr


# ---------------------------------------------------------------------------------------------- views
def test_spread_statistics() -> None:
    s = spread_of([0.0, 0.5, 1.0])
    assert s is not None and (s.mean, s.range) == (0.5, 1.0) and round(s.stddev, 4) == 0.4082
    assert spread_of([]) is None


def test_diff_data_reads_the_results() -> None:
    ra, rb = _simulate(DEMO), _simulate(DEMO, BINPACK)
    view = build_diff(ra, rb, config_a="default", config_b="binpack", snapshot_a=[DEMO], snapshot_b=[DEMO])
    data = diff_data(view)
    assert [c["pod"] for c in data["changed"]] == [c.pod for c in changed_pods(placements(ra), placements(rb))]
    assert view.same_snapshot and data["a"]["counts"]["victims"] == 1


# ---------------------------------------------------------------------------------------------- conformance
CONFIG_SCENARIOS = [(stem, snap, cfg, exp) for stem, snap, cfg, exp in scenario_inputs(SCENARIOS)
                    if stem.endswith("-config")]


def _recorded_placements(exp: Path) -> dict[str, tuple[str, str | None]]:
    """(outcome, node) of every pod's last recorded cycle (the nominated node for Nominated)."""
    with gzip.open(exp, "rt") as f:
        data = json.load(f)
    out: dict[str, tuple[str, str | None]] = {}
    for c in data["cycles"]:
        node = c.get("node") if c["outcome"] == "Scheduled" else c.get("nominated_node")
        out[c["pod"]] = (c["outcome"], node)
    return out


def test_config_scenarios_exist() -> None:
    assert len(CONFIG_SCENARIOS) == 10


@pytest.mark.parametrize(("snap", "cfg", "exp"), [c[1:] for c in CONFIG_SCENARIOS],
                         ids=[c[0] for c in CONFIG_SCENARIOS])
def test_diff_lists_the_recorded_differences(snap: Path, cfg: Path, exp: Path) -> None:
    registry = in_tree_registry()
    cluster = load_snapshot([str(snap)])
    default, config = load_config(None, registry), load_config(str(cfg), registry)
    ra, rb = diff_cmd.simulate_pair(cluster, default, cluster, config, registry)
    # the recorded difference: pysched's default-config run (conformance-exact) against the real
    # scheduler's recorded run with the scenario's configuration
    mine = {pod: (p.outcome, p.node) for pod, p in placements(ra).items()}
    recorded = _recorded_placements(exp)
    # (a pod without a recorded cycle was not scheduled by either: bound already, or not simulated)
    expected = sorted(pod for pod in set(recorded) | set(mine) if recorded.get(pod, mine.get(pod)) != mine.get(pod))
    found = [c.pod for c in changed_pods(placements(ra), placements(rb))]
    assert found == expected
    # and the command itself
    data = json.loads(ok("diff", "default", str(cfg), "-f", str(snap), "-o", "json"))
    assert [c["pod"] for c in data["changed"]] == expected
    for c in data["changed"]:
        assert (c["b"]["outcome"], c["b"]["node"]) == recorded[c["pod"]]


def test_differing_pods_are_the_changed_simulated_pods() -> None:
    """The pair's own notion of "placed differently" (below the report layer) agrees with the report's."""
    registry = in_tree_registry()
    cluster = load_snapshot([DEMO])
    binpack = load_config(str(ROOT / "fixtures" / "demo-config-binpack.yaml"), registry)
    ra, rb = paired.simulate_pair(cluster, load_config(None, registry), cluster, binpack, registry)
    simulated = {c.pod for c in ra.cycles} | {c.pod for c in rb.cycles}
    want = [c.pod for c in changed_pods(placements(ra), placements(rb)) if c.pod in simulated]
    assert paired.differing_pods(ra, rb) == want
    assert want, "the two configurations place some pod differently"
