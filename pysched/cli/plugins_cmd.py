"""``pysched plugins``: every registered plugin, where it comes from, what it extends and how it is
configured."""

# annotations evaluated where defined (no __future__ import): typer reads the command's, and would compile
# each string form at every start
import sys
from typing import Annotated, Any

import typer

from pysched.cli.common import build_registry, guarded, load_scheduler_config
from pysched.cli.options import (
    PLUGIN_DIR_HELP as PLUGIN_DIR_HELP,  # re-exported: where the commands imported it from before
    DebugOption,
    Output,
    OutputOption,
    PluginDirOption as PluginDirOption,
)
from pysched.errors import InputError
from pysched.framework.config import ProfileConfig, SchedulerConfig
from pysched.framework.registry import Registry
from pysched.report.serialize import to_json, to_yaml


def _profile(cfg: SchedulerConfig, name: str | None) -> ProfileConfig:
    if name is None:
        return cfg.profiles[0]
    prof = cfg.profile(name)
    if prof is None:
        known = ", ".join(p.scheduler_name for p in cfg.profiles)
        raise InputError(f"no profile with schedulerName {name!r} (profiles: {known})", field="--profile")
    return prof


def plugin_rows(registry: Registry, profile: ProfileConfig) -> list[dict[str, Any]]:
    """One row per registered plugin: name, source, extension points, the profile's score weight
    (``None`` for a plugin that does not score; 0 when not enabled at score) and where it is enabled."""
    weights = {ref.name: ref.weight for ref in profile.enabled("score")}
    enabled: dict[str, list[str]] = {}
    for point in profile.plugins:
        for ref in profile.enabled(point):
            enabled.setdefault(ref.name, []).append(point)
    rows = []
    for spec in registry.specs():
        points = spec.extension_points
        rows.append({
            "name": spec.name,
            "source": spec.source,
            "extension_points": points,
            "weight": weights.get(spec.name, 0) if "score" in points else None,
            "enabled": [p for p in points if p in enabled.get(spec.name, [])],
        })
    return rows


def _table(rows: list[dict[str, Any]], profile: str, config: str) -> str:
    header = ["NAME", "SOURCE", "EXTENSION POINTS", "WEIGHT", f"ENABLED ({profile})"]
    body = [[r["name"], r["source"], ", ".join(r["extension_points"]),
             "-" if r["weight"] is None else str(r["weight"]),
             ", ".join(r["enabled"]) if r["enabled"] else "disabled"] for r in rows]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in [header, *body]]
    lines.append("")
    lines.append(f"{len(rows)} plugin(s); weights and enabled points from {config}.")
    return "\n".join(lines) + "\n"


def plugins_command(
    plugin_dir: PluginDirOption = None,
    config: Annotated[str | None, typer.Option(
        "--config", metavar="FILE", help="KubeSchedulerConfiguration whose weights and enabled points to show "
                         "(default: the v1 defaults).")] = None,
    profile: Annotated[str | None, typer.Option(
        "--profile", metavar="NAME", help="The profile (schedulerName) to show; default: the first.")] = None,
    output: OutputOption = Output.table,
    debug: DebugOption = False,
) -> None:
    """List every registered plugin: its source, extension points, score weight and where it is enabled."""

    def run() -> None:
        registry = build_registry(plugin_dir)
        cfg = load_scheduler_config(config, registry)
        prof = _profile(cfg, profile)
        rows = plugin_rows(registry, prof)
        if output == Output.json:
            sys.stdout.write(to_json({"profile": prof.scheduler_name, "plugins": rows}))
        elif output == Output.yaml:
            sys.stdout.write(to_yaml({"profile": prof.scheduler_name, "plugins": rows}))
        else:
            shown = config if config not in (None, "", "default") else "the default configuration"
            sys.stdout.write(_table(rows, prof.scheduler_name, str(shown)))

    guarded(run, debug)


def register(app: typer.Typer) -> None:
    app.command("plugins")(plugins_command)
