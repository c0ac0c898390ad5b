"""The options the commands share, declared once (``Annotated`` aliases): every command that has an
option spells it, types it and documents it the same way."""

from __future__ import annotations

from typing import Annotated

import typer

from pysched.cli.common import Output, TableFormat, TieBreak, Validate
from pysched.snapshot.loader import DEFAULT_MAX_BYTES

FILENAME_HELP = "Snapshot files or folders ('-' for stdin; repeatable). Without: the live cluster."
KUBECONFIG_HELP = ("Kubeconfig file (else $KUBECONFIG, else ~/.kube/config, else in-cluster); used when no "
                   "snapshot is given.")
CONTEXT_HELP = "Kubeconfig context (else the current-context)."
FORMAT_HELP = ("Tables of -o table: rich (boxes, colour), plain (text), github (markdown); "
               "auto: rich on a terminal, else plain.")
PLUGIN_DIR_HELP = ("A folder of out-of-tree plugin modules (repeatable); the checkout's plugins/ folder and "
                   "installed 'pysched.plugins' entry points are always loaded.")

# snapshot sources
FilenameOption = Annotated[list[str] | None, typer.Option("-f", "--filename", metavar="FILE", help=FILENAME_HELP)]
KubeconfigOption = Annotated[str | None, typer.Option("--kubeconfig", metavar="FILE", help=KUBECONFIG_HELP)]
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
