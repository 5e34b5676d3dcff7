"""Parse source with libcst, without re-checking what the parser has just guaranteed.

Every libcst node validates itself when it is constructed (``CSTNode.__post_init__`` calls
``_validate``: are the parentheses balanced, is there whitespace where the grammar needs it). That
protects trees built by hand; a tree the parser builds from real source is valid by construction,
and libcst's own comment on ``__post_init__`` notes that parsing need not validate. On our
benchmark corpus the checks are about 16% of ``parse_module``.

So, while *this thread* parses, node construction skips the check. Other threads, and every node
built later (fixes build nodes), still validate.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst

_parsing = threading.local()


def parse_module(text: str) -> cst.Module:
    """``libcst.parse_module(text)``, minus the validation of each parsed node."""
    import libcst as cst

    CSTNode = cst.CSTNode
    validate = CSTNode.__post_init__

    def validate_unless_parsing(node: cst.CSTNode) -> None:
        if not getattr(_parsing, "active", False):
            validate(node)

    _parsing.active = True
    CSTNode.__post_init__ = validate_unless_parsing  # type: ignore[method-assign]
    try:
        return cst.parse_module(text)
    finally:
        CSTNode.__post_init__ = validate  # type: ignore[method-assign]
        _parsing.active = False
