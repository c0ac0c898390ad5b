"""``pysched capacity``: how many more copies of a pod fit, and how many nodes of a shape are needed."""

# annotations evaluated where defined (no __future__ import): typer reads the command's, and would compile
# each string form at every start
from enum import StrEnum
from typing import Annotated

import typer

from pysched.cli.common import (
    build_registry,
    effective_config,
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
    MoreFilenamesOption,
    NoColorOption,
    Output,
    OutputOption,
    PluginDirOption,
    QuietOption,
    ReportOption,
    SeedOption,
    SnapshotArgument,
    StrictOption,
    TableFormat,
    TableFormatOption,
    TieBreak,
    Validate,
    ValidateOption,
    WhatIfCommand,
    what_if,
)
from pysched.cli.output import print_blocks, write_data
from pysched.errors import InputError
from pysched.scheduler.capacity import (
    DEFAULT_MAX_NODES,
    CapacityOptions,
    Template,
    check_template,
    pod_of_workload,
    run_capacity,
)
from pysched.snapshot.loader import (
    DEFAULT_MAX_BYTES,
    NOTHING_TO_DO,
    iter_objects,
    parse_documents,
    read_source,
)


class Mode(StrEnum):
    independent = "independent"
    together = "together"


def read_single_object(path: str, what: str, max_bytes: int = DEFAULT_MAX_BYTES) -> dict:
    """The one object of a template file (a List of one item counts); anything else is bad input."""
    text = read_source(path, max_bytes)
    objects = [obj for _doc, obj, _where in iter_objects(parse_documents(text, path))]
    if len(objects) != 1:
        raise InputError(f"{what} must hold exactly one object, found {len(objects)}", file=path)
    return objects[0]


def load_templates(paths: list[str], max_bytes: int, workloads: list[str] | None = None) -> list[Template]:
    """The ``--pod`` templates, then the ``--workload`` ones (each its pod template)."""
    out = []
    for path in paths:
        out.append(check_template(read_single_object(path, "a --pod template", max_bytes), path))
    for path in workloads or []:
        obj = read_single_object(path, "a --workload file", max_bytes)
        out.append(check_template(pod_of_workload(obj, path), path))
    return out


def register(app: typer.Typer) -> None:
    """Add the ``capacity`` command to ``app``."""

    @app.command("capacity", cls=WhatIfCommand)
    def capacity(
        snapshot: SnapshotArgument = None,
        filename: MoreFilenamesOption = None,
        pod: Annotated[list[str] | None, typer.Option(
            "--pod", metavar="FILE", help="A Pod template file: how many more copies of it fit (repeatable).")] = None,
        workload: Annotated[list[str] | None, typer.Option(
            "--workload", metavar="FILE", help="A Deployment, ReplicaSet, StatefulSet, Job, ... file: how many more copies of its "
                               "pod template fit (repeatable; after the --pod templates).")] = None,
        mode: Annotated[Mode, typer.Option(
            "--mode", help="Several templates: independent (each alone against the same cluster) or together "
                           "(round-robin on one cluster).")] = Mode.independent,
        max_copies: Annotated[int | None, typer.Option(
            "--max", metavar="N", min=0, help="Try at most this many copies per template (stop reason 'limit reached').")
        ] = None,
        allow_preemption: Annotated[bool, typer.Option(
            "--allow-preemption", help="Copies may preempt running pods (their PriorityClass's policy); the "
                                       "victims are reported. Default: copies never evict anything.")] = False,
        node_template: Annotated[str | None, typer.Option(
            "--node-template", metavar="FILE", help="A Node file: the smallest number of copies of it that makes every pending "
                                    "pod (and --replicas copies of each --pod) schedule.")] = None,
        replicas: Annotated[int, typer.Option(
            "--replicas", metavar="N", min=0, help="With --node-template: copies of each --pod template to place too.")] = 0,
        max_nodes: Annotated[int, typer.Option(
            "--max-nodes", metavar="N", min=0, help="With --node-template: the most node copies to try.")] = DEFAULT_MAX_NODES,
        config: ConfigOption = None,
        output: OutputOption = Output.table,
        tie_break: Annotated[TieBreak, typer.Option(
            "--tie-break", help="Host tie-break (capacity defaults to name, as the reference data).")
        ] = TieBreak.name,
        seed: SeedOption = 0,
        table_format: TableFormatOption = TableFormat.auto,
        no_color: NoColorOption = False,
        max_rows: Annotated[int, typer.Option(
            "--max-rows", metavar="N", min=0, help="Rows per table of -o table; 0: all.")] = 50,
        kubeconfig: KubeconfigOption = None,
        context: ContextOption = None,
        validate: ValidateOption = Validate.warn,
        strict: StrictOption = False,
        max_file_size: MaxFileSizeOption = DEFAULT_MAX_FILE_SIZE,
        plugin_dir: PluginDirOption = None,
        quiet: QuietOption = False,
        report: ReportOption = None,
        debug: DebugOption = False,
    ) -> None:
        """How many more copies of a pod fit (and what stops the next one), or how many nodes of a shape
        are needed so that every pending pod schedules. Exit 0 when answered (also when --max is reached
        or no number of nodes suffices), 2 for bad input, 1 for an internal fault."""

        def run() -> None:
            wi = what_if()
            now = wi.now
            if not pod and not workload and node_template is None:
                raise InputError("capacity needs at least one --pod or --workload template (or --node-template)")
            if node_template is None and (replicas or max_nodes != DEFAULT_MAX_NODES):
                raise InputError("--replicas and --max-nodes go with --node-template")
            if now is not None:
                from pysched.model.timeutil import parse_time
                if parse_time(now) is None:
                    raise InputError(f"--now must be an RFC 3339 time such as 2025-03-01T08:00:00Z, got {now!r}")
            registry = build_registry(plugin_dir)
            if config:
                load_scheduler_config(config, registry)  # a bad --config is reported before any input is read
            templates = load_templates(list(pod or []), max_file_size, list(workload or []))
            node_raw = read_single_object(node_template, "a --node-template file", max_file_size) \
                if node_template else None
            cluster = load_inputs(snapshot, filename, kubeconfig=kubeconfig, context=context, quiet=quiet,
                                  strict=strict, max_file_size=max_file_size,
                                  validate=None if strict else validate.value)
            warn([w for w in cluster.warnings if not w.startswith(NOTHING_TO_DO)], quiet)
            cfg = effective_config(config, registry, cluster, quiet)
            opts = CapacityOptions(mode=mode.value, max_copies=max_copies, allow_preemption=allow_preemption,
                                   tie_break=tie_break.value, seed=seed, node_template=node_raw,
                                   node_template_source=node_template or "", replicas=replicas,
                                   max_nodes=max_nodes, now=now, edits=list(wi.edits),
                                   run_cronjobs=wi.run_cronjobs)
            answer = run_capacity(cluster, templates, cfg, registry, opts)
            warn([w for w in answer.warnings if w not in cluster.warnings], quiet)
            from pysched.report.capacity import build_capacity_document
            blocks = build_capacity_document(answer, max_rows)
            if output == Output.table:
                print_blocks(blocks, table_format, no_color)
            else:
                write_data(answer.to_dict(), output)
            if report:
                from pysched.report.html import capacity_charts, render_document_report, write_report
                write_report(report, render_document_report("pysched capacity", blocks, capacity_charts(answer),
                                                            sources=list(snapshot or []) + list(filename or [])))

        guarded(run, debug)
