"""Plugin registry: name -> factory, refusing duplicates (as upstream's ``runtime.Registry``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pysched.errors import ConfigError, PyschedError
from pysched.framework.interface import Handle, Plugin, extension_points_of
from pysched.lazyclass import dataclass

ArgsDecoder = Callable[[Mapping[str, Any] | None], Any]
Factory = Callable[[Any, Handle], Plugin]


class DuplicatePluginError(PyschedError):
    exit_code = 2


@dataclass(slots=True)
class PluginSpec:
    name: str
    cls: type[Plugin]
    factory: Factory
    decode_args: ArgsDecoder | None  # raw dict (or None for defaults) -> typed args; raises ConfigError
    source: str = "in-tree"

    @property
    def extension_points(self) -> list[str]:
        return extension_points_of(self.cls)


class Registry:
    def __init__(self) -> None:
        self._specs: dict[str, PluginSpec] = {}

    def register(self, spec: PluginSpec) -> None:
        existing = self._specs.get(spec.name)
        if existing is not None:
            raise DuplicatePluginError(
                f"plugin {spec.name!r} is registered twice: by {existing.source} and by {spec.source}")
        self._specs[spec.name] = spec

    def register_module(self, module: Any, source: str = "in-tree") -> None:
        """A plugin module exposes ``NAME``, ``PLUGIN`` (the class), ``factory`` and optionally ``decode_args``."""
        self.register(PluginSpec(module.NAME, module.PLUGIN, module.factory,
                                 getattr(module, "decode_args", None), source))

    def get(self, name: str) -> PluginSpec | None:
        return self._specs.get(name)

    def names(self) -> list[str]:
        return sorted(self._specs)

    def __contains__(self, name: str) -> bool:
        return name in self._specs

    def specs(self) -> list[PluginSpec]:
        return [self._specs[n] for n in sorted(self._specs)]

    def decode_args(self, name: str, raw: Mapping[str, Any] | None, where: str = "") -> Any:
        spec = self._specs[name]
        if spec.decode_args is None:
            if raw:
                raise ConfigError(f"plugin {name} takes no arguments", field=where or None)
            return None
        return spec.decode_args(raw)
