"""``pysched``: what would kube-scheduler v1.34 do with this cluster?"""

from __future__ import annotations

import atexit
import os
import sys
from typing import Annotated

import typer

from pysched import K8S_VERSION, __version__
from pysched.cli import capacity_cmd, config_cmd, diff_cmd, explain_cmd, live_cmd, plugins_cmd, simulate_cmd
from pysched.cli.common import EXIT_INPUT
from pysched.cli.messages import PyschedGroup

app = typer.Typer(cls=PyschedGroup, add_completion=False, no_args_is_help=True, rich_markup_mode=None,
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


# the commands, in the order --help lists them
simulate_cmd.register(app)
explain_cmd.register(app)
diff_cmd.register(app)
live_cmd.register(app)
plugins_cmd.register(app)
capacity_cmd.register(app)
config_cmd.register(app)


def main() -> None:
    try:
        app()
    except SystemExit as e:
        code = e.code
        if code not in (0, None) and not isinstance(code, int):
            code = EXIT_INPUT
        _leave(code or 0)
        sys.exit(code)


def _leave(code: int) -> None:
    """Exit without tearing the interpreter down: freeing a loaded cluster's millions of objects one by
    one costs a few tenths of a second of CPU and changes nothing (every output is written and closed
    by then). Exit handlers still run: the kubernetes client removes the temporary files it wrote a
    kubeconfig's certificate and key data to in one. The standard streams are flushed first; when that
    fails (a closed pipe), the normal exit reports it as before."""
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


if __name__ == "__main__":
    main()
