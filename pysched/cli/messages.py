"""Usage errors in pysched's words: the command-line library's validation phrasing is rewritten before it is
printed ("Value error, 'xml' is not one of ..." -> "'xml' is not one of ...")."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from typer.core import TyperGroup


@cache
def _rules() -> list[tuple[re.Pattern[str], str]]:
    """Each rule reads pydantic's phrasing (typer 0.29 on) or click's (typer before); the order matters.
    Compiled at the first bad option value, not at every start (some 7 M instructions)."""
    return [
        (re.compile(r"^Value error, "), ""),
        (re.compile(r"^(?:Input should be greater than or equal to |\S+ is not in the range x>=)(\S+?)\.?$"),
         r"must be \1 or more"),
        (re.compile(r"^(?:Input should be greater than |\S+ is not in the range x>)(\S+?)\.?$"), r"must be more than \1"),
        (re.compile(r"^(?:Input should be less than or equal to |\S+ is not in the range x<=)(\S+?)\.?$"),
         r"must be \1 or less"),
        (re.compile(r"^(?:Input should be less than |\S+ is not in the range x<)(\S+?)\.?$"), r"must be less than \1"),
        (re.compile(r"^(?:Input should be a valid integer.*|.* is not a valid int(?:eger)?\.?)$"),
         "expected a whole number"),
        (re.compile(r"^(?:Input should be a valid number.*|.* is not a valid float\.?)$"), "expected a number"),
        (re.compile(r"^(?:Input should be a valid boolean.*|.* is not a valid boolean\.?)$"), "expected true or false"),
        (re.compile(r"^Input should be (.*)$"), r"expected \1"),
    ]


def humane(message: str) -> str:
    """One validation message without the library's phrasing."""
    out = message
    for pattern, repl in _rules():
        out = pattern.sub(repl, out)
    return out


def _no_type(ctx: Any) -> None:
    return None


class PyschedGroup(TyperGroup):
    """The command group: rewrites the message of a bad option value before click prints it, and shows an
    argument that has a metavar by that name only (``SNAPSHOT``, not ``SNAPSHOT <list[str]>``)."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        for param in getattr(cmd, "params", []):
            if param.param_type_name == "argument" and param.metavar:
                param.display_type_rich = _no_type  # an instance attribute shadows the method
        return cmd

    def invoke(self, ctx: Any) -> Any:
        import typer

        try:
            return super().invoke(ctx)
        except typer.BadParameter as e:
            e.message = humane(e.message)
            raise
