"""The syntax node classes the analysis and the rules read: libcst's, or leaklint's mirror.

Every module of the analysis, and every built-in rule's detector, writes
``from leaklint.analysis import nodes as cst`` and then ``cst.Call``, ``cst.Name``... as it would
with libcst. Which classes those are is decided once per process, when this module is first
imported, by the ``LEAKLINT_NODES`` environment variable:

- ``libcst`` (the default): libcst's own classes. Trees come from ``libcst.parse_module`` or from
  the screen's builder, and anything that imports the analysis directly (tests, plugin rules,
  library users) sees the libcst it knows.
- ``mirror``: :mod:`leaklint.analysis.mirror`, the same classes without libcst's import cost
  (about 0.17 s). The ``leaklint`` command chooses it when no plugin rule is installed
  (:mod:`leaklint.analysis.family`): the screen then runs without libcst, and a file a rule
  fires in is parsed by libcst and converted (:mod:`leaklint.analysis.convert`), its nodes
  keeping their libcst ``origin``.

The mirror is used only with the libcst release it was generated from (another release may have
classes or fields it lacks). Deciding before any module-level table is built
(``SCOPES = (cst.FunctionDef, ...)``) is what makes the choice safe: one process never mixes the
two families.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from leaklint.analysis.family import ENVIRONMENT_VARIABLE, LIBCST, MIRROR, installed_libcst_version


def _mirrors_installed_libcst() -> bool:
    """The mirror copies one libcst release; with another installed (a class or field it lacks),
    the analysis uses libcst's own classes: slower to import, never wrong."""
    from leaklint.analysis.mirror import LIBCST_VERSION

    return LIBCST_VERSION == installed_libcst_version()


if TYPE_CHECKING:
    from libcst import *  # noqa: F403 - type checkers see libcst, the interface both families share

    FAMILY = LIBCST
elif os.environ.get(ENVIRONMENT_VARIABLE) == MIRROR and _mirrors_installed_libcst():
    from leaklint.analysis.mirror import *  # noqa: F403 - CSTNode and MaybeSentinel included

    FAMILY = MIRROR
else:
    from leaklint.code_cache import import_libcst

    import_libcst()  # with the dataclass code stored by earlier runs
    from libcst import *  # noqa: F403

    FAMILY = LIBCST


def source_node(node: Any) -> Any:
    """The libcst node ``node`` stands for: itself with libcst's classes; with the mirror's, the
    node it was converted from, or None for a node the screen or a rule built."""
    if FAMILY == LIBCST:
        return node
    return getattr(node, "origin", None)
