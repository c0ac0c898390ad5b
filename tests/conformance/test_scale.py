"""The large-cluster scenarios (150 to 3,000 nodes) recorded from the real kube-scheduler v1.34.1 with the
default adaptive ``percentageOfNodesToScore`` and its rotating start index (``scale/README.md``): which
nodes each cycle examined, what it found and where the next cycle started must all agree, on both code
paths. They take minutes, so they carry the ``scale`` marker (CI runs them; see the README)."""

from __future__ import annotations

import pytest

from tests.conformance.compare import load
from tests.conformance.harness import HERE, run_scenario, scenario_inputs

SCALE = HERE / "scale"
CASES = scenario_inputs(SCALE)


def _check(snap, cfg, exp, batched: bool) -> None:
    ok, bad, notes = run_scenario(snap, cfg, exp, batched)
    assert bad == 0 and not notes, "\n".join(notes[:20])
    assert ok == len(load(str(exp))["cycles"])


@pytest.mark.scale
@pytest.mark.parametrize(("snap", "cfg", "exp"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_scale_scenario(snap, cfg, exp) -> None:
    _check(snap, cfg, exp, batched=True)


@pytest.mark.scale
@pytest.mark.parametrize(("snap", "cfg", "exp"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_scale_scenario_on_reference_path(snap, cfg, exp) -> None:
    _check(snap, cfg, exp, batched=False)


def test_scale_scenarios_were_copied() -> None:
    assert len(CASES) == 8
    sizes = sorted(load(str(exp))["nodes"] for _, _, _, exp in CASES)
    assert sizes[0] >= 150 and sizes[-1] >= 2000  # large enough that upstream stops filtering early
