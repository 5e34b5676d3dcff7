"""The screen: run the analysis and the rules on a tree built from ``ast``, before libcst.

Most files that pass the gate (:mod:`leaklint.prefilter`) hold no finding; the gate only knows
syntax, and whether a value carries an autograd graph is a question for the analysis. The screen
asks it cheaply: :mod:`leaklint.analysis.from_ast` builds libcst's node shapes from the ``ast``
the syntax check already made (about a fifth of the cost of ``libcst.parse_module``), and the
same analysis and rules run on it; the ``leaklint`` command builds it from the node mirror
(:mod:`leaklint.analysis.nodes`), so a file the screen clears never imports libcst. Only when a rule reports something at the confidence asked
for, fails, or the builder does not reproduce the file's syntax, is the file parsed with libcst
and linted for real; so every finding, position, message and fix is still libcst's.

What the built tree lacks can only add findings or raise their confidence, never hide one: the
one rule that reads comments reads ``# noqa: B019`` to stay silent, and ``deep_equals`` without
whitespace matches more, not less.

The screen never decides what is reported, only whether the exact run is needed. It can make a
run slower (a file that fires is analysed twice), never different — unless a rule that fires on
libcst's tree stays silent on the built one, which ``tests/test_screen.py`` guards against on the
fixtures and examples, and ``bench/gate_check.py`` on whole corpora.
"""

from __future__ import annotations

import ast
from typing import Sequence

from leaklint.findings import Confidence
from leaklint.rule import Rule


def may_report(
    text: str, tree: ast.Module, rules: Sequence[type[Rule]], min_confidence: Confidence = Confidence.LOW
) -> bool:
    """Whether any of ``rules`` may report in ``text`` at ``min_confidence`` or above: True unless
    the screen shows none does."""
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.analysis.from_ast import Unsupported, module_from_ast
    from leaklint.analysis.walk import children_cached

    try:
        module = module_from_ast(text, tree)
        with children_cached():
            facts = ModuleFacts(module)
            try:
                return any(v.confidence >= min_confidence for rule in rules for v in rule().check(facts))
            finally:
                facts.release()
    except Unsupported:
        return True
    except Exception:  # noqa: BLE001 - whatever went wrong, the exact run reports it
        return True
