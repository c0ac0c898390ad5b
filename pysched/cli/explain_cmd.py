"""``pysched explain POD``: why one pod goes where it goes, or stays pending, and what would make it fit."""

# annotations evaluated where defined (no __future__ import): typer reads the command's, and would compile
# each string form at every start
import difflib
from typing import Annotated

import typer

from pysched.cli.common import (
    EXIT_UNSCHEDULABLE,
    Output,
    TableFormat,
    TieBreak,
    Validate,
    WhatIfCommand,
    build_registry,
    effective_config,
    guarded,
    load_inputs,
    load_scheduler_config,
    prepare_cluster,
    warn,
)

# the names other commands imported from here before cli/options.py and cli/output.py existed
from pysched.cli.options import (
    CONTEXT_HELP as CONTEXT_HELP,
    DEFAULT_MAX_FILE_SIZE,
    FILENAME_HELP as FILENAME_HELP,
    FORMAT_HELP as FORMAT_HELP,
    KUBECONFIG_HELP as KUBECONFIG_HELP,
    ConfigOption,
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
from pysched.cli.output import (
    PROGRESS_DELAY as PROGRESS_DELAY,
    emit,
    print_blocks as print_blocks,
    progress_bar,
    write_data as write_data,
)
from pysched.controllers.engine import Expansion
from pysched.errors import InputError
from pysched.model.objects import Pod
from pysched.scheduler.trace import Outcome
from pysched.snapshot.cluster import Cluster
from pysched.snapshot.kinds import POD_CREATING

# ---------------------------------------------------------------------------------------------- the pod
WORKLOAD_KINDS = POD_CREATING


def resolve_created(cluster: Cluster, ref: str) -> tuple[str, str]:
    """(pod reference to explain, a note for the reader): ``Kind/namespace/name`` names the first pending pod
    of that workload in queue order; a pod an edit or a controller removed names its replacement."""
    exp = cluster.expansion if isinstance(cluster.expansion, Expansion) else Expansion("")
    parts = ref.split("/")
    if len(parts) == 3 and parts[0] in WORKLOAD_KINDS:
        pending = [p for p in cluster.pods if not p.node_name and cluster.pod_workloads.get(p.key) == ref]
        if not pending:
            known = sorted(set(cluster.pod_workloads.values()))
            hint = _close(ref, known)
            raise InputError(f"workload {ref} has no pending pod" + (f"; did you mean {', '.join(hint)}?" if hint
                                                                     and ref not in known else ""))
        first = min(pending, key=lambda p: (-p.priority, p.meta.creation, p.index))
        return first.key, f"{first.key} is the first pending pod of {ref}"
    evicted = exp.evicted
    key = ref if "/" in ref else next((k for k in evicted if k.split("/", 1)[1] == ref), ref)
    if key in evicted and not any(p.key == key and key not in exp.replacements for p in cluster.pods):
        present = {p.key for p in cluster.pods}
        note = f"pod {key} was removed by the {evicted[key]}"
        new = next((n for n, old in exp.replacements.items() if old == key), None)
        while new is not None and new not in present and new in evicted:
            note += f"; its replacement {new} was removed by the {evicted[new]}"
            new = next((n for n, old in exp.replacements.items() if old == new), None)
        if new is None or new not in present:
            raise _Removed(f"{note}; nothing replaces it")
        return new, f"{note}; its controller replaced it with {new}"
    return ref, ""


class _Removed(Exception):
    """The pod was removed before the simulation and nothing replaced it: said, not explained."""


def resolve_pod(cluster: Cluster, ref: str, namespace: str | None) -> Pod:
    """``name``, ``namespace/name`` or ``-n namespace name``; unknown pods name the closest matches."""
    ns: str | None
    if "/" in ref:
        ns, _, name = ref.partition("/")
        if namespace and namespace != ns:
            raise InputError(f"pod {ref!r} names namespace {ns!r}, but -n says {namespace!r}")
    else:
        ns, name = namespace, ref
    pods = {p.key: p for p in cluster.pods}
    if ns:
        found = pods.get(f"{ns}/{name}")
        if found is not None:
            return found
    else:
        same = [p for p in cluster.pods if p.name == name]
        default = next((p for p in same if p.namespace == "default"), None)
        if default is not None or len(same) == 1:
            return default or same[0]
        if same:
            raise InputError(f"pod {name!r} is in several namespaces: {', '.join(sorted(p.key for p in same))}; "
                             "say which with namespace/name or -n")
    key = f"{ns}/{name}" if ns else name
    for rejected, reason in cluster.rejected_pods:
        if rejected == key or (not ns and rejected.split("/", 1)[1] == name):
            raise InputError(f"pod {rejected} was rejected as admission would: {reason}")
    if ns:
        close = _close(key, list(pods))
    else:  # a bare name: compare names, show namespace/name
        close = [k for n in _close(name, list({p.name for p in cluster.pods}))
                 for k in sorted(p.key for p in cluster.pods if p.name == n)][:3]
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise InputError(f"no pod {key!r} in the snapshot{hint}")


def _close(word: str, choices: list[str]) -> list[str]:
    """Up to 3 close matches, the closest first (equally close ones by name)."""
    ratio = {c: difflib.SequenceMatcher(None, word, c).ratio() for c in choices}
    return sorted((c for c in choices if ratio[c] >= 0.6), key=lambda c: (-ratio[c], c))[:3]


def check_pending(pod: Pod, profiles: set[str]) -> None:
    if pod.node_name:
        raise InputError(f"pod {pod.key} is already bound to {pod.node_name} (spec.nodeName): only pending pods "
                         "are scheduled")
    if pod.scheduler_name not in profiles:
        raise InputError(f"pod {pod.key}: schedulerName {pod.scheduler_name!r} has no profile in the "
                         "configuration, so no cycle would run")
    from pysched.scheduler.simulation import unsupported_reason
    reason = unsupported_reason(pod)
    if reason:
        raise InputError(f"pod {pod.key} is not simulated: it {reason}")


# ---------------------------------------------------------------------------------------------- command
def register(app: typer.Typer) -> None:
    """Add the ``explain`` command to ``app``."""

    @app.command("explain", cls=WhatIfCommand)
    def explain(
        pod: Annotated[str, typer.Argument(metavar="POD", help="The pod: name, namespace/name, or name with -n.")],
        filename: FilenameOption = None,
        namespace: Annotated[str | None, typer.Option("-n", "--namespace", metavar="NAMESPACE", help="The pod's namespace.")] = None,
        kubeconfig: KubeconfigOption = None,
        context: ContextOption = None,
        validate: ValidateOption = Validate.warn,
        strict: StrictOption = False,
        max_file_size: MaxFileSizeOption = DEFAULT_MAX_FILE_SIZE,
        config: ConfigOption = None,
        output: OutputOption = Output.table,
        all_nodes: Annotated[bool, typer.Option("--all-nodes",
                                                help="One filter row per node (default: nodes with the same "
                                                     "verdicts grouped).")] = False,
        tie_break: TieBreakOption = TieBreak.name,
        seed: SeedOption = 0,
        evaluate_all_nodes: EvaluateAllNodesOption = False,
        table_format: TableFormatOption = TableFormat.auto,
        no_color: NoColorOption = False,
        max_rows: Annotated[int, typer.Option(
            "--max-rows", metavar="N", min=0, help="Rows per table of -o table (node groups, scores, candidates); 0: all.")] = 50,
        quiet: QuietOption = False,
        plugin_dir: PluginDirOption = None,
        report: ReportOption = None,
        debug: DebugOption = False,
    ) -> None:
        """Explain one pod: every cycle's verdict, filters, scores, preemption, and what would make it fit.

        Exit code 3 when the pod ends without a node (unschedulable, nominated, gated or an error).
        """

        def run() -> int:
            from pysched.report.explain import build_explain_document, explain_data
            from pysched.scheduler.explain import explain_pod
            from pysched.scheduler.simulation import SimulationOptions

            registry = build_registry(plugin_dir)
            if config:
                load_scheduler_config(config, registry)  # a bad --config is reported before any input is read
            loaded = load_inputs(None, filename, kubeconfig=kubeconfig, context=context, quiet=quiet,
                                 strict=strict, max_file_size=max_file_size,
                                 validate=None if strict else validate.value)
            wi = what_if()
            cluster = prepare_cluster(loaded, now=wi.now, run_cronjobs=wi.run_cronjobs)
            warn(cluster.warnings, quiet)
            cfg = effective_config(config, registry, cluster, quiet)
            try:
                ref, note = resolve_created(cluster, pod)
            except _Removed as gone:
                if output == Output.table:
                    typer.echo(str(gone))
                else:
                    write_data({"pod": pod, "verdict": "removed", "note": str(gone)}, output)
                return 0
            if note and output == Output.table:
                typer.echo(note)
            target = resolve_pod(cluster, ref, namespace)
            check_pending(target, {p.scheduler_name for p in cfg.profiles})
            opts = SimulationOptions(tie_break=tie_break.value, seed=seed, evaluate_all_nodes=evaluate_all_nodes)
            with progress_bar(quiet) as progress:
                e = explain_pod(cluster, cfg, registry, target.key, opts, progress)
            blocks = build_explain_document(e, all_nodes=all_nodes, max_rows=max_rows)
            emit(output, lambda: explain_data(e), lambda: blocks, table_format, no_color)
            if report:
                from pysched.report.html import render_document_report, write_report
                write_report(report, render_document_report(f"pysched explain {target.key}", blocks,
                                                            sources=list(filename or [])))
            last = e.cycles[-1] if e.cycles else None
            return 0 if last is not None and last.outcome is Outcome.SCHEDULED else EXIT_UNSCHEDULABLE

        code = guarded(run, debug)
        if code:
            raise typer.Exit(code)
