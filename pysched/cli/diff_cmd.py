"""``pysched diff CONFIG_A CONFIG_B``: the same snapshot under two configurations (or, with
``--snapshot-b``, two snapshots under one configuration), side by side."""

from __future__ import annotations

from typing import Annotated

import typer

from pysched.cli.common import (
    Output,
    TableFormat,
    TieBreak,
    Validate,
    build_registry,
    config_name,
    guarded,
    load_inputs,
    load_scheduler_config,
    warn,
)
from pysched.cli.options import (
    DEFAULT_MAX_FILE_SIZE,
    ContextOption,
    DebugOption,
    FilenameOption,
    KubeconfigOption,
    MaxFileSizeOption,
    NoColorOption,
    OutputOption,
    PluginDirOption,
    QuietOption,
    SeedOption,
    StrictOption,
    TableFormatOption,
    TieBreakOption,
    ValidateOption,
)
from pysched.cli.output import emit, progress_bar
from pysched.errors import InputError
from pysched.framework.config import SchedulerConfig
from pysched.framework.registry import Registry
from pysched.scheduler.simulation import Simulation, SimulationOptions, SimulationResult
from pysched.snapshot.cluster import Cluster

# Tracing a pod costs one Filter run per node (its filter matrix) and keeps that matrix: the score margins
# are computed for as many pods as this many node evaluations allow. Below it (pending pods x nodes) both
# simulations trace every pod at once; above it they run untraced, and then again with only the pods that
# differ traced (the first ones by name, up to the budget).
TRACE_ALL_LIMIT = 200_000
MARGIN_BUDGET = 200_000


def register(app: typer.Typer) -> None:
    """Add the ``diff`` command to ``app``."""

    @app.command("diff")
    def diff(
        config_a: Annotated[str | None, typer.Argument(metavar="CONFIG_A", help=(
            "KubeSchedulerConfiguration of side A ('default': the v1 defaults)."))] = None,
        config_b: Annotated[str | None, typer.Argument(metavar="CONFIG_B", help=(
            "KubeSchedulerConfiguration of side B; not given with --snapshot-b."))] = None,
        filename: FilenameOption = None,
        snapshot_b: Annotated[list[str] | None, typer.Option(
            "--snapshot-b", help="Compare this snapshot (side B) with -f (side A) under one config "
                                 "(repeatable).")] = None,
        kubeconfig: KubeconfigOption = None,
        context: ContextOption = None,
        validate: ValidateOption = Validate.warn,
        strict: StrictOption = False,
        max_file_size: MaxFileSizeOption = DEFAULT_MAX_FILE_SIZE,
        output: OutputOption = Output.table,
        tie_break: TieBreakOption = TieBreak.name,
        seed: SeedOption = 0,
        table_format: TableFormatOption = TableFormat.auto,
        no_color: NoColorOption = False,
        max_rows: Annotated[int, typer.Option(
            "--max-rows", min=0, help="Rows per table of -o table (pods, nodes); 0: all.")] = 50,
        quiet: QuietOption = False,
        plugin_dir: PluginDirOption = None,
        debug: DebugOption = False,
    ) -> None:
        """Compare two simulations: pods placed differently (with the score margin that decided them),
        counts, and node and zone utilisation side by side."""

        def run() -> None:
            from pysched.report.diff import build_diff, build_diff_document, diff_data

            if snapshot_b:
                if config_b is not None:
                    raise InputError("with --snapshot-b give one configuration (or none for the defaults), "
                                     f"not two: {config_a!r} and {config_b!r}")
                names = (config_name(config_a), config_name(config_a))
            else:
                if config_a is None or config_b is None:
                    raise InputError("diff needs two configurations, CONFIG_A and CONFIG_B ('default' for the v1 "
                                     "defaults), or one and --snapshot-b FILE to compare two snapshots")
                names = (config_name(config_a), config_name(config_b))
            registry = build_registry(plugin_dir)
            cfg_a = load_scheduler_config(config_a, registry)
            cfg_b = cfg_a if snapshot_b else load_scheduler_config(config_b, registry)
            cluster_a = load_inputs(None, filename, kubeconfig=kubeconfig, context=context, quiet=quiet,
                                    strict=strict, max_file_size=max_file_size,
                                    validate=None if strict else validate.value)
            warn(cluster_a.warnings, quiet)
            cluster_b = load_inputs(None, snapshot_b, strict=strict, max_file_size=max_file_size,
                                    validate=None if strict else validate.value) if snapshot_b else cluster_a
            if snapshot_b:
                warn([f"--snapshot-b: {w}" for w in cluster_b.warnings], quiet)
            snap_a = list(filename or []) or ["live cluster" + (f" ({context})" if context else "")]
            snap_b = list(snapshot_b) if snapshot_b else snap_a
            ra, rb = simulate_pair(cluster_a, cfg_a, cluster_b, cfg_b, registry, tie_break.value, seed,
                                   quiet=quiet)
            view = build_diff(ra, rb, config_a=names[0], config_b=names[1], snapshot_a=snap_a, snapshot_b=snap_b)
            emit(output, lambda: diff_data(view), lambda: build_diff_document(view, max_rows=max_rows),
                 table_format, no_color)

        guarded(run, debug)


def simulate_pair(cluster_a: Cluster, cfg_a: SchedulerConfig, cluster_b: Cluster, cfg_b: SchedulerConfig,
                  registry: Registry, tie_break: str = "name", seed: int = 0, quiet: bool = True
                  ) -> tuple[SimulationResult, SimulationResult]:
    """Both simulations (a simulation never changes the loaded snapshot: both may share one).

    Small clusters are traced in full; on large ones the pods placed differently are simulated again with
    only them traced, which gives the same decisions plus their scores.
    """
    from pysched.report.diff import changed_pods, placements

    def simulate(cluster: Cluster, cfg: SchedulerConfig, trace: bool, pods: set[str] | None) -> SimulationResult:
        opts = SimulationOptions(tie_break=tie_break, seed=seed, trace=trace, trace_pods=pods)
        with progress_bar(quiet) as progress:
            return Simulation(cluster, cfg, registry, opts).run(progress=progress)

    def size(cluster: Cluster) -> int:
        return sum(1 for p in cluster.pods if not p.node_name) * max(len(cluster.nodes), 1)

    small = max(size(cluster_a), size(cluster_b)) <= TRACE_ALL_LIMIT
    ra = simulate(cluster_a, cfg_a, small, None)
    rb = simulate(cluster_b, cfg_b, small, None)
    if not small:
        changed = [c.pod for c in changed_pods(placements(ra), placements(rb))]
        nodes = max(len(cluster_a.nodes), len(cluster_b.nodes), 1)
        traced = set(changed[:max(MARGIN_BUDGET // nodes, 1)])
        if traced:
            ra = simulate(cluster_a, cfg_a, True, traced)
            rb = simulate(cluster_b, cfg_b, True, traced)
    return ra, rb
