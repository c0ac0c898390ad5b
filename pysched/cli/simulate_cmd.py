"""``pysched simulate``: every pending pod of a snapshot (or of the live cluster), where each would land."""

# annotations evaluated where defined (no __future__ import): typer reads the command's, and would compile
# each string form at every start
import dataclasses
import sys
from typing import Annotated, cast

import typer

from pysched.cli.common import (
    EXIT_FAIL_ON,
    build_registry,
    check_fail_on,
    effective_config,
    guarded,
    load_inputs,
    load_scheduler_config,
    prepare_cluster,
    warn,
)
from pysched.cli.options import (
    DEFAULT_MAX_FILE_SIZE,
    ConfigOption,
    ContextOption,
    DebugOption,
    EvaluateAllNodesOption,
    FailOn,
    KubeconfigOption,
    MaxFileSizeOption,
    MoreFilenamesOption,
    NoColorOption,
    Output,
    OutputOption,
    PluginDirOption,
    SeedOption,
    SnapshotArgument,
    StrictOption,
    TableFormat,
    TieBreak,
    TieBreakOption,
    Validate,
    ValidateOption,
    WhatIfCommand,
    what_if,
)
from pysched.cli.output import progress_bar, table_style
from pysched.errors import InputError
from pysched.report.serialize import to_json, to_yaml
from pysched.report.summary import ReportData
from pysched.scheduler.simulation import Simulation, SimulationOptions, SimulationResult
from pysched.snapshot.cluster import Cluster


def register(app: typer.Typer) -> None:
    """Add the ``simulate`` command to ``app``."""
    app.command(cls=WhatIfCommand)(simulate)


def simulate(
    snapshot: SnapshotArgument = None,
    filename: MoreFilenamesOption = None,
    config: ConfigOption = None,
    output: OutputOption = Output.table,
    trace: Annotated[bool, typer.Option("--trace", help="Every filter verdict and score.")] = False,
    pod: Annotated[list[str] | None, typer.Option("--pod", metavar="NS/NAME", help="Trace only these pods (ns/name).")] = None,
    tie_break: TieBreakOption = TieBreak.name,
    seed: SeedOption = 0,
    evaluate_all_nodes: EvaluateAllNodesOption = False,
    table_format: Annotated[TableFormat, typer.Option(
        "--format", help="Tables of -o table: rich (boxes, bars, colour), plain (text), github (markdown); "
                         "auto: rich on a terminal, else plain.")] = TableFormat.auto,
    no_color: NoColorOption = False,
    max_rows: Annotated[int, typer.Option(
        "--max-rows", metavar="N", min=0, help="Rows per table of -o table (pods, reasons, nodes, scores); 0: all.")] = 50,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    namespace: Annotated[str | None, typer.Option(
        "-n", "--namespace", metavar="NAMESPACE", help="Print only this namespace's pods (the whole cluster is simulated).")] = None,
    validate: ValidateOption = Validate.warn,
    strict: StrictOption = False,
    max_file_size: MaxFileSizeOption = DEFAULT_MAX_FILE_SIZE,
    plugin_dir: PluginDirOption = None,
    fail_fast: Annotated[bool, typer.Option(
        "--fail-fast", help="Stop at the first cycle that ends in an error (a plugin that raised, a failing "
                            "extender); exit 1.")] = False,
    fail_on: Annotated[list[FailOn] | None, typer.Option(
        "--fail-on", metavar="KIND", help="unschedulable|preemption|error: exit 4 when any printed pod ends "
                                          "without a node, preempts, or ends in an error (repeatable).")] = None,
    expect: Annotated[str | None, typer.Option(
        "--expect", metavar="FILE", help="Check the expect: clauses of FILE (allScheduled, maxPending, "
                                         "noPreemption, pods/workload with landOn); exit 4 when one fails.")] = None,
    junit: Annotated[str | None, typer.Option(
        "--junit", metavar="FILE", help="Write the --expect verdicts as JUnit XML to FILE (one test case each).")
    ] = None,
    annotate: Annotated[str | None, typer.Option(
        "--annotate", metavar="FILE", help="Also write the pods, with pysched's results as "
                                           "kube-scheduler-simulator result annotations, and the nodes to FILE "
                                           "(the simulator's import JSON).")] = None,
    report: Annotated[str | None, typer.Option(
        "--report", metavar="FILE", help="Also write a self-contained HTML report (charts, pods table, "
                                         "per-pod drill-down) to FILE.")] = None,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No warnings or progress bar on stderr.")] = False,
    debug: DebugOption = False,
) -> None:
    """Simulate every pending pod of a snapshot (or of the live cluster) and print where each would land.

    Workloads (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs with --run-cronjobs)
    become the pods their controllers would create; edit flags change the cluster first, in the order given.
    """

    def run() -> int:
        wi = what_if()
        if any(kind == "scenario" for kind, _ in wi.edits):
            # registers the scenario files' expect: step before any scenario file is read (a run without
            # --scenario or --expect leaves pysched.report.expect unloaded)
            from pysched.report import expect as _expect  # noqa: F401
        expectations = read_expectations(expect) if expect else None
        from_scenarios = scenario_expectations(list(wi.edits))
        if from_scenarios:
            expectations = [*(expectations or []), *from_scenarios]
        if junit and not expectations:
            raise InputError("--junit writes the verdicts of expect: clauses (--expect FILE or a --scenario "
                             "file's expect: step): give one")
        registry = build_registry(plugin_dir)
        if config:
            load_scheduler_config(config, registry)  # a bad --config is reported before any input is read
        loaded = load_inputs(snapshot, filename, kubeconfig=kubeconfig, context=context, quiet=quiet,
                             strict=strict, max_file_size=max_file_size,
                             validate=None if strict else validate.value)
        cluster = prepare_cluster(loaded, now=wi.now, run_cronjobs=wi.run_cronjobs)
        warn(cluster.warnings, quiet)
        cfg = effective_config(config, registry, cluster, quiet)
        # the HTML drill-down shows filter matrices and scores: traced for every pod while that stays small
        pending = sum(1 for p in cluster.pods if not p.node_name)
        auto_trace = not trace and (bool(annotate) or (
            bool(report) and pending * max(len(cluster.nodes), 1) <= REPORT_TRACE_LIMIT))
        opts = SimulationOptions(tie_break=tie_break.value, seed=seed, trace=trace or auto_trace,
                                 trace_pods=set(pod) if pod and trace else None, fail_fast=fail_fast,
                                 evaluate_all_nodes=evaluate_all_nodes)
        sim = Simulation(cluster, cfg, registry, opts)
        with progress_bar(quiet) as progress:
            result = sim.run(progress=progress)
        if pod and not trace:
            warn(["--pod only chooses which pods --trace traces: without --trace it has no effect"], quiet)
        if pod:
            simulated = {c.pod for c in result.cycles}
            warn([f"--pod {p}: no pending pod of that namespace/name was simulated"
                  for p in sorted(set(pod) - simulated)], quiet)
        if namespace:
            warn(namespace_warnings(cluster, namespace), quiet)
            result = _only_namespace(result, namespace)
        from pysched.report.summary import report_data
        data = report_data(result)
        # what is printed is what the options asked for, whatever the report traced
        printed = dataclasses.replace(result, options=dataclasses.replace(opts, trace=trace)) if auto_trace \
            else result
        if output == Output.json:
            sys.stdout.write(to_json(dict(printed.to_dict(), summary=data.to_json_dict())))
        elif output == Output.yaml:
            sys.stdout.write(to_yaml(dict(printed.to_dict(), summary=data.to_dict())))
        else:
            _print_table(printed, table_format, no_color, max_rows, data)
        if annotate:
            from pysched.report.simulator import write_annotated_export
            write_annotated_export(annotate, result, cfg)
        if report:
            from pysched.report.html import write_simulation_report
            write_simulation_report(report, result, data, sources=list(snapshot or []) + list(filename or []))
        code = check_fail_on(fail_on, data.counts, quiet)
        if expectations is not None:
            code = check_expectations(expectations, result, data, junit) or code
        return code

    code = guarded(run, debug)
    if code:
        raise typer.Exit(code)


