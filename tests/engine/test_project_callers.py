"""Callers in other modules of the run (leaklint/project.py, ``grad_free_functions``): an
evaluation helper that every other file calls inside ``torch.no_grad()`` runs without gradients,
so its forwards are not LL201's."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conftest import run_leaklint, text

from leaklint.project import grad_free_functions

EVALUATION = textwrap.dedent(
    """\
    import torch


    def evaluate(model, loader):
        model.eval()
        correct = 0
        for x, y in loader:
            out = model(x)
            correct += (out.argmax(1) == y).sum().item()
        return correct
    """
)
FINDING = "evaluation.py:8:15: LL201"


def train(call: str, *, header: str = "from evaluation import evaluate") -> str:
    body = textwrap.indent(textwrap.dedent(call), "    ")
    return f"import torch\nfrom torch import nn\n{header}\n\n\ndef main(model, loader):\n{body}\n"


def lint(root: Path, files: dict[str, str]) -> str:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return text(run_leaklint("--no-cache", ".", cwd=root))[0]


@pytest.mark.parametrize(
    "call",
    [
        "with torch.no_grad():\n    print(evaluate(model, loader))",
        "with torch.inference_mode():\n    print(evaluate(model, loader))",
        "with torch.no_grad(), open('log.txt', 'w') as log:\n    log.write(str(evaluate(model, loader)))",
    ],
)
def test_a_helper_every_other_file_calls_without_grad_is_not_reported(project: Path, call: str) -> None:
    assert FINDING not in lint(project, {"evaluation.py": EVALUATION, "train.py": train(call)})


def test_a_caller_decorated_with_no_grad_counts(project: Path) -> None:
    source = "import torch\nfrom evaluation import evaluate\n\n\n@torch.no_grad()\ndef validate(model, loader):\n    return evaluate(model, loader)\n"
    assert FINDING not in lint(project, {"evaluation.py": EVALUATION, "val.py": source})


def test_a_relative_import_with_an_alias_is_followed(project: Path) -> None:
    caller = train("with torch.no_grad():\n    ev(model, loader)", header="from .evaluation import evaluate as ev")
    out = lint(project, {"pkg/__init__.py": "", "pkg/evaluation.py": EVALUATION, "pkg/train.py": caller})
    assert "pkg/" + FINDING not in out


@pytest.mark.parametrize(
    "call",
    [
        "print(evaluate(model, loader))",  # gradients on
        "with torch.no_grad():\n    pass\nprint(evaluate(model, loader))",  # after the block
        "with torch.no_grad():\n    hooks = [evaluate]",  # handed on: who calls it is unknown
        "with torch.no_grad():\n    run = lambda: evaluate(model, loader)\nrun()",  # the lambda runs later
        "with torch.no_grad():\n    def later():\n        return evaluate(model, loader)\nlater()",
    ],
)
def test_any_other_use_keeps_the_finding(project: Path, call: str) -> None:
    assert FINDING in lint(project, {"evaluation.py": EVALUATION, "train.py": train(call)})


def test_every_importing_file_must_call_it_without_grad(project: Path) -> None:
    quiet = train("with torch.no_grad():\n    evaluate(model, loader)")
    loud = train("evaluate(model, loader)").replace("def main", "def report")
    assert FINDING in lint(project, {"evaluation.py": EVALUATION, "train.py": quiet, "report.py": loud})


def test_a_call_with_gradients_in_the_helpers_own_file_keeps_the_finding(project: Path) -> None:
    own = EVALUATION + "\n\ndef sanity(model, loader):\n    return evaluate(model, loader)\n"
    assert FINDING in lint(project, {"evaluation.py": own, "train.py": train("with torch.no_grad():\n    evaluate(model, loader)")})


def test_linted_alone_the_helper_is_reported(project: Path) -> None:
    lint(project, {"evaluation.py": EVALUATION, "train.py": train("with torch.no_grad():\n    evaluate(model, loader)")})
    assert FINDING in text(run_leaklint("--no-cache", "evaluation.py", cwd=project))[0]


def test_a_function_of_the_same_name_from_another_module_is_not_confused(tmp_path: Path) -> None:
    other = train("with torch.no_grad():\n    evaluate(model, loader)", header="from metrics import evaluate")
    sources = {str(tmp_path / "evaluation.py"): EVALUATION.encode(), str(tmp_path / "train.py"): other.encode()}
    assert grad_free_functions(sources) == ()


def test_a_caller_with_a_signature_over_several_lines_counts(project: Path) -> None:
    source = textwrap.dedent(
        """\
        import torch
        from evaluation import evaluate


        class Runner:
            @torch.no_grad()
            def validate(
                self,
                model,
                loader,
            ) -> int:
                total = 0
                for _ in range(3):
                    total += evaluate(model, loader)
                return total
        """
    )
    assert FINDING not in lint(project, {"evaluation.py": EVALUATION, "val.py": source})


def test_a_decorator_after_a_statement_that_does_not_use_the_helper_still_counts(project: Path) -> None:
    # The caller is read cut down to the statements that use the helper: the decorator must stay
    # with its def, not with the statement before it.
    source = "import torch\nfrom evaluation import evaluate\n\nTHRESHOLD = 3\n\n\n@torch.no_grad()\ndef validate(model, loader):\n    return evaluate(model, loader) > THRESHOLD\n"
    assert FINDING not in lint(project, {"evaluation.py": EVALUATION, "val.py": source})
