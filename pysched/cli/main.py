"""``pysched``: what would kube-scheduler v1.34 do with this cluster?"""

# annotations evaluated where defined (no __future__ import): typer reads the command's, and would compile
# each string form at every start
import gc

# The cyclic collector is off while the command line's modules are imported (here, and in main() while the
# app is built), and what they built is frozen (gc.freeze) before it runs the command: some 47,000 objects
# (modules, classes, functions) that live as long as the process, which the dozens of collections the
# imports' allocations trigger would walk again and again, and every later collection once more. (A load
# unfreezes only what a load froze: snapshot.loader.collector_paused.) The state found is given back at the
# end of this module's imports: tests import it without running main().
_COLLECTING = gc.isenabled()
gc.disable()

import atexit  # noqa: E402
import importlib  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from typing import Annotated, Any  # noqa: E402

import typer  # noqa: E402

from pysched import K8S_VERSION, __version__  # noqa: E402
from pysched.cli.messages import PyschedGroup  # noqa: E402

if _COLLECTING:
    gc.enable()

#: the commands, in the order --help lists them, and the module that adds each; a module is imported only
#: when its command is part of the app being built (a run of one command imports that command's module)
COMMANDS = (("simulate", "simulate_cmd"), ("explain", "explain_cmd"), ("diff", "diff_cmd"),
            ("snapshot", "live_cmd"), ("plugins", "plugins_cmd"), ("capacity", "capacity_cmd"),
            ("config", "config_cmd"))


def _version(value: bool) -> None:
    if value:
        typer.echo(f"pysched {__version__} (kube-scheduler {K8S_VERSION} semantics)")
        raise typer.Exit()


def main_callback(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """What-if analyzer for the Kubernetes scheduler."""


def build_app(only: str | None = None) -> typer.Typer:
    """The command-line app with every command, or with ``only`` that one (what ``main`` runs when the
    first argument names a command: the other commands' modules and what they import stay unloaded)."""
    app = typer.Typer(cls=PyschedGroup, add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                      help="What-if analyzer for the Kubernetes scheduler (kube-scheduler v1.34 semantics).")
    app.callback()(main_callback)
    for name, module in COMMANDS:
        if only is None or name == only:
            importlib.import_module(f"pysched.cli.{module}").register(app)
    return app


_full: typer.Typer | None = None


def __getattr__(name: str) -> Any:
    """``app``, with every command, built on first use (``from pysched.cli.main import app``)."""
    global _full
    if name == "app":
        if _full is None:
            _full = build_app()
        return _full
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    # pysched calls no BLAS routine, yet numpy's import starts an OpenBLAS thread per core; on a small
    # machine those threads cost a tenth of a second of CPU at every start, beside the main thread
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    args = sys.argv[1:]
    collecting = gc.isenabled()
    gc.disable()  # (see the top of this module)
    app = build_app(args[0] if args and args[0] in dict(COMMANDS) else None)
    if collecting:
        gc.freeze()
        gc.enable()
    try:
        app()
    except SystemExit as e:
        code = e.code
        if code not in (0, None) and not isinstance(code, int):
            from pysched.cli.common import EXIT_INPUT

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
