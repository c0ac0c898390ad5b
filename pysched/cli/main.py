"""``pysched``: what would kube-scheduler v1.34 do with this cluster?"""

from __future__ import annotations

import dataclasses
import sys
from typing import Annotated

import typer

from pysched import K8S_VERSION, __version__
from pysched.cli.common import (
    EXIT_INPUT,
    Output,
    TableFormat,
    TieBreak,
    Validate,
    build_registry,
    guarded,
    load_inputs,
    load_scheduler_config,
    warn,
)
from pysched.cli.options import (
    DEFAULT_MAX_FILE_SIZE,
    ConfigOption,
    ContextOption,
    DebugOption,
    KubeconfigOption,
    MaxFileSizeOption,
    NoColorOption,
    OutputOption,
    PluginDirOption,
    SeedOption,
    StrictOption,
    TieBreakOption,
    ValidateOption,
)
from pysched.cli.output import progress_bar, table_style
from pysched.report.serialize import to_json, to_yaml
from pysched.scheduler.simulation import Simulation, SimulationOptions, SimulationResult

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="What-if analyzer for the Kubernetes scheduler (kube-scheduler v1.34 semantics).")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"pysched {__version__} (kube-scheduler {K8S_VERSION} semantics)")
        raise typer.Exit()


@app.callback()
def main_callback(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """What-if analyzer for the Kubernetes scheduler."""


@app.command()
def simulate(
    snapshot: Annotated[list[str] | None, typer.Argument(help="Snapshot files or folders ('-' for stdin).")] = None,
    filename: Annotated[list[str] | None, typer.Option("-f", "--filename",
                                                       help="More snapshot files or folders (repeatable).")] = None,
    config: ConfigOption = None,
    output: OutputOption = Output.table,
    trace: Annotated[bool, typer.Option("--trace", help="Every filter verdict and score.")] = False,
    pod: Annotated[list[str] | None, typer.Option("--pod", help="Trace only these pods (ns/name).")] = None,
    tie_break: TieBreakOption = TieBreak.name,
    seed: SeedOption = 0,
    table_format: Annotated[TableFormat, typer.Option(
        "--format", help="Tables of -o table: rich (boxes, bars, colour), plain (text), github (markdown); "
                         "auto: rich on a terminal, else plain.")] = TableFormat.auto,
    no_color: NoColorOption = False,
    max_rows: Annotated[int, typer.Option(
        "--max-rows", min=0, help="Rows per table of -o table (pods, reasons, nodes, scores); 0: all.")] = 50,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    namespace: Annotated[str | None, typer.Option(
        "-n", "--namespace", help="Print only this namespace's pods (the whole cluster is simulated).")] = None,
    validate: ValidateOption = Validate.warn,
    strict: StrictOption = False,
    max_file_size: MaxFileSizeOption = DEFAULT_MAX_FILE_SIZE,
    plugin_dir: PluginDirOption = None,
    fail_fast: Annotated[bool, typer.Option(
        "--fail-fast", help="Stop at the first cycle that ends in an error (a plugin that raised, a failing "
                            "extender); exit 1.")] = False,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No warnings or progress bar on stderr.")] = False,
    debug: DebugOption = False,
) -> None:
    """Simulate every pending pod of a snapshot (or of the live cluster) and print where each would land."""

    def run() -> None:
        registry = build_registry(plugin_dir)
        cfg = load_scheduler_config(config, registry)
        cluster = load_inputs(snapshot, filename, kubeconfig=kubeconfig, context=context, quiet=quiet,
                              strict=strict, max_file_size=max_file_size,
                              validate=None if strict else validate.value)
        warn(cluster.warnings, quiet)
        opts = SimulationOptions(tie_break=tie_break.value, seed=seed, trace=trace,
                                 trace_pods=set(pod) if pod else None, fail_fast=fail_fast)
        sim = Simulation(cluster, cfg, registry, opts)
        with progress_bar(quiet) as progress:
            result = sim.run(progress=progress)
        if pod:
            simulated = {c.pod for c in result.cycles}
            warn([f"--pod {p}: no pending pod of that namespace/name was simulated"
                  for p in sorted(set(pod) - simulated)], quiet)
        if namespace:
            result = _only_namespace(result, namespace)
        if output == Output.json:
            sys.stdout.write(to_json(result.to_dict()))
        elif output == Output.yaml:
            sys.stdout.write(to_yaml(result.to_dict()))
        else:
            _print_table(result, table_format, no_color, max_rows)

    guarded(run, debug)


def _only_namespace(result: SimulationResult, namespace: str) -> SimulationResult:
    """What is printed for -n: the pods of one namespace; the simulation itself saw the whole cluster."""
    prefix = f"{namespace}/"
    return dataclasses.replace(
        result,
        cycles=[c for c in result.cycles if c.pod.startswith(prefix)],
        bindings={k: v for k, v in result.bindings.items() if k.startswith(prefix)},
        pending=[p for p in result.pending if p.startswith(prefix)],
        not_simulated=[(p, r) for p, r in result.not_simulated if p.startswith(prefix)],
        ignored_pods=[(p, r) for p, r in result.ignored_pods if p.startswith(prefix)])


def _print_table(result: SimulationResult, fmt: TableFormat, no_color: bool, max_rows: int) -> None:
    style = table_style(fmt)
    if style == TableFormat.rich:
        from pysched.report.table import make_console, render_simulation
        render_simulation(result, make_console(color=not no_color), max_rows=max_rows)
    else:
        from pysched.report.plain import render_plain
        sys.stdout.write(render_plain(result, style.value, max_rows=max_rows))


from pysched.cli import capacity_cmd, diff_cmd, explain_cmd, live_cmd, plugins_cmd  # noqa: E402 - commands register on the app defined above

explain_cmd.register(app)
diff_cmd.register(app)
live_cmd.register(app)
plugins_cmd.register(app)
capacity_cmd.register(app)


def main() -> None:
    try:
        app()
    except SystemExit as e:
        code = e.code
        if code not in (0, None) and not isinstance(code, int):
            sys.exit(EXIT_INPUT)
        raise


if __name__ == "__main__":
    main()