REPORT_TRACE_LIMIT = 200_000  # pending pods x nodes up to which --report traces every pod


def read_expectations(path: str) -> list:
    """The expect: clauses of a YAML file, read as bounded as a snapshot."""
    from pysched.report.expect import parse_expectations
    from pysched.snapshot.loader import read_source
    from pysched.snapshot.reader import load_yaml_one

    docs = load_yaml_one(read_source(path), path)
    if len(docs) != 1:
        raise InputError(f"expected one YAML document with an expect: list, found {len(docs)}", file=path)
    return parse_expectations(docs[0], path)


def scenario_expectations(edits: list[tuple[str, str]]) -> list:
    """The expect: steps of the --scenario files, in command-line order (their edits are applied
    separately, by the controllers layer)."""
    from pysched.controllers.edits import parse_scenario

    found: list = []
    for kind, path in edits:
        if kind == "scenario":
            found.extend(e for _, key, parsed in parse_scenario(path).extras if key == "expect"
                         for e in cast(list, parsed))
    return found


def check_expectations(expectations: list, result: SimulationResult, data: ReportData, junit: str | None) -> int:
    """Each verdict on stderr (even with -q: they are the answer), JUnit XML when asked; EXIT_FAIL_ON when one
    failed."""
    from pysched.report.expect import check, junit_xml

    verdicts = check(expectations, result, data)
    for v in verdicts:
        print(f"expect: {'PASS' if v.passed else 'FAIL'} {v.expectation.name}: {v.message}", file=sys.stderr)
        if not v.passed:
            for line in v.details[:10]:
                print(f"  {line}", file=sys.stderr)
    if junit:
        try:
            with open(junit, "w", encoding="utf-8") as f:
                f.write(junit_xml(verdicts))
        except OSError as e:
            raise InputError(f"cannot write {junit}: {e.strerror or e}", field="--junit") from None
    return EXIT_FAIL_ON if any(not v.passed for v in verdicts) else 0


def namespace_warnings(cluster: Cluster, namespace: str) -> list[str]:
    """``-n NS`` naming a namespace the input does not have prints nothing: say so rather than stay silent."""
    if namespace in cluster.namespaces or any(p.namespace == namespace for p in cluster.pods):
        return []
    known = sorted(set(cluster.namespaces) | {p.namespace for p in cluster.pods})
    return [f"-n {namespace}: no namespace of that name and no pod in it in the input "
            f"(namespaces: {', '.join(known) or 'none'})"]


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


def _print_table(result: SimulationResult, fmt: TableFormat, no_color: bool, max_rows: int,
                 data: ReportData) -> None:
    style = table_style(fmt)
    if style == TableFormat.rich:
        from pysched.report.table import make_console, render_simulation
        render_simulation(result, make_console(color=not no_color), max_rows=max_rows, data=data)
    else:
        from pysched.report.plain import render_plain
        sys.stdout.write(render_plain(result, style.value, max_rows=max_rows, data=data))
