"""Shared test setup."""

from __future__ import annotations

from importlib.util import find_spec

# The live source needs the optional kubernetes client (pip install 'pysched[live]'); without it the live
# tests are not collected (tests/test_packaging.py checks the message a user then gets).
collect_ignore = [] if find_spec("kubernetes") is not None else ["test_live.py"]
