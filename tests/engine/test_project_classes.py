"""Helper classes of another module of the run (leaklint/project.py,
leaklint/analysis/project_classes.py): a meter or buffer defined in ``utils/meters.py`` and fed a
loss every step in ``train.py`` is followed as if it were defined in ``train.py``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conftest import run_leaklint, text

from leaklint.project import keeping_project_classes

METERS = textwrap.dedent(
    """\
    import torch


    class AverageMeter:
        def __init__(self, name):
            self.name = name
            self.reset()

        def reset(self):
            self.sum = 0
            self.count = 0

        def update(self, val, n=1):
            self.sum += val * n
            self.count += n


    class History:
        def __init__(self):
            self.items = []

        def add(self, value):
            self.items.append(value)


    class SafeMeter:
        def __init__(self):
            self.total = 0.0

        def update(self, value):
            if isinstance(value, torch.Tensor):
                value = value.item()
            self.total += value


    class ItemMeter:
        def __init__(self):
            self.total = 0.0

        def update(self, value):
            self.total += value.item()
    """
)
TRAIN = textwrap.dedent(
    """\
    import torch
    from torch import nn
    from utils.meters import AverageMeter, History, ItemMeter, SafeMeter

    model = nn.Linear(10, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = AverageMeter("loss")
    history = History()
    safe, items = SafeMeter(), ItemMeter()
    for step in range(100):
        x = torch.randn(8, 10)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss, x.size(0))
        history.add(loss)
        safe.update(loss)
        items.update(loss)
        losses.update(loss.item(), x.size(0))
    """
)


def write(root: Path, files: dict[str, str]) -> None:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)


def findings(output: str) -> list[str]:
    return [line.split(" [")[0] for line in output.splitlines() if line.startswith("train.py:")]


def test_a_meter_of_another_module_that_keeps_the_graph_is_reported_where_the_loss_enters_it(project: Path) -> None:
    write(project, {"utils/__init__.py": "", "utils/meters.py": METERS, "train.py": TRAIN})
    result = run_leaklint("--no-cache", ".", cwd=project)
    out = text(result)[0]
    assert findings(out) == ["train.py:16:5: LL101", "train.py:17:5: LL102"], out
    assert "'loss' is accumulated into 'losses' (update() adds it to self.sum)" in out
    assert "'loss' is stored by 'history' (add() appends it to self.items)" in out


def test_the_same_classes_in_the_same_file_give_the_same_findings(project: Path) -> None:
    merged = METERS + "\n\n" + TRAIN.replace("from utils.meters import AverageMeter, History, ItemMeter, SafeMeter\n", "")
    write(project, {"train.py": merged})
    out = text(run_leaklint("--no-cache", ".", cwd=project))[0]
    offset = len(METERS.splitlines()) + 1  # the class definitions come first, one import line less
    # the same two leaks; the file shows History.add, and calls it from one place only, so the
    # append is reported where it keeps the graph (naming the call), not at the call
    append = 1 + METERS.splitlines().index("        self.items.append(value)")
    assert findings(out) == [f"train.py:{append}:9: LL102", f"train.py:{16 + offset}:5: LL101"], out
    assert f"(passed by the call at line {17 + offset})" in out


def test_linted_alone_the_script_cannot_know_what_the_meter_keeps(project: Path) -> None:
    write(project, {"utils/__init__.py": "", "utils/meters.py": METERS, "train.py": TRAIN})
    alone = findings(text(run_leaklint("--no-cache", "train.py", cwd=project))[0])
    assert alone == []  # `history.add(loss)` on an object of a class it cannot see: that class's add
    guessed = findings(text(run_leaklint("--no-cache", "--min-confidence", "low", "train.py", cwd=project))[0])
    assert "train.py:17:5: LL102" in guessed  # a set's add would keep it: shown with low confidence


def test_a_relative_import_of_the_meter_is_followed(project: Path) -> None:
    relative = TRAIN.replace("from utils.meters import", "from .meters import")
    write(project, {"pkg/__init__.py": "", "pkg/meters.py": METERS, "pkg/train.py": relative})
    out = text(run_leaklint("--no-cache", ".", cwd=project))[0]
    assert "pkg/train.py:16:5: LL101" in out and "pkg/train.py:17:5: LL102" in out, out


@pytest.mark.parametrize(
    ("folder", "imports", "prefix"),
    [
        ("utils", "import utils.meters as meters", "meters."),
        ("utils", "import utils.meters", "utils.meters."),
        ("utils", "from utils import meters", "meters."),
        ("utils", "from utils.meters import *", ""),
        ("pkg", "from . import meters", "meters."),
        ("pkg", "from . import meters as mt", "mt."),
        ("pkg", "from .meters import *", ""),
    ],
)
def test_the_meter_is_followed_whichever_way_its_module_is_imported(project: Path, folder: str, imports: str, prefix: str) -> None:
    script = TRAIN.replace("from utils.meters import AverageMeter, History, ItemMeter, SafeMeter", imports)
    for name in ("AverageMeter(", "History(", "SafeMeter(", "ItemMeter("):
        script = script.replace(name, prefix + name)
    train = "pkg/train.py" if folder == "pkg" else "train.py"
    write(project, {f"{folder}/__init__.py": "", f"{folder}/meters.py": METERS, train: script})
    out = text(run_leaklint("--no-cache", ".", cwd=project))[0]
    assert f"{train}:16:5: LL101" in out and f"{train}:17:5: LL102" in out, out
    assert "(update() adds it to self.sum)" in out and "(add() appends it to self.items)" in out, out


def test_a_star_import_does_not_hide_a_class_of_the_file_itself(project: Path) -> None:
    own = "class AverageMeter:\n    def __init__(self, name):\n        self.sum = 0.0\n\n    def update(self, val, n=1):\n        self.sum = float(val)\n\n\n"
    script = own + TRAIN.replace("from utils.meters import AverageMeter, History, ItemMeter, SafeMeter", "from utils.meters import *")
    write(project, {"utils/__init__.py": "", "utils/meters.py": METERS, "train.py": script})
    out = text(run_leaklint("--no-cache", "--select", "LL101", ".", cwd=project))[0]
    assert findings(out) == [], out


def test_a_class_name_two_modules_define_is_not_guessed(project: Path) -> None:
    other = "class AverageMeter:\n    def update(self, val, n=1):\n        self.sum = float(val)\n"
    write(project, {"utils/__init__.py": "", "utils/meters.py": METERS, "train.py": TRAIN, "other/utils/meters.py": other})
    out = text(run_leaklint("--no-cache", "--select", "LL101", ".", cwd=project))[0]
    assert findings(out) == [], out


def test_summaries_name_what_each_method_keeps(tmp_path: Path) -> None:
    write(tmp_path, {"utils/meters.py": METERS, "train.py": TRAIN})
    sources = {str(path): path.read_bytes() for path in sorted(tmp_path.rglob("*.py"))}
    classes = {cls.name: cls for cls in keeping_project_classes(sources)}
    # SafeMeter and ItemMeter keep floats (``.item()``), whatever they are given
    assert sorted(classes) == ["AverageMeter", "History"]
    update = classes["AverageMeter"].method("update")
    assert update is not None and ("val", "accumulate", "self.sum") in update.stores
    assert update.positional == ("val", "n")
    assert "utils.meters.AverageMeter" in classes["AverageMeter"].qualified_names


def test_models_and_classes_with_bases_of_other_packages_are_not_summarized(tmp_path: Path) -> None:
    helpers = textwrap.dedent(
        """\
        import torch
        from torch import nn
        from somewhere import Base

        class Net(nn.Module):
            def grow(self, x):
                self.seen.append(x)

        class Derived(Base):
            def grow(self, x):
                self.seen.append(x)

        class Local:
            def grow(self, x):
                self.seen.append(x)

        class Child(Local):
            pass
        """
    )
    user = "from helpers import Net, Derived, Local, Child\n"
    write(tmp_path, {"helpers.py": helpers, "user.py": user})
    sources = {str(path): path.read_bytes() for path in sorted(tmp_path.rglob("*.py"))}
    assert sorted(cls.name for cls in keeping_project_classes(sources)) == ["Child", "Local"]


def test_summaries_are_cached_with_the_results_and_follow_edits_of_the_helper(project: Path) -> None:
    write(project, {"utils/__init__.py": "", "utils/meters.py": METERS, "train.py": TRAIN})
    first = findings(text(run_leaklint("--select", "LL101", ".", cwd=project))[0])
    entries = list((project / ".leaklint_cache").rglob("summaries/*/*.json"))
    assert first == ["train.py:16:5: LL101"] and len(entries) == 1
    assert findings(text(run_leaklint("--select", "LL101", ".", cwd=project))[0]) == first  # read back
    (project / "utils/meters.py").write_text(METERS.replace("self.sum += val * n", "self.sum += val.item()"))
    assert findings(text(run_leaklint("--select", "LL101", ".", cwd=project))[0]) == []


def test_a_garbled_summary_entry_is_analysed_again(project: Path) -> None:
    write(project, {"utils/__init__.py": "", "utils/meters.py": METERS, "train.py": TRAIN})
    run_leaklint("--select", "LL101", ".", cwd=project)
    for entry in (project / ".leaklint_cache").rglob("summaries/*/*.json"):
        entry.write_text(entry.read_text().replace('"accumulate"', '"acumulate"'))
    result = run_leaklint("--select", "LL101", "--no-cache", ".", cwd=project)  # the results' cache off
    assert findings(text(result)[0]) == ["train.py:16:5: LL101"]
    again = run_leaklint("--select", "LL101", ".", cwd=project)
    assert findings(text(again)[0]) == ["train.py:16:5: LL101"], text(again)


def test_a_helper_module_that_cannot_be_read_is_reported_once_and_the_run_goes_on(project: Path) -> None:
    broken = METERS.replace("class History:", "class History(:")  # a syntax error
    write(project, {"utils/__init__.py": "", "utils/meters.py": broken, "train.py": TRAIN})
    (project / "utils/latin.py").write_bytes(b"class Pool:\n    def add(self, x):\n        self.items.append(x)  # \xff\n")
    (project / "user.py").write_text("from utils.latin import Pool\n")
    result = run_leaklint("--no-cache", ".", cwd=project)
    out, err = text(result)
    assert "Traceback" not in out + err
    assert "utils/meters.py" in out + err and "utils/latin.py" in out + err


def test_a_helper_module_over_max_file_size_is_not_analysed(project: Path) -> None:
    write(project, {"utils/__init__.py": "", "utils/meters.py": METERS + "#" * 4000 + "\n", "train.py": TRAIN})
    (project / "pyproject.toml").write_text("[tool.leaklint]\nmax-file-size = 3000\n")
    out = text(run_leaklint("--no-cache", "--min-confidence", "low", ".", cwd=project))[0]
    assert "train.py:16:5: LL101" not in out, out  # the meter's update() is not followed
    assert "train.py:17:5: LL102" in out, out  # `.add(loss)` only guessed (low confidence)
