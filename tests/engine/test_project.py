"""What the files of one run tell about each other (leaklint/project.py): a decorator defined in
one module that turns gradients off silences LL201 in the modules that use it."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from conftest import run_leaklint, text

from leaklint.project import defined_no_grad_decorators, module_names, no_grad_decorators

TORCH_UTILS = textwrap.dedent(
    """\
    import torch

    def smart_inference_mode(torch_1_9=True):
        def decorate(fn):
            return (torch.inference_mode if torch_1_9 else torch.no_grad)()(fn)
        return decorate

    def evaluate_twice(model, x):
        with torch.no_grad():
            return model(x), model(x)
    """
)
VAL = textwrap.dedent(
    """\
    import torch
    from utils.torch_utils import smart_inference_mode

    @smart_inference_mode()
    def run(model, loader):
        model.eval()
        for images, targets in loader:
            preds = model(images)
    """
)


def write(root: Path, files: dict[str, str]) -> None:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)


def test_a_decorator_from_another_module_of_the_run_turns_gradients_off(project: Path) -> None:
    write(project, {"utils/__init__.py": "", "utils/torch_utils.py": TORCH_UTILS, "val.py": VAL})
    result = run_leaklint("--no-cache", ".", cwd=project)
    assert result.returncode == 0, text(result)
    # Linted alone, val.py cannot know what the decorator does.
    alone = run_leaklint("--no-cache", "val.py", cwd=project)
    assert alone.returncode == 1 and "val.py:8:17: LL201" in text(alone)[0]


def test_a_relative_import_of_the_decorator_is_followed(project: Path) -> None:
    write(project, {"pkg/__init__.py": "", "pkg/torch_utils.py": TORCH_UTILS, "pkg/val.py": VAL.replace("from utils.torch_utils", "from .torch_utils")})
    assert run_leaklint("--no-cache", ".", cwd=project).returncode == 0


def test_the_cache_notices_when_the_decorator_changes(project: Path) -> None:
    write(project, {"utils/__init__.py": "", "utils/torch_utils.py": TORCH_UTILS, "val.py": VAL})
    assert run_leaklint(".", cwd=project).returncode == 0
    (project / "utils" / "torch_utils.py").write_text(TORCH_UTILS.replace("return (torch.inference_mode if torch_1_9 else torch.no_grad)()(fn)", "return fn"))
    assert run_leaklint(".", cwd=project).returncode == 1  # the cached clean result of val.py is not reused


def test_only_functions_that_return_a_decoration_count() -> None:
    tree = ast.parse(TORCH_UTILS)
    assert defined_no_grad_decorators(tree) == ["smart_inference_mode"]  # not evaluate_twice
    assert defined_no_grad_decorators(ast.parse("import torch\ndef no_grad_wrapper(fn):\n    return torch.no_grad()(fn)\n")) == ["no_grad_wrapper"]
    assert defined_no_grad_decorators(ast.parse("def plain(fn):\n    def inner():\n        return fn()\n    return inner\n")) == []


def test_only_decorators_the_run_uses_are_looked_for(tmp_path: Path) -> None:
    write(tmp_path, {"utils/torch_utils.py": TORCH_UTILS})
    assert no_grad_decorators([str(tmp_path / "utils" / "torch_utils.py")]) == ()
    write(tmp_path, {"val.py": VAL})
    found = no_grad_decorators([str(tmp_path / "utils" / "torch_utils.py"), str(tmp_path / "val.py")])
    assert "utils.torch_utils.smart_inference_mode" in found and "torch_utils.smart_inference_mode" in found


def test_a_module_is_known_by_the_suffixes_of_its_path() -> None:
    assert module_names("/src/yolov5/utils/torch_utils.py")[:3] == ["torch_utils", "utils.torch_utils", "yolov5.utils.torch_utils"]
    assert module_names("/src/pkg/__init__.py")[0] == "pkg"
