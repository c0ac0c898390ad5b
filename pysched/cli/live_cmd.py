"""``pysched snapshot``: read a live cluster (GET only) and write it as a file pysched and kubectl read.

Also the shared pieces the lead wires into ``simulate``: :func:`progress_printer` and
:func:`load_live_cluster`. The ``kubernetes`` client is imported only when a cluster is actually read.
"""

# annotations evaluated where defined (no __future__ import): typer reads the command's, and would compile
# each string form at every start
import sys
from collections.abc import Callable
from enum import StrEnum
from types import ModuleType
from typing import TYPE_CHECKING, Annotated

import typer

from pysched import __version__
from pysched.cli.common import guarded, warn
from pysched.cli.options import ContextOption, DebugOption, LiveKubeconfigOption
from pysched.errors import SourceError

if TYPE_CHECKING:
    from pysched.snapshot.cluster import Cluster


class SnapshotFormat(StrEnum):
    yaml = "yaml"
    json = "json"




def progress_printer(quiet: bool = False, stream=None) -> Callable[[str, int, bool], None] | None:
    """Progress of the listing on stderr: one line rewritten in place on a terminal, nothing otherwise."""
    out = stream if stream is not None else sys.stderr
    if quiet or not getattr(out, "isatty", lambda: False)():
        return None

    def show(kind: str, count: int, done: bool) -> None:
        out.write(f"\r\x1b[Kreading {kind} objects: {count}{' done' if done else ''}")
        if done:
            out.write("\r\x1b[K")
        out.flush()

    return show


LIVE_EXTRA_MISSING = ("reading a live cluster needs the kubernetes client, which is optional: "
                      "pip install 'pysched[live]' (or give snapshot files)")


def live_source() -> ModuleType:
    """``pysched.snapshot.live``, imported on first use; without the ``live`` extra a clear error."""
    try:
        from pysched.snapshot import live
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] in ("kubernetes", "urllib3"):
            raise SourceError(LIVE_EXTRA_MISSING) from None
        raise
    return live


def load_live_cluster(kubeconfig: str | None, context: str | None, quiet: bool = False, *,
                      strict: bool = False, validate: str | None = None) -> "Cluster":
    """The live cluster for ``simulate`` when no snapshot file is given (the warnings are the caller's)."""
    return live_source().load_live(kubeconfig, context, progress_printer(quiet), strict=strict, validate=validate)


def register(app: typer.Typer) -> None:
    """Add the ``snapshot`` command to ``app``."""

    @app.command("snapshot")
    def snapshot(
        output: Annotated[str, typer.Option("-o", "--output", metavar="FILE", help="File to write ('-' for stdout; a .gz name "
                                                                    "is gzip-compressed).")],
        fmt: Annotated[SnapshotFormat | None, typer.Option(
            "--format", help="yaml or json (default: json for a .json name, else yaml).")] = None,
        redact: Annotated[bool, typer.Option(
            "--redact", help="Replace env values, annotations and imagePullSecrets by placeholders.")] = False,
        kubeconfig: LiveKubeconfigOption = None,
        context: ContextOption = None,
        quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No warnings or summary on stderr.")] = False,
        debug: DebugOption = False,
    ) -> None:
        """Read a live cluster (GET requests only) and write every object the scheduler reads as a
        kind: List file that `pysched simulate` and `kubectl apply -f` accept."""

        def run() -> None:
            from pysched.snapshot.export import SnapshotInfo, write_snapshot

            snap = live_source().read_live(kubeconfig, context, progress_printer(quiet))
            warn(snap.warnings, quiet)
            src = snap.source
            info = SnapshotInfo(cluster=src.cluster, context=src.context, server=src.server,
                                taken_at=snap.taken_at, counts=snap.counts, server_version=snap.server_version,
                                generator=f"pysched {__version__}", redacted=redact)
            written = write_snapshot(output, snap.objects, info, fmt.value if fmt else None)
            if not quiet:
                where = "stdout" if output == "-" else output
                typer.echo(f"wrote {len(snap.objects)} objects ({info.counts_text()}) from {src.server} "
                           f"(context {src.context}) to {where} as {written}"
                           f"{', redacted' if redact else ''}", err=True)

        guarded(run, debug)
