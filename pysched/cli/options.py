"""The options the commands share, declared once (``Annotated`` aliases): every command that has an
option spells it, types it and documents it the same way.

The what-if options (the edit flags ``--cordon`` ... ``--scenario``, ``--now``, ``--run-cronjobs``) are one
group that :class:`WhatIfCommand` adds to a command: the command's function does not declare them, it reads
them with :func:`what_if` (one :class:`WhatIf`, the edits in command-line order).
"""

# annotations evaluated where defined (no __future__ import): typer reads _what_if_declaration's, and would
# compile each string form at every start
from contextvars import ContextVar
from enum import StrEnum
from functools import cache
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from pysched.lazyclass import dataclass
from pysched.snapshot.loader import DEFAULT_MAX_BYTES


class Output(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


class TableFormat(StrEnum):
    auto = "auto"
    rich = "rich"
    plain = "plain"
    github = "github"


class FailOn(StrEnum):
    unschedulable = "unschedulable"
    preemption = "preemption"
    error = "error"


class TieBreak(StrEnum):
    name = "name"
    random = "random"


class Validate(StrEnum):
    strict = "strict"
    warn = "warn"
    ignore = "ignore"


FILENAME_HELP = "Snapshot files or folders ('-' for stdin; repeatable). Without: the live cluster."
KUBECONFIG_HELP = ("Kubeconfig file (else $KUBECONFIG, else ~/.kube/config, else in-cluster); used when no "
                   "snapshot is given.")
CONTEXT_HELP = "Kubeconfig context (else the current-context)."
FORMAT_HELP = ("Tables of -o table: rich (boxes, colour), plain (text), github (markdown); "
               "auto: rich on a terminal, else plain.")
PLUGIN_DIR_HELP = ("A folder of out-of-tree plugin modules (repeatable); the checkout's plugins/ folder and "
                   "installed 'pysched.plugins' entry points are always loaded.")

# snapshot sources
SnapshotArgument = Annotated[list[str] | None, typer.Argument(
    metavar="SNAPSHOT...", help="Snapshot files or folders ('-' for stdin).", show_default=False)]
MoreFilenamesOption = Annotated[list[str] | None, typer.Option(
    "-f", "--filename", metavar="FILE", help="More snapshot files or folders (repeatable).")]
FilenameOption = Annotated[list[str] | None, typer.Option("-f", "--filename", metavar="FILE", help=FILENAME_HELP)]
KubeconfigOption = Annotated[str | None, typer.Option("--kubeconfig", metavar="FILE", help=KUBECONFIG_HELP)]
LIVE_KUBECONFIG_HELP = "Kubeconfig file (else $KUBECONFIG, else ~/.kube/config, else in-cluster)."
LiveKubeconfigOption = Annotated[str | None, typer.Option("--kubeconfig", metavar="FILE", help=LIVE_KUBECONFIG_HELP)]
ContextOption = Annotated[str | None, typer.Option("--context", metavar="NAME", help=CONTEXT_HELP)]
ValidateOption = Annotated[Validate, typer.Option(
    "--validate", help="Unknown or mistyped fields at any depth, invalid names and label values: strict: errors; "
                       "warn: warnings; ignore: not checked (as kubectl's --validate).")]
StrictOption = Annotated[bool, typer.Option("--strict", help="Same as --validate=strict.")]
MaxFileSizeOption = Annotated[int, typer.Option(
    "--max-file-size", metavar="BYTES", min=1, help="Refuse snapshot files (after decompression) larger than this many bytes.")]
DEFAULT_MAX_FILE_SIZE = DEFAULT_MAX_BYTES

# the scheduler
ConfigOption = Annotated[str | None, typer.Option("--config", metavar="FILE", help="KubeSchedulerConfiguration file.")]
PluginDirOption = Annotated[list[str] | None, typer.Option("--plugin-dir", metavar="DIR", help=PLUGIN_DIR_HELP)]
TieBreakOption = Annotated[TieBreak, typer.Option("--tie-break", help="Host tie-break.")]
SeedOption = Annotated[int, typer.Option("--seed", metavar="N", help="Seed for --tie-break random.")]
EVALUATE_ALL_NODES_HELP = ("Filter every node: placements that do not depend on the order nodes are examined in "
                           "(default: stop as kube-scheduler does, once percentageOfNodesToScore of them fit).")
EvaluateAllNodesOption = Annotated[bool, typer.Option("--evaluate-all-nodes", help=EVALUATE_ALL_NODES_HELP)]

# output
OutputOption = Annotated[Output, typer.Option("-o", "--output", help="Output format.")]
TableFormatOption = Annotated[TableFormat, typer.Option("--format", help=FORMAT_HELP)]
NoColorOption = Annotated[bool, typer.Option("--no-color", help="No colour in -o table output.")]
QuietOption = Annotated[bool, typer.Option("-q", "--quiet", help="No warnings on stderr.")]
DebugOption = Annotated[bool, typer.Option("--debug", help="Tracebacks for errors.")]
ReportOption = Annotated[str | None, typer.Option(
    "--report", metavar="FILE", help="Also write the report as one self-contained HTML file.")]


# ---------------------------------------------------------------------------------------------- what-if options
#: edit flag -> edit kind; edits apply in the order given, across flags
EDIT_FLAGS = {"--cordon": "cordon", "--uncordon": "uncordon", "--drain": "drain", "--remove-node": "remove-node",
              "--add-node": "add-node", "--scale": "scale", "--taint": "taint", "--untaint": "untaint",
              "--label": "label", "--scenario": "scenario"}
EDIT_HELP = {
    "cordon": "Cordon NODE (repeatable; all edits apply in the order given, before the simulation).",
    "uncordon": "Uncordon NODE.",
    "drain": "Drain NODE as 'kubectl drain --ignore-daemonsets --delete-emptydir-data --force': PDBs checked, "
             "evicted pods replaced by their controllers.",
    "remove_node": "Remove NODE; its pods are deleted (no PDB check) and replaced by their controllers.",
    "add_node": "Add COUNT copies (default 1) of the Node in FILE, named <name>-1..<name>-COUNT.",
    "scale": "Scale a Deployment, ReplicaSet, ReplicationController, StatefulSet or Job (parallelism): "
             "KIND/[NAMESPACE/]NAME=N.",
    "taint": "Add a taint NODE=KEY[=VALUE]:EFFECT (NoExecute evicts the pods that do not tolerate it).",
    "untaint": "Remove taints NODE=KEY[:EFFECT].",
    "label": "Set NODE=KEY=VALUE or remove NODE=KEY- a node label.",
    "scenario": "A YAML list of edit steps ({drain: node-7}, {scale: deployment/web/api, replicas: 30}, ...).",
}
_METAVARS = {"cordon": "NODE", "uncordon": "NODE", "drain": "NODE", "remove_node": "NODE",
             "add_node": "FILE[=COUNT]", "scale": "KIND/[NS/]NAME=N", "taint": "NODE=KEY[=VALUE]:EFFECT",
             "untaint": "NODE=KEY[:EFFECT]", "label": "NODE=KEY=VALUE|NODE=KEY-", "scenario": "FILE"}


CordonOpt = Annotated[list[str] | None, typer.Option(
    "--cordon", metavar=_METAVARS["cordon"], help=EDIT_HELP["cordon"])]
UncordonOpt = Annotated[list[str] | None, typer.Option(
    "--uncordon", metavar=_METAVARS["uncordon"], help=EDIT_HELP["uncordon"])]
DrainOpt = Annotated[list[str] | None, typer.Option(
    "--drain", metavar=_METAVARS["drain"], help=EDIT_HELP["drain"])]
RemoveNodeOpt = Annotated[list[str] | None, typer.Option(
    "--remove-node", metavar=_METAVARS["remove_node"], help=EDIT_HELP["remove_node"])]
AddNodeOpt = Annotated[list[str] | None, typer.Option(
    "--add-node", metavar=_METAVARS["add_node"], help=EDIT_HELP["add_node"])]
ScaleOpt = Annotated[list[str] | None, typer.Option(
    "--scale", metavar=_METAVARS["scale"], help=EDIT_HELP["scale"])]
TaintOpt = Annotated[list[str] | None, typer.Option(
    "--taint", metavar=_METAVARS["taint"], help=EDIT_HELP["taint"])]
UntaintOpt = Annotated[list[str] | None, typer.Option(
    "--untaint", metavar=_METAVARS["untaint"], help=EDIT_HELP["untaint"])]
LabelOpt = Annotated[list[str] | None, typer.Option(
    "--label", metavar=_METAVARS["label"], help=EDIT_HELP["label"])]
ScenarioOpt = Annotated[list[str] | None, typer.Option(
    "--scenario", metavar=_METAVARS["scenario"], help=EDIT_HELP["scenario"])]
NowOpt = Annotated[str | None, typer.Option(
    "--now", metavar="TIME", help="The simulation's now (RFC 3339): creation time of the pods created; default "
                                  "one second after the latest timestamp of the input.")]
RunCronJobsOpt = Annotated[bool, typer.Option(
    "--run-cronjobs", help="Fire every CronJob now (one Job each, as its concurrencyPolicy allows).")]


def _what_if_declaration(
    cordon: CordonOpt = None, uncordon: UncordonOpt = None, drain: DrainOpt = None,
    remove_node: RemoveNodeOpt = None, add_node: AddNodeOpt = None, scale: ScaleOpt = None,
    taint: TaintOpt = None, untaint: UntaintOpt = None, label: LabelOpt = None, scenario: ScenarioOpt = None,
    now: NowOpt = None, run_cronjobs: RunCronJobsOpt = False,
) -> None:
    """The what-if group, in the order the help lists it (typer turns it into click parameters once)."""


@cache
def what_if_params() -> tuple[Any, ...]:
    """The what-if group as click parameters, built by typer itself so they read and render as every other
    option does."""
    app = typer.Typer(add_completion=False)
    app.command()(_what_if_declaration)
    return tuple(typer.main.get_command(app).params)


@dataclass(frozen=True, slots=True)
class WhatIf:
    """The what-if options of the command being run."""

    edits: tuple[tuple[str, str], ...] = ()  # (kind, value) in command-line order
    now: str | None = None
    run_cronjobs: bool = False


def scan_edit_flags(args: list[str]) -> list[tuple[str, str]]:
    """The edit flags of raw arguments, in order (click groups values by option, losing the order)."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            break
        flag, eq, value = a.partition("=")
        if flag in EDIT_FLAGS:
            if eq:
                out.append((EDIT_FLAGS[flag], value))
            elif i + 1 < len(args):
                out.append((EDIT_FLAGS[flag], args[i + 1]))
                i += 1
        i += 1
    return out


_WHAT_IF: ContextVar[WhatIf] = ContextVar("pysched_what_if", default=WhatIf())  # noqa: B039


class WhatIfCommand(TyperCommand):
    """A command taking the what-if options: they are inserted before ``--quiet`` (else last), their
    command-line order is recorded when the arguments are parsed, and their values are taken out of the
    parameters before typer calls the command (which reads them with :func:`what_if`; typer calls it without
    an active click context, hence a context variable)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        at = next((i for i, p in enumerate(self.params) if p.name == "quiet"), len(self.params))
        self.params[at:at] = what_if_params()

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # typer's own click Context
        _WHAT_IF.set(WhatIf(tuple(scan_edit_flags(list(args)))))
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        values = {p.name: ctx.params.pop(p.name, None) for p in what_if_params()}
        _WHAT_IF.set(WhatIf(_WHAT_IF.get().edits, values["now"], bool(values["run_cronjobs"])))
        return super().invoke(ctx)


def what_if() -> WhatIf:
    """The what-if options of the command being run."""
    return _WHAT_IF.get()


def edit_order() -> list[tuple[str, str]]:
    """The edit flags of the command being run, in command-line order."""
    return list(_WHAT_IF.get().edits)
