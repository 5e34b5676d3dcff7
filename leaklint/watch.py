"""``--watch``: lint, then lint again each time a file under the paths changes, until Ctrl-C.

Changes are found by polling the files discovery finds (their modification time and size, twice
a second) rather than through an OS notification library: no dependency, the same on every
platform, and a linter run costs far more than a poll. A new file, a removed one, or an edit
counts; the result cache keeps each run to the files that changed.
"""

from __future__ import annotations

import os
import time
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Sequence

import click

from leaklint.console import EXIT_CLEAN

if TYPE_CHECKING:
    from leaklint.config import Settings

#: Seconds between two polls.
POLL_INTERVAL = float(os.environ.get("LEAKLINT_WATCH_INTERVAL", "0.5"))


def snapshot(paths: Sequence[str], settings: Settings) -> dict[str, tuple[int, int]]:
    """Each file leaklint would lint under ``paths``, with its modification time and size."""
    from leaklint.discovery import discover

    state = {}
    for path in discover(paths, settings).files:
        try:
            stat = os.stat(path)
        except OSError:
            continue  # removed between discovery and now: the next poll sees it gone
        state[path] = (stat.st_mtime_ns, stat.st_size)
    return state


def watch_and_lint(paths: Sequence[str], settings: Settings, lint_once: Callable[[], int]) -> int:
    """Run ``lint_once`` now and after every change; Ctrl-C ends it with exit 0."""
    try:
        click.echo(f"[{_now()}] Starting leaklint in watch mode...", err=True)
        seen = snapshot(paths, settings)
        lint_once()
        click.echo(f"[{_now()}] Watching for file changes.", err=True)
        while True:
            time.sleep(POLL_INTERVAL)
            current = snapshot(paths, settings)
            if current != seen:
                seen = current
                click.echo(f"[{_now()}] File change detected, linting again...", err=True)
                lint_once()
                click.echo(f"[{_now()}] Watching for file changes.", err=True)
    except KeyboardInterrupt:
        return EXIT_CLEAN


def _now() -> str:
    return datetime.now().strftime("%H:%M:%S")
