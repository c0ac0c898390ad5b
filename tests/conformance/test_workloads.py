"""The workloads scenarios (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs, LimitRanges,
PDBs, what-if edits) recorded from the real kube-scheduler v1.34.1 on the pods the controllers' rules
produce: every workload's nodes, pending count and deletions, every input pod, every edit and the victims
must agree, on both code paths."""

from __future__ import annotations

import pytest

from tests.conformance.workloads_harness import cases, run_case

CASES = cases()


def _check(snap, batched: bool) -> None:
    counts, notes = run_case(snap, batched)
    assert not notes, "\n".join(notes[:20])
    assert all(ok == n for ok, n in counts.values()), counts


@pytest.mark.parametrize("snap", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_workload_scenario(snap) -> None:
    _check(snap, batched=True)


@pytest.mark.parametrize("snap", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_workload_scenario_on_reference_path(snap) -> None:
    _check(snap, batched=False)


def test_workload_scenarios_were_copied() -> None:
    assert len(CASES) == 12


def test_a_wrong_placement_is_noticed() -> None:
    """The comparison can fail: moving one created pod to another node breaks agreement."""
    from tests.conformance.workloads_compare import compare, load_expected
    from tests.conformance.workloads_harness import simulate_json
    snap = CASES[0][1]
    actual = simulate_json(snap)
    expected = load_expected(snap.with_name(snap.name.replace(".yaml", ".expected.json.gz")))
    created = next(c for c in actual["cycles"] if "workload" in c and c["pod"] not in expected["pods"]
                   and c["outcome"] == "Scheduled")
    actual["bindings"][created["pod"]] = "nowhere"
    for c in actual["cycles"]:
        if c["pod"] == created["pod"]:
            c["node"] = "nowhere"
    _, notes = compare(expected, actual)
    assert any(created["workload"] in n for n in notes)
