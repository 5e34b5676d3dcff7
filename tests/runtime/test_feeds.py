"""Which lines feed a finding's line (``leaklint.runtime.feeds``): the join of ``leaklint run``
confirms a finding from growing tensors allocated at these lines."""

from __future__ import annotations

import textwrap

from leaklint.runtime.feeds import ProjectSlices


def lines_feeding(tmp_path, sources: dict[str, str], name: str, marker: str) -> set[tuple[str, int]]:
    paths = {}
    for file_name, text in sources.items():
        path = tmp_path / file_name
        path.write_text(textwrap.dedent(text))
        paths[file_name] = str(path)
    text = textwrap.dedent(sources[name]).splitlines()
    line = next(i for i, content in enumerate(text, 1) if marker in content)
    found = ProjectSlices(paths.values()).feeding(paths[name], line)
    return {(file_name, number) for file_name, path in paths.items() for (where, number) in found if where == path}


def line_of(source: str, marker: str) -> int:
    return next(i for i, content in enumerate(textwrap.dedent(source).splitlines(), 1) if marker in content)


LOOP = """\
    import torch
    model = torch.nn.Linear(4, 1)
    losses = []
    unrelated = torch.zeros(100)
    for x, y in batches:
        prediction = model(x)
        loss = ((prediction - y) ** 2).mean()
        loss.backward()
        losses.append(loss)  # keep
    """


def test_a_kept_loss_is_fed_by_the_forward_that_computed_it(tmp_path):
    found = lines_feeding(tmp_path, {"train.py": LOOP}, "train.py", "# keep")
    for marker in ("prediction = model(x)", "loss = ((", "losses.append", "model = torch", "for x, y"):
        assert ("train.py", line_of(LOOP, marker)) in found, marker
    assert ("train.py", line_of(LOOP, "unrelated")) not in found


HELPER = """\
    class Meter:
        def __init__(self):
            self.values = []

        def update(self, value):
            self.values.append(value)  # keep
    """
CALLER = """\
    import torch
    from meters import Meter
    meter = Meter()
    scale = torch.ones(1)
    for x in batches:
        loss = model(x).sum()
        meter.update(loss * 2)
    """


def test_a_parameter_is_followed_out_to_the_arguments_of_the_project_callers(tmp_path):
    found = lines_feeding(tmp_path, {"meters.py": HELPER, "train.py": CALLER}, "meters.py", "# keep")
    assert ("train.py", line_of(CALLER, "loss = model(x)")) in found
    assert ("train.py", line_of(CALLER, "meter.update(")) in found
    assert ("train.py", line_of(CALLER, "scale =")) not in found


STATE = """\
    import torch

    class Tracker(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden = None
            self.layer = torch.nn.Linear(4, 4)

        def start(self, x):
            self.hidden = self.layer(x)

        def forward(self, x):
            self.hidden = self.hidden + self.layer(x)  # keep
            return self.hidden
    """


def test_self_attributes_are_followed_through_every_method_of_the_class(tmp_path):
    found = lines_feeding(tmp_path, {"model.py": STATE}, "model.py", "# keep")
    assert ("model.py", line_of(STATE, "self.hidden = self.layer(x)")) in found
    assert ("model.py", line_of(STATE, "self.layer = torch")) in found


CALLS = """\
    import torch

    def compute(model, x):
        features = model(x)
        return features.sum()

    class Net(torch.nn.Module):
        def forward(self, x):
            return x * 2

    net = Net()
    kept = []
    for x in batches:
        value = compute(net, x)
        kept.append(net(x) + value)  # keep
    """


def test_project_functions_and_the_classes_of_called_instances_are_taken_whole(tmp_path):
    found = lines_feeding(tmp_path, {"train.py": CALLS}, "train.py", "# keep")
    assert ("train.py", line_of(CALLS, "features = model(x)")) in found
    assert ("train.py", line_of(CALLS, "return x * 2")) in found


def test_a_file_that_does_not_parse_gives_only_the_lines_themselves(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("def f(:\n")
    assert ProjectSlices([str(path)]).feeding(str(path), 1) == {(str(path), 1)}
