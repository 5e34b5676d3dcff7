"""Which node classes a process analyses with (see :mod:`leaklint.analysis.nodes`), chosen before
anything imports them: this module imports nothing, so the command line can decide first."""

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
