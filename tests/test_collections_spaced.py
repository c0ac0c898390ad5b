"""Simulation.run spaces out the cyclic collector's runs and gives the caller's settings back."""

from __future__ import annotations

import gc

from pysched.scheduler.simulation import GEN0_DURING_RUN, collections_spaced


def test_thresholds_are_raised_during_the_run_and_restored_after() -> None:
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    try:
        gc.unfreeze()
        with collections_spaced():
            assert gc.get_threshold() == (GEN0_DURING_RUN, *before[1:])
        assert gc.get_threshold() == before
        assert gc.get_freeze_count() == 0  # nothing was frozen before: nothing is frozen after
        gc.freeze()  # as after a large load
        garbage: list = []
        garbage.append(garbage)  # a cycle made during the run: frozen with the rest
        with collections_spaced():
            pass
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        if frozen:
            gc.freeze()


def test_a_caller_s_own_settings_are_left_alone() -> None:
    before = gc.get_threshold()
    gc.set_threshold(GEN0_DURING_RUN * 2, *before[1:])
    try:
        with collections_spaced():
            assert gc.get_threshold()[0] == GEN0_DURING_RUN * 2
    finally:
        gc.set_threshold(*before)
    gc.disable()
    try:
        with collections_spaced():
            assert gc.get_threshold() == before
    finally:
        gc.enable()


def test_a_run_freezes_nothing_after_a_freeze_no_load_made(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The command line freezes what its imports built (cli/main.py); a simulation of a small cluster (whose
    load froze nothing) then leaves what it built to the collector, as without that freeze: the cycles of
    one simulation of many (capacity, explain) must stay collectable."""
    from pysched.snapshot import loader

    monkeypatch.setattr(loader, "_load_froze", False)
    frozen = gc.get_freeze_count()
    try:
        gc.freeze()  # as the command line does
        before = gc.get_freeze_count()
        with collections_spaced():
            garbage: list = []
            garbage.append(garbage)
        assert gc.get_freeze_count() <= before
    finally:
        gc.unfreeze()
        if frozen:
            gc.freeze()
