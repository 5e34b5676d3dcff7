"""The user's cache directory for leaklint's own files (not the per-project result cache)."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_directory() -> Path:
    """``$XDG_CACHE_HOME/leaklint``, else ``~/.cache/leaklint``.

    A relative ``XDG_CACHE_HOME`` is ignored, as the XDG base directory specification says.
    """
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "leaklint"
