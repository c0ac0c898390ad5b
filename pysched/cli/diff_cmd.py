"""``pysched diff CONFIG_A CONFIG_B``: the same snapshot under two configurations (or, with
``--snapshot-b``, two snapshots under one configuration), side by side."""

# annotations evaluated where defined (no __future__ import): typer reads the command's, and would compile
# each string form at every start
from typing import Annotated

import typer

from pysched.cli.common import (
    Output,
    TableFormat,
    TieBreak,
    Validate,
    WhatIfCommand,
    build_registry,
    config_name,
    guarded,
    load_inputs,
    load_scheduler_config,
    prepare_cluster,
    warn,
)
from pysched.cli.options import (
    DEFAULT_MAX_FILE_SIZE,
    ContextOption,
    DebugOption,
    EvaluateAllNodesOption,
    FilenameOption,
    KubeconfigOption,
    MaxFileSizeOption,
    NoColorOption,
    OutputOption,
    PluginDirOption,
    QuietOption,
    ReportOption,
    SeedOption,
    StrictOption,
    TableFormatOption,
    TieBreakOption,
    ValidateOption,
    what_if,
)
from pysched.cli.output import emit, progress_bar
from pysched.errors import InputError
from pysched.framework.config import SchedulerConfig
from pysched.framework.registry import Registry
from pysched.scheduler import paired
from pysched.scheduler.simulation import SimulationResult
from pysched.snapshot.cluster import Cluster


def register(app: typer.Typer) -> None:
    """Add the ``diff`` command to ``app``."""

    @app.command("diff", cls=WhatIfCommand)
    def diff(
        config_a: Annotated[str | None, typer.Argument(metavar="CONFIG_A", help=(
            "KubeSchedulerConfiguration of side A ('default': the v1 defaults)."))] = None,
        config_b: Annotated[str | None, typer.Argument(metavar="CONFIG_B", help=(
            "KubeSchedulerConfiguration of side B; not given with --snapshot-b."))] = None,
        filename: FilenameOption = None,
        snapshot_b: Annotated[list[str] | None, typer.Option(
            "--snapshot-b", metavar="FILE", help="Compare this snapshot (side B) with -f (side A) under one config "
                                 "(repeatable).")] = None,
        kubeconfig: KubeconfigOption = None,
        context: ContextOption = None,
        validate: ValidateOption = Validate.warn,
        strict: StrictOption = False,
        max_file_size: MaxFileSizeOption = DEFAULT_MAX_FILE_SIZE,
        output: OutputOption = Output.table,
        tie_break: TieBreakOption = TieBreak.name,
        seed: SeedOption = 0,
        evaluate_all_nodes: EvaluateAllNodesOption = False,
        table_format: TableFormatOption = TableFormat.auto,
        no_color: NoColorOption = False,
        max_rows: Annotated[int, typer.Option(
            "--max-rows", metavar="N", min=0, help="Rows per table of -o table (pods, nodes); 0: all.")] = 50,
        quiet: QuietOption = False,
        plugin_dir: PluginDirOption = None,
        report: ReportOption = None,
        debug: DebugOption = False,
    ) -> None:
        """Compare two simulations: pods placed differently (with the score margin that decided them),
        counts, and node and zone utilisation side by side. Edit flags (--drain, --scale, ...) apply to
        side B only: `pysched diff -f snap.yaml --drain node-7` compares the cluster before and after."""

        def run() -> None:
            from pysched.report.diff import build_diff, build_diff_document, diff_data

            wi = what_if()
            edits = list(wi.edits)
            if edits and not snapshot_b and config_b is None:
                names = (config_name(config_a), config_name(config_a))
            elif snapshot_b:
                if config_b is not None:
                    raise InputError("with --snapshot-b give one configuration (or none for the defaults), "
                                     f"not two: {config_a!r} and {config_b!r}")
                names = (config_name(config_a), config_name(config_a))
            else:
                if config_a is None or config_b is None:
                    raise InputError("diff needs two configurations, CONFIG_A and CONFIG_B ('default' for the v1 "
                                     "defaults), or one and --snapshot-b FILE to compare two snapshots, or edits "
                                     "(--drain NODE, --scale ..., --scenario FILE) to compare before and after")
                names = (config_name(config_a), config_name(config_b))
            registry = build_registry(plugin_dir)
            cfg_a = load_scheduler_config(config_a, registry)
            cfg_b = cfg_a if snapshot_b or config_b is None else load_scheduler_config(config_b, registry)
            loaded_a = load_inputs(None, filename, kubeconfig=kubeconfig, context=context, quiet=quiet,
                                   strict=strict, max_file_size=max_file_size,
                                   validate=None if strict else validate.value)
            loaded_b = load_inputs(None, snapshot_b, strict=strict, max_file_size=max_file_size,
                                   validate=None if strict else validate.value) if snapshot_b else loaded_a
            cluster_a = prepare_cluster(loaded_a, now=wi.now, run_cronjobs=wi.run_cronjobs, edits=[])
            cluster_b = prepare_cluster(loaded_b, now=wi.now, run_cronjobs=wi.run_cronjobs, edits=edits)
            warn(cluster_a.warnings, quiet)
            if snapshot_b or edits:
                warn([f"{'--snapshot-b' if snapshot_b else 'side B'}: {w}" for w in cluster_b.warnings
                      if w not in cluster_a.warnings], quiet)
            snap_a = list(filename or []) or ["live cluster" + (f" ({context})" if context else "")]
            snap_b = list(snapshot_b) if snapshot_b else list(snap_a)
            if edits:
                snap_b = [*snap_b, "edited: " + " ".join(f"--{k} {v}" for k, v in edits)]
            ra, rb = simulate_pair(cluster_a, cfg_a, cluster_b, cfg_b, registry, tie_break.value, seed,
                                   quiet=quiet, evaluate_all_nodes=evaluate_all_nodes)
            view = build_diff(ra, rb, config_a=names[0], config_b=names[1], snapshot_a=snap_a, snapshot_b=snap_b)
            blocks = build_diff_document(view, max_rows=max_rows)
            emit(output, lambda: diff_data(view), lambda: blocks, table_format, no_color)
            if report:
                from pysched.report.html import diff_charts, render_document_report, write_report
                write_report(report, render_document_report(
                    f"pysched diff: A = {names[0]}, B = {names[1]}", blocks, diff_charts(view),
                    sources=sorted(set(snap_a) | set(snap_b))))

        guarded(run, debug)


def simulate_pair(cluster_a: Cluster, cfg_a: SchedulerConfig, cluster_b: Cluster, cfg_b: SchedulerConfig,
                  registry: Registry, tie_break: str = "name", seed: int = 0, quiet: bool = True,
                  evaluate_all_nodes: bool = False) -> tuple[SimulationResult, SimulationResult]:
    """``scheduler.paired.simulate_pair`` with the command's progress bar."""
    return paired.simulate_pair(cluster_a, cfg_a, cluster_b, cfg_b, registry, tie_break, seed,
                                progress=lambda: progress_bar(quiet), evaluate_all_nodes=evaluate_all_nodes)
