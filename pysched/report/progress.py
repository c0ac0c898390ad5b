"""A progress bar on stderr for long simulations: it appears only once a run has taken ``delay`` seconds."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn


class DelayedProgress:
    """A ``progress(done, total)`` callback for ``Simulation.run``.

    Nothing is drawn for runs shorter than ``delay`` seconds; after that a transient rich bar (removed when
    the run ends) counts the scheduling cycles. Use it as a context manager so the bar is always removed.
    """

    def __init__(self, console: Console | None = None, *, delay: float = 1.0, interval: float = 0.1,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console or Console(stderr=True)
        self.delay = delay
        self.interval = interval
        self.clock = clock
        self.start = clock()
        self.last = float("-inf")
        self.progress: Progress | None = None
        self.task: TaskID | None = None

    def __enter__(self) -> DelayedProgress:
        self.start = self.clock()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if self.progress is None:
            if now - self.start < self.delay:
                return
            self.progress = Progress(TextColumn("scheduling cycles"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), console=self.console, transient=True)
            self.progress.start()
            self.task = self.progress.add_task("simulate", total=total)
        if now - self.last >= self.interval or done >= total:
            self.last = now
            self.progress.update(self.task, completed=done, total=total)  # type: ignore[arg-type]

    @property
    def shown(self) -> bool:
        return self.progress is not None

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
