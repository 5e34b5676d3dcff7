"""Property tests: no program generated from Python's grammar makes leaklint crash.

hypothesmith writes programs two ways: from the grammar (mostly valid, sometimes not: leaklint must
then agree with Python that they are invalid) and from libcst node types (always valid). Each is
linted with every rule, the text gate off (generated code never mentions torch, and the analysis is
what is under test), and a ``torch`` import prepended on a second pass so the torch-aware paths run.

CI runs 300 examples (200 + 100), derandomized (the same ones every run);
set ``LEAKLINT_FUZZ_EXAMPLES=5000`` for a longer, randomized search, as the benchmark does.
"""

from __future__ import annotations

import os

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings

from leaklint.config import Settings
from leaklint.engine import lint_text
from leaklint.findings import Confidence, ErrorKind
from leaklint.registry import all_rules

pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")  # generated code is odd, not wrong
EXAMPLES = int(os.environ.get("LEAKLINT_FUZZ_EXAMPLES", "0"))
RULES = list(all_rules().values())
SETTINGS = Settings(min_confidence=Confidence.LOW)


def fuzz_settings(ci_examples: int):  # type: ignore[no-untyped-def]
    return settings(
        max_examples=EXAMPLES or ci_examples,
        derandomize=not EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


def python_rejects(source: str) -> bool:
    try:
        compile(source, "<fuzz>", "exec", dont_inherit=True, flags=0x400)  # ast.PyCF_ONLY_AST
    except (SyntaxError, ValueError):
        return True
    except (RecursionError, MemoryError):
        return False
    return False


def assert_no_crash(source: str) -> None:
    for text in (source, "import torch\nimport torch.nn as nn\n" + source):
        outcome = lint_text(text, "fuzz.py", RULES, SETTINGS, gate=False)
        internal = [e.describe() for e in outcome.errors if e.kind is ErrorKind.INTERNAL]
        assert not internal, f"{internal}\n--- source ---\n{text}"
        unparsable = any(e.kind in (ErrorKind.SYNTAX, ErrorKind.DECODE) for e in outcome.errors)
        assert unparsable == python_rejects(text), f"leaklint and Python disagree on:\n{text}\n{outcome.errors}"


@fuzz_settings(ci_examples=200)
@given(hypothesmith.from_grammar())
def test_programs_from_the_grammar(source: str) -> None:
    assert_no_crash(source)


@fuzz_settings(ci_examples=100)  # slower to generate
@given(hypothesmith.from_node())
def test_programs_from_libcst_nodes(source: str) -> None:
    assert_no_crash(source)


@pytest.mark.parametrize(
    "source",
    [
        # Shapes the generators find rarely: loops, accumulation, hooks, decorators, comprehensions.
        "for x in y:\n    total += model(x)\n    del total\n",
        "while True:\n    h = rnn(x, h)\n    lst.append(out)\n    break\nelse:\n    pass\n",
        "@torch.no_grad()\nasync def f():\n    async for x in g:\n        yield [m(x) async for m in x]\n",
        "class D(torch.utils.data.Dataset):\n    def __getitem__(self, i):\n        return self.items[i]\n",
        "def hook(m, i, o):\n    store[m] = o\n\nmodel.register_forward_hook(hook)\ndel store[m], m.x\n",
        "for x in y:\n    match x:\n        case {'a': a, **rest}:\n            total += a\n",
        "lambda: (yield)\n",
        "for (a, b), *c in d:\n    a += (b := c)\n",
    ],
)
def test_hand_written_shapes(source: str) -> None:
    assert_no_crash(source)
