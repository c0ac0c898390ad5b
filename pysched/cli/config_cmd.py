"""``pysched config show``: the effective scheduler configuration, every default filled in."""

# annotations evaluated where defined (no __future__ import): typer reads the command's, and would compile
# each string form at every start
import sys
from typing import Annotated

import typer

from pysched.cli.common import build_registry, guarded, load_scheduler_config
from pysched.cli.options import DebugOption, PluginDirOption
from pysched.errors import InputError


def register(app: typer.Typer) -> None:
    """Add the ``config`` command group (``config show``) to ``app``."""
    from pysched.cli.messages import PyschedGroup

    group = typer.Typer(cls=PyschedGroup, no_args_is_help=True, rich_markup_mode=None,
                        help="The scheduler configuration pysched runs.")
    app.add_typer(group, name="config")

    @group.command("show")
    def show(
        config: Annotated[str | None, typer.Option(
            "--config", metavar="FILE", help="KubeSchedulerConfiguration file (else the v1 defaults).")] = None,
        profile: Annotated[str | None, typer.Option(
            "--profile", metavar="NAME", help="Only the profile with this schedulerName.")] = None,
        output: Annotated[str, typer.Option(
            "-o", "--output", metavar="FORMAT", help="yaml (with a comment on what is not modelled) or json.")
        ] = "yaml",
        plugin_dir: PluginDirOption = None,
        debug: DebugOption = False,
    ) -> None:
        """Print the effective configuration as kube-scheduler --write-config-to writes it: options, profiles,
        plugins with weights, every plugin's args, defaults filled in; and which options the simulation does
        not model (backoff timing, parallelism, leader election)."""

        def run() -> None:
            from pysched.report.config_view import NOT_MODELLED, effective_config, not_modelled_comment
            from pysched.report.serialize import to_json, to_yaml

            if output not in ("yaml", "json"):
                raise InputError(f"-o {output}: expected yaml or json", field="--output")
            cfg = load_scheduler_config(config, build_registry(plugin_dir))
            if profile is not None and cfg.profile(profile) is None:
                known = ", ".join(p.scheduler_name for p in cfg.profiles)
                raise InputError(f"no profile with schedulerName {profile!r} (profiles: {known})", field="--profile")
            data = effective_config(cfg, profile)
            if output == "json":
                sys.stdout.write(to_json({"config": data, "notModelled": NOT_MODELLED}))
            else:
                sys.stdout.write(not_modelled_comment() + to_yaml(data))

        guarded(run, debug)
