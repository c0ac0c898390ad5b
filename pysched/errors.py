"""The one exception hierarchy of pysched.

Errors are raised deep inside and turned into a message and an exit code only at the CLI edge.
"""

from __future__ import annotations

from collections.abc import Sequence


class PyschedError(Exception):
    """Base of every error pysched raises on purpose."""

    exit_code = 1


class InputError(PyschedError):
    """Bad user input: a file, an object, a field or a flag. Exit code 2."""

    exit_code = 2

    def __init__(self, message: str, *, file: str | None = None, obj: str | None = None,
                 field: str | None = None, line: int | None = None, doc: int | None = None) -> None:
        self.detail = message
        self.file = file
        self.obj = obj
        self.field = field
        self.line = line
        self.doc = doc
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.file:
            loc = self.file
            if self.line is not None:
                loc += f":{self.line}"
            where.append(loc)
        if self.doc is not None:
            where.append(f"document {self.doc}")
        if self.obj:
            where.append(self.obj)
        if self.field:
            where.append(self.field)
        prefix = ": ".join(where)
        return f"{prefix}: {self.detail}" if prefix else self.detail


class InputErrors(InputError):
    """Several input errors reported together."""

    errors: Sequence[InputError]

    def __init__(self, errors: Sequence[InputError]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in errors))

    def _render(self) -> str:  # the joined messages are the whole text
        return self.detail


class ConfigError(InputError):
    """An invalid KubeSchedulerConfiguration."""


class ConfigErrors(InputErrors, ConfigError):
    """Several configuration errors reported together, one per line (upstream's aggregate)."""

    errors: Sequence[ConfigError]

    def __init__(self, errors: Sequence[ConfigError]) -> None:
        super().__init__(errors)


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity (raised by the model; wrapped by loaders)."""


class SelectorError(ValueError):
    """An invalid label selector or node selector requirement: ``path: detail``."""

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(f"{path}: {detail}")
        self.path = path
        self.detail = detail


class SourceError(InputError):
    """A live cluster that cannot be read."""
