"""``pysched``: what would kube-scheduler v1.34 do with this cluster?"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer

from pysched import __version__
from pysched.cli.common import (
    EXIT_INPUT,
    build_registry,
    guarded,
    load_inputs,
    load_scheduler_config,
    warn,
)
from pysched.report.serialize import to_json, to_yaml
from pysched.scheduler.simulation import Simulation, SimulationOptions

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="What-if analyzer for the Kubernetes scheduler (kube-scheduler v1.34 semantics).")


class Output(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


class TieBreak(StrEnum):
    name = "name"
    random = "random"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"pysched {__version__} (kube-scheduler v1.34.1 semantics)")
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
    config: Annotated[str | None, typer.Option("--config", help="KubeSchedulerConfiguration file.")] = None,
    output: Annotated[Output, typer.Option("-o", "--output", help="Output format.")] = Output.table,
    trace: Annotated[bool, typer.Option("--trace", help="Every filter verdict and score.")] = False,
    pod: Annotated[list[str] | None, typer.Option("--pod", help="Trace only these pods (ns/name).")] = None,
    tie_break: Annotated[TieBreak, typer.Option("--tie-break", help="Host tie-break.")] = TieBreak.name,
    seed: Annotated[int, typer.Option("--seed", help="Seed for --tie-break random.")] = 0,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No warnings on stderr.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Tracebacks for errors.")] = False,
) -> None:
    """Simulate every pending pod of a snapshot and print where each would land."""

    def run() -> None:
        registry = build_registry()
        cfg = load_scheduler_config(config, registry)
        cluster = load_inputs(snapshot, filename)
        warn(cluster.warnings, quiet)
        opts = SimulationOptions(tie_break=tie_break.value, seed=seed, trace=trace,
                                 trace_pods=set(pod) if pod else None)
        result = Simulation(cluster, cfg, registry, opts).run()
        if output == Output.json:
            sys.stdout.write(to_json(result.to_dict()))
        elif output == Output.yaml:
            sys.stdout.write(to_yaml(result.to_dict()))
        else:
            from pysched.report.table import render_simulation
            render_simulation(result)

    guarded(run, debug)


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
