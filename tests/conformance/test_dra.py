"""The DRA scenarios (DeviceClasses, ResourceSlices, ResourceClaims, ResourceClaimTemplates) recorded from the
real kube-scheduler v1.34.1: every cycle must agree, ``dra_allocation`` included, on both code paths."""

from __future__ import annotations

import pytest

from tests.conformance.compare import FIELDS, load
from tests.conformance.harness import HERE, run_scenario, scenario_inputs

DRA = HERE / "dra"
CASES = scenario_inputs(DRA)


def _check(snap, cfg, exp, batched: bool) -> None:
    ok, bad, notes = run_scenario(snap, cfg, exp, batched)
    assert bad == 0 and not notes, "\n".join(notes[:20])
    assert ok == len(load(str(exp))["cycles"])


@pytest.mark.parametrize(("snap", "cfg", "exp"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_dra_scenario(snap, cfg, exp) -> None:
    _check(snap, cfg, exp, batched=True)


@pytest.mark.parametrize(("snap", "cfg", "exp"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_dra_scenario_on_reference_path(snap, cfg, exp) -> None:
    """The same decisions when DynamicResources gathers pools, devices in use and selector results from
    scratch in every cycle."""
    _check(snap, cfg, exp, batched=False)


def test_dra_scenarios_were_copied() -> None:
    assert len(CASES) == 40


def test_dra_allocation_is_compared() -> None:
    """compare.py checks ``dra_allocation`` wherever the recording has it, shared claims included."""
    assert "dra_allocation" in FIELDS
    kinds = set()
    for _, _, _, exp in CASES:
        for cycle in load(str(exp))["cycles"]:
            kinds.update(e["allocated_in_cycle"] for e in cycle.get("dra_allocation") or ())
    assert kinds == {True, False}
