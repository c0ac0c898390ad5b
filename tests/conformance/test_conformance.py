"""Every recorded decision of the real kube-scheduler v1.34.1 must be reproduced exactly."""

from __future__ import annotations

import pytest

from tests.conformance.compare import load
from tests.conformance.harness import SCENARIOS, SHARED, run_scenario, scenario_inputs

CASES = scenario_inputs(SCENARIOS)
FOREIGN = scenario_inputs(SHARED / "foreign") if (SHARED / "foreign").is_dir() else []


def _check(snap, cfg, exp, batched: bool = True) -> None:
    ok, bad, notes = run_scenario(snap, cfg, exp, batched)
    assert bad == 0 and not notes, "\n".join(notes[:20])
    assert ok == len(load(str(exp)).get("cycles", [])), "every recorded cycle agrees"


@pytest.mark.parametrize(("snap", "cfg", "exp"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_scenario(snap, cfg, exp) -> None:
    _check(snap, cfg, exp)


@pytest.mark.parametrize(("snap", "cfg", "exp"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_scenario_on_reference_path(snap, cfg, exp) -> None:
    """The same decisions with every plugin on its per-node path (no batched scoring, no counts kept
    across cycles): the fast paths are optimisations, never different semantics."""
    _check(snap, cfg, exp, batched=False)


@pytest.mark.skipif(not FOREIGN, reason="../shared/conformance/foreign is absent (third-party data)")
@pytest.mark.parametrize(("snap", "cfg", "exp"), [c[1:] for c in FOREIGN] or [(None, None, None)],
                         ids=[c[0] for c in FOREIGN] or ["absent"])
def test_foreign_scenario(snap, cfg, exp) -> None:
    _check(snap, cfg, exp)


def test_scenarios_were_copied() -> None:
    assert len(CASES) == 185
