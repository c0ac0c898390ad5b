"""Wiring shared by the commands: load inputs, build the config, run, print errors."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from typing import TypeVar

import typer

# the option types and the what-if options live in cli/options.py; re-exported here for older imports
from pysched.cli.options import (
    EDIT_FLAGS as EDIT_FLAGS,
    EDIT_HELP as EDIT_HELP,
    AddNodeOpt as AddNodeOpt,
    CordonOpt as CordonOpt,
    DrainOpt as DrainOpt,
    FailOn as FailOn,
    LabelOpt as LabelOpt,
    NowOpt as NowOpt,
    Output as Output,
    RemoveNodeOpt as RemoveNodeOpt,
    RunCronJobsOpt as RunCronJobsOpt,
    ScaleOpt as ScaleOpt,
    ScenarioOpt as ScenarioOpt,
    TableFormat as TableFormat,
    TaintOpt as TaintOpt,
    TieBreak as TieBreak,
    UncordonOpt as UncordonOpt,
    UntaintOpt as UntaintOpt,
    Validate as Validate,
    WhatIfCommand as WhatIfCommand,
    edit_order as edit_order,
    scan_edit_flags as scan_edit_flags,
)
from pysched.errors import InputError, PyschedError
from pysched.framework.config import SchedulerConfig, load_config
from pysched.framework.registry import Registry
from pysched.plugins import in_tree_registry
from pysched.report.summary import Summary
from pysched.safetext import escape_lines
from pysched.snapshot.cluster import Cluster
from pysched.snapshot.loader import DEFAULT_MAX_BYTES, load_snapshot

T = TypeVar("T")
EXIT_OK, EXIT_INTERNAL, EXIT_INPUT, EXIT_UNSCHEDULABLE, EXIT_FAIL_ON = 0, 1, 2, 3, 4


def _n(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def fail_on_findings(kinds: list[FailOn] | None, counts: Summary) -> list[str]:
    """What ``--fail-on`` found, one line per kind that occurred."""
    found = []
    for kind in dict.fromkeys(kinds or []):
        if kind == FailOn.unschedulable and counts.unschedulable + counts.nominated:
            n = counts.unschedulable + counts.nominated
            found.append(f"{_n(n, 'pod')} ended without a node ({counts.unschedulable} unschedulable, "
                         f"{counts.nominated} nominated but still pending)")
        elif kind == FailOn.preemption and counts.preemptors:
            found.append(f"{_n(counts.preemptors, 'pod')} preempted {_n(counts.victims, 'victim')}")
        elif kind == FailOn.error and counts.errors:
            found.append(f"{_n(counts.errors, 'pod')} ended in an error")
    return found


def check_fail_on(kinds: list[FailOn] | None, counts: Summary, quiet: bool = False) -> int:
    """``EXIT_FAIL_ON`` (with the findings on stderr, even with -q) when a ``--fail-on`` kind occurred, else 0."""
    found = fail_on_findings(kinds, counts)
    for line in found:
        print(f"fail-on: {line}", file=sys.stderr)
    return EXIT_FAIL_ON if found else EXIT_OK


def guarded(fn: Callable[[], T], debug: bool) -> T:
    """Run ``fn``; turn pysched's errors into a message and an exit code, never a traceback."""
    try:
        return fn()
    except typer.Exit:
        raise
    except PyschedError as e:
        if debug:
            traceback.print_exc()
        typer.echo(f"error: {escape_lines(str(e))}", err=True)
        raise typer.Exit(e.exit_code) from None
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        raise typer.Exit(130) from None
    except Exception as e:
        if debug:
            traceback.print_exc()
        typer.echo(f"internal error: {type(e).__name__}: {escape_lines(str(e))} (run with --debug for the traceback)",
                   err=True)
        raise typer.Exit(EXIT_INTERNAL) from None


def build_registry(plugin_dirs: list[str] | None = None) -> Registry:
    """The in-tree plugins plus the out-of-tree ones: the checkout's plugins/ folder, every --plugin-dir
    and the installed 'pysched.plugins' entry points."""
    from pysched.framework.discovery import build_registry as discover
    return discover(plugin_dirs or [], base=in_tree_registry())


def load_inputs(positional: list[str] | None, filenames: list[str] | None, *, kubeconfig: str | None = None,
                context: str | None = None, quiet: bool = False, strict: bool = False,
                max_file_size: int | None = None, validate: str | None = None) -> Cluster:
    """Snapshot files when any are given, else the live cluster the kubeconfig points at."""
    paths = list(positional or []) + list(filenames or [])
    if paths:
        if kubeconfig or context:
            raise InputError("--kubeconfig and --context read a live cluster: pass them or snapshot files, not both")
        return load_snapshot(paths, max_file_size or DEFAULT_MAX_BYTES, strict=strict, validate=validate)
    from pysched.cli.live_cmd import load_live_cluster  # imports the kubernetes client only when used
    return load_live_cluster(kubeconfig, context, quiet, strict=strict, validate=validate)


def config_name(path: str | None) -> str:
    """How a ``--config``/``CONFIG`` argument is named: no file, or ``default``, is the v1 defaults."""
    return "default" if path in (None, "", "default") else str(path)


def load_scheduler_config(path: str | None, registry: Registry) -> SchedulerConfig:
    name = config_name(path)
    return load_config(None if name == "default" else name, registry)


def effective_config(path: str | None, registry: Registry, cluster: Cluster, quiet: bool = False) -> SchedulerConfig:
    """``--config`` when given, else the configuration a kube-scheduler-simulator export carries (what in it
    v1.34 would refuse was dropped, with a warning each), else the v1 defaults."""
    if path not in (None, "") or cluster.embedded_config is None:
        return load_scheduler_config(path, registry)
    from pysched.framework.config import build_config

    warn([*cluster.embedded_config_warnings,
          f"using the scheduler configuration of {cluster.embedded_config_source} (--config overrides it)"], quiet)
    return build_config(cluster.embedded_config, registry, source=cluster.embedded_config_source)


def warn(lines: list[str], quiet: bool = False) -> None:
    if quiet:
        return
    for line in lines:
        print(f"warning: {escape_lines(line)}", file=sys.stderr)


def prepare_cluster(cluster: Cluster, *, now: str | None = None, run_cronjobs: bool = False,
                    edits: list[tuple[str, str]] | None = None) -> Cluster:
    """The cluster to simulate: the command line's edits applied in order, then the workloads expanded."""
    from pysched.controllers import ExpansionOptions, expand_cluster, parse_edit_flags
    ordered = edit_order() if edits is None else edits
    return expand_cluster(cluster, parse_edit_flags(ordered), ExpansionOptions(now=now, run_cronjobs=run_cronjobs))
