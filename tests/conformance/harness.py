"""Run conformance scenarios in-process, exactly as
``pysched simulate NNN.yaml [--config NNN.config.yaml] --tie-break name --trace -o json`` would."""

from __future__ import annotations

import json
from pathlib import Path

from pysched.framework.config import load_config
from pysched.plugins import in_tree_registry
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.loader import load_snapshot
from tests.conformance.compare import FIELDS, compare, load

HERE = Path(__file__).parent
SCENARIOS = HERE / "scenarios"
SHARED = HERE.parent.parent.parent / "shared" / "conformance"


def scenario_inputs(folder: Path) -> list[tuple[str, Path, Path | None, Path]]:
    """(id, snapshot, config or None, expected) for every scenario in ``folder``."""
    out = []
    for exp in sorted(folder.glob("*.expected.json.gz")):
        stem = exp.name[: -len(".expected.json.gz")]
        snap = folder / f"{stem}.yaml"
        if not snap.exists():
            snap = folder / f"{stem}.yaml.gz"
        cfg = folder / f"{stem}.config.yaml"
        out.append((stem, snap, cfg if cfg.exists() else None, exp))
    return out


def simulate_json(snapshot: Path, config: Path | None, batched: bool = True) -> dict:
    registry = in_tree_registry()
    cfg = load_config(str(config) if config else None, registry)
    cluster = load_snapshot([str(snapshot)])
    result = Simulation(cluster, cfg, registry, SimulationOptions(tie_break="name", trace=True, batched=batched)).run()
    # The same JSON values as ``to_json`` prints, without its indentation (which keeps ``json`` on its slow
    # pure-Python encoder: minutes on the large-cluster traces).
    return json.loads(json.dumps(result.to_dict(), sort_keys=True, ensure_ascii=False))


def run_scenario(snapshot: Path, config: Path | None, expected: Path,
                 batched: bool = True) -> tuple[int, int, list[str]]:
    actual = simulate_json(snapshot, config, batched)
    want = load(str(expected))
    ok, bad, notes = compare(want, actual, FIELDS)
    return ok, bad, notes + unrecorded_cycles(want, actual)


def unrecorded_cycles(expected: dict, actual: dict) -> list[str]:
    """Cycles pysched ran that the real scheduler did not (compare.py only walks the recorded ones)."""
    recorded = {(c.get("pass", 1), c.get("pod")) for c in expected.get("cycles", [])}
    return [f"pass {c.get('pass', 1)} {c.get('pod')}: a cycle the real scheduler did not run"
            for c in actual.get("cycles", []) if (c.get("pass", 1), c.get("pod")) not in recorded]


def main() -> None:  # pragma: no cover - a developer's report: python -m tests.conformance.harness [folder]
    import sys
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else SCENARIOS
    fams: dict[str, list[int]] = {}
    for stem, snap, cfg, exp in scenario_inputs(folder):
        fam = stem.split("-", 1)[1]
        try:
            ok, bad, notes = run_scenario(snap, cfg, exp)
        except Exception as e:
            ok, bad, notes = 0, 1, [f"crash: {type(e).__name__}: {e}"]
        f = fams.setdefault(fam, [0, 0, 0, 0])
        f[0] += ok
        f[1] += bad
        f[2] += 1 if bad == 0 and not notes else 0
        f[3] += 1
        if bad or notes:
            print(f"FAIL {stem}: {bad} cycles; {notes[:3]}")
    for fam, (ok, bad, sok, sall) in sorted(fams.items()):
        print(f"{fam:22s} scenarios {sok}/{sall}  cycles {ok}/{ok + bad}")


if __name__ == "__main__":
    main()
