"""Which node classes a process analyses with (see :mod:`leaklint.analysis.nodes`), chosen before
anything imports them: this module imports no part of the analysis, so the command line can
decide first."""

from __future__ import annotations

import os
import sys

#: The environment variable :mod:`leaklint.analysis.nodes` reads, and its two values.
ENVIRONMENT_VARIABLE = "LEAKLINT_NODES"
LIBCST, MIRROR = "libcst", "mirror"

#: Whether this process chose the mirror itself (:func:`prefer_mirror`) rather than being told.
_chosen_here = False


def prefer_mirror() -> None:
    """The ``leaklint`` command's choice: the mirror, unless the environment names a family
    (inherited by the worker processes, which fork from this one)."""
    global _chosen_here
    if ENVIRONMENT_VARIABLE not in os.environ:
        os.environ[ENVIRONMENT_VARIABLE] = MIRROR
        _chosen_here = True


def plugin_rules_loaded() -> None:
    """Plugin rules were written against libcst's classes: give them libcst's, unless a user
    asked for the mirror or the analysis already runs on it."""
    global _chosen_here
    if _chosen_here and "leaklint.analysis.nodes" not in sys.modules:
        os.environ[ENVIRONMENT_VARIABLE] = LIBCST
        _chosen_here = False


def installed_libcst_version() -> str | None:
    """The version of the libcst that ``import libcst`` would load, read from its ``.dist-info``
    directory without importing it (nor ``importlib.metadata``, 30 ms); None when unknown."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("libcst")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    site = os.path.dirname(os.path.dirname(spec.origin))
    try:
        names = os.listdir(site)
    except OSError:
        return None
    versions = [name[len("libcst-") : -len(".dist-info")] for name in names if name.startswith("libcst-") and name.endswith(".dist-info")]
    return versions[0] if len(versions) == 1 else None
