"""leaklint.analysis.loaders: whether an expression is a data loader, known by what the code
builds (classes, bindings, unpacking, callers, containers), never by its name."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from leaklint.analysis.calls import caller_of
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.loaders import NOT_LOADER, UNKNOWN, Loader, loader_origin

HEADER = """\
import itertools
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, Dataset
"""


def origins(body: str) -> list[Loader | str]:
    """What the argument of each ``probe(...)`` call of the snippet is, in source order."""
    facts = ModuleFacts(cst.parse_module(HEADER + textwrap.dedent(body)))
    found = []
    for place in facts.index.calls_named("probe"):
        call = place.node
        assert isinstance(call, cst.Call)
        found.append(loader_origin(call.args[0].value, caller_of(place, facts), facts))
    return found


@pytest.mark.parametrize(
    "body",
    [
        # built here, by a local name
        "def f(ds):\n    loader = DataLoader(ds)\n    probe(loader)\n",
        # unpacked from accelerator.prepare, position by position
        "def f(model, opt, ds):\n    acc = Accelerator()\n    loader = DataLoader(ds)\n    model, opt, loader = acc.prepare(model, opt, loader)\n    probe(loader)\n",
        # kept on self by another method
        "class T:\n    def __init__(self, ds):\n        self.dl = DataLoader(ds)\n    def fit(self):\n        probe(self.dl)\n",
        # kept on an object of the file, read through the object
        "class H:\n    def __init__(self, loader):\n        self.io = loader\ndef f(ds):\n    h = H(DataLoader(ds))\n    probe(h.io)\n",
        # a parameter that the file's only call passes a loader for, and one annotated as one
        "def g(dl):\n    probe(dl)\ndef f(ds):\n    g(DataLoader(ds))\n",
        "def g(dl: DataLoader):\n    probe(dl)\n",
        # what a local function returns; a dict of loaders; a loop over a list of them
        "def build(ds):\n    return DataLoader(ds)\ndef f(ds):\n    probe(build(ds))\n",
        "def f(sets):\n    loaders = {k: DataLoader(v) for k, v in sets.items()}\n    for name, dl in loaders.items():\n        probe(dl)\n",
        "def f(a, b):\n    for dl in [DataLoader(a), DataLoader(b)]:\n        probe(dl)\n",
        "def f(a):\n    loaders = {}\n    loaders['train'] = DataLoader(a)\n    probe(loaders['train'])\n",
    ],
)
def test_loaders_are_known_by_what_builds_them(body):
    (found,) = origins(body)
    assert isinstance(found, Loader) and found.reiterable and not found.dataset


@pytest.mark.parametrize(
    "expression",
    ["iter(loader)", "enumerate(loader)", "zip(loader, range(10))", "(b.cuda() for b in loader)", "itertools.islice(loader, 100)"],
)
def test_iterators_over_a_loader_yield_its_batches_but_are_not_the_loader(expression):
    (found,) = origins(f"def f(ds):\n    loader = DataLoader(ds)\n    probe({expression})\n")
    assert isinstance(found, Loader) and not found.reiterable


def test_a_dataset_of_the_file_is_known_as_one():
    (found,) = origins("class Frames(Dataset):\n    pass\ndef f():\n    probe(Frames())\n")
    assert isinstance(found, Loader) and found.dataset


@pytest.mark.parametrize(
    "body",
    [
        "probe([1, 2, 3])\n",
        "probe(range(10))\n",
        "import glob\nprobe(sorted(glob.glob('*.tar')))\n",
        "import matplotlib.pyplot as plt\nprobe(plt.rcParams['axes.prop_cycle'].by_key()['color'])\n",
        "def f(sets):\n    probe([DataLoader(s) for s in sets])\n",  # a list *of* loaders
        "def f(its):\n    probe(iter(it).__next__ for it in its)\n",
        "def g(values):\n    probe(values)\ng([1e-4, 3e-4])\n",
        "def f(model):\n    probe(model.parameters())\n",
    ],
)
def test_things_built_in_memory_are_not_loaders(body):
    assert origins(body) == [NOT_LOADER]


@pytest.mark.parametrize(
    "body",
    [
        "def f(loader):\n    probe(loader)\n",  # nobody in the file calls f
        "class T:\n    def fit(self):\n        probe(self.train_loader)\n",  # set by a base class elsewhere
        "from mylib import make_loader\nprobe(make_loader())\n",
    ],
)
def test_what_the_file_does_not_show_is_unknown_not_a_guess_by_name(body):
    assert origins(body) == [UNKNOWN]
