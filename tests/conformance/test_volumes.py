"""The volume scenarios (PVs, PVCs, StorageClasses, CSINodes, CSIDrivers, VolumeAttachments) recorded from the
real kube-scheduler v1.34.1: every cycle must agree, the ``volume_binding`` decisions included."""

from __future__ import annotations

import pytest

from tests.conformance.compare import FIELDS, load
from tests.conformance.harness import HERE, run_scenario, scenario_inputs

VOLUMES = HERE / "volumes"
CASES = scenario_inputs(VOLUMES)


def _check(snap, cfg, exp, batched: bool) -> None:
    ok, bad, notes = run_scenario(snap, cfg, exp, batched)
    assert bad == 0 and not notes, "\n".join(notes[:20])
    assert ok == len(load(str(exp))["cycles"])


@pytest.mark.parametrize(("snap", "cfg", "exp"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_volume_scenario(snap, cfg, exp) -> None:
    _check(snap, cfg, exp, batched=True)


@pytest.mark.parametrize(("snap", "cfg", "exp"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_volume_scenario_on_reference_path(snap, cfg, exp) -> None:
    """The same decisions with every plugin on its per-node path (VolumeBinding checks every candidate
    volume on every node, NodeVolumeLimits recounts the pod's own volumes on every node)."""
    _check(snap, cfg, exp, batched=False)


def test_volume_scenarios_were_copied() -> None:
    assert len(CASES) == 80


def test_volume_binding_is_compared() -> None:
    """compare.py checks ``volume_binding`` wherever the recording has it, and the recordings have it for
    every kind of decision."""
    assert "volume_binding" in FIELDS
    decisions = set()
    for _, _, _, exp in CASES:
        for cycle in load(str(exp))["cycles"]:
            decisions.update(e["decision"] for e in cycle.get("volume_binding") or ())
    assert decisions == {"bound", "static", "provision"}
