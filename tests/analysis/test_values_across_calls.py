"""Values followed through the file's own code: what calls pass, what dicts and containers hold,
which branch the calls open, where a method keeps what it is given, who backpropagates a result."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from leaklint.analysis.calls import call_graph
from leaklint.analysis.facts import ModuleFacts, result_backpropagated
from leaklint.analysis.steps import per_step_functions
from leaklint.analysis.structure import GradMode
from leaklint.analysis.values import Kind, Role


def facts_of(source: str) -> ModuleFacts:
    return ModuleFacts(cst.parse_module(textwrap.dedent(source)))


def probed(facts: ModuleFacts, function: str = "<module>"):
    """The value of the argument of the ``probe(...)`` statement in ``function``."""
    for fact in facts.statements():
        node = fact.node
        if (
            fact.function.name == function
            and isinstance(node, cst.Expr)
            and isinstance(node.value, cst.Call)
            and isinstance(node.value.func, cst.Name)
            and node.value.func.value == "probe"
        ):
            return facts.value(node.value.args[0].value)
    raise AssertionError("no probe(...) statement")


def function(facts: ModuleFacts, name: str):
    return next(info for info in facts.structure.functions.values() if info.name == name)


def test_a_parameter_holds_what_the_calls_pass_through_a_chain_of_helpers():
    facts = facts_of(
        """
        import torch.nn.functional as F
        def inner(value):
            probe(value)
        def outer(stats):
            inner(stats["loss"])
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            outer({"loss": loss, "n": x.size(0)})
        """
    )
    value = probed(facts, "inner")
    assert value.is_graph and value.from_caller


def test_the_calls_evidence_replaces_the_name_guess():
    facts = facts_of(
        """
        def log(loss):
            probe(loss)
        log(3.0)
        """
    )
    assert probed(facts, "log").kind is Kind.NOT_TENSOR


def test_literal_dict_keys_are_followed_and_updated():
    facts = facts_of(
        """
        import torch.nn.functional as F
        loss = F.mse_loss(model(x), y)
        log = {"loss": loss, "n": x.size(0)}
        probe(log["n"])
        """
    )
    assert probed(facts).kind is Kind.NOT_TENSOR
    facts = facts_of(
        """
        import torch.nn.functional as F
        log = {"loss": F.mse_loss(model(x), y), "n": 4}
        log["loss"] = log["loss"].detach()
        probe(log)
        """
    )
    assert not probed(facts).is_graph


def test_a_model_of_the_file_returns_the_shape_its_forward_returns():
    facts = facts_of(
        """
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def forward(self, x):
                loss = F.mse_loss(self.body(x), x)
                return {"loss": loss, "metrics": {"l1": loss.detach()}}
        model = Net()
        out = model(batch)
        probe(out["metrics"])
        """
    )
    assert probed(facts).kind is Kind.DETACHED


def test_containers_of_instances():
    facts = facts_of(
        """
        from collections import defaultdict
        class Meter:
            def update(self, value):
                self.total += value
        meters = defaultdict(Meter)
        probe(meters["loss"])
        """
    )
    value = probed(facts)
    assert value.role is Role.INSTANCE and value.cls is not None and value.cls.name == "Meter"


def test_a_branch_no_call_opens_is_not_interpreted():
    facts = facts_of(
        """
        import torch
        def embed(encoder, x, requires_grad=False):
            if requires_grad:
                out = encoder(x)
            else:
                with torch.no_grad():
                    out = encoder(x)
            probe(out)
        embed(text_encoder, tokens)
        embed(text_encoder, other, requires_grad=False)
        """
    )
    assert not probed(facts, "embed").is_graph


def test_isinstance_narrows_the_other_branch():
    facts = facts_of(
        """
        import torch
        def keep(value):
            value = value.detach() if isinstance(value, torch.Tensor) else value
            probe(value)
        keep(model(x))
        """
    )
    assert not probed(facts, "keep").is_graph


def test_where_a_method_keeps_its_argument():
    facts = facts_of(
        """
        class Collector:
            def add(self, key, value):
                self.stats[key].append(value)
            def last(self, value):
                self.latest = value
        """
    )
    stores = facts.summary(function(facts, "add")).param_stores
    assert stores == {"value": (("append", "self.stats"),)}
    assert facts.summary(function(facts, "last")).param_stores == {"value": (("slot", "self.latest"),)}


def test_a_function_handed_to_a_call_in_a_training_loop_runs_every_step():
    facts = facts_of(
        """
        for it in range(100):
            def closure():
                loss = model(x).sum()
                loss.backward()
                return loss
            optimizer.step(closure)
        """
    )
    assert function(facts, "closure") in per_step_functions(facts)


def test_whether_callers_backpropagate_a_result():
    facts = facts_of(
        """
        import torch.nn.functional as F
        def sample(model, n):
            return [model(z) for z in range(n)]
        def loss_of(model, x, y):
            return F.mse_loss(model(x), y)
        images = sample(net, 16)
        loss = loss_of(net, x, y)
        loss.backward()
        """
    )
    assert not facts.result_backpropagated(function(facts, "sample"))
    assert facts.result_backpropagated(function(facts, "loss_of"))


def test_a_binding_feeds_a_backward_only_where_it_reaches_one():
    facts = facts_of(
        """
        def fit(model, optimizer, train, valid):
            for epoch in range(10):
                for x, y in train:
                    loss = model(x, y)
                    loss.backward()
                for x, y in valid:
                    loss = model(x, y)
                    print(loss.item())
                total = model(x, y)
                total = total + model(y, x)
                total.backward()
        """
    )
    def bindings(source: str) -> list:
        return [fact for fact in facts.statements() if cst.Module([]).code_for_node(fact.node) == source]

    training, validation = bindings("loss = model(x, y)")
    (total,) = bindings("total = model(x, y)")
    # the training pass's loss is differentiated; the validation pass's never reaches a backward:
    # the training pass binds the name afresh right before its backward
    assert result_backpropagated(training.node.value, training, facts)
    assert not result_backpropagated(validation.node.value, validation, facts)
    # `total = total + ...` is computed from the earlier binding: that one reaches the backward too
    assert result_backpropagated(total.node.value, total, facts)


def test_a_custom_autograd_forward_runs_without_recording():
    facts = facts_of(
        """
        import torch
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = torch.randn_like(x) * x
                probe(y)
                return y
        """
    )
    forward = function(facts, "forward")
    assert forward.cls.is_autograd_function
    assert all(fact.grad is GradMode.DISABLED for fact in facts.index.statements_of(forward))
    assert probed(facts, "forward").kind is Kind.DETACHED


def test_after_a_loop_a_rebound_name_depends_on_what_the_iterations_computed_it_from():
    """The value from before the loop survives only if the loop never runs: its names are not
    carried on (a long script's 'loss' came to depend on every earlier loader: quadratic memory)."""
    facts = facts_of(
        """
        for x in first_loader:
            loss = model(x).sum()
        for x in second_loader:
            loss = model(x).sum()
        probe(loss)
        """
    )
    deps = probed(facts).deps
    assert "second_loader" in deps and "first_loader" not in deps


def test_a_name_read_before_it_is_bound_again_keeps_the_names_of_its_older_value():
    facts = facts_of(
        """
        hidden = encoder(first_batch)
        for x in loader:
            hidden = rnn(x, hidden)
        probe(hidden)
        """
    )
    assert {"loader", "first_batch"} <= probed(facts).deps


# --- data loaders, followed through what the code builds (formerly leaklint.analysis.loaders) ---
_LOADER_HEADER = """\
import itertools
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, Dataset
"""


def _probed_values(body: str):
    facts = facts_of(_LOADER_HEADER + textwrap.dedent(body))
    return [facts.value(place.node.args[0].value) for place in facts.index.calls_named("probe")]


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
        # iterators over a loader yield its batches
        "def f(ds):\n    loader = DataLoader(ds)\n    probe(iter(loader))\n",
        "def f(ds):\n    loader = DataLoader(ds)\n    probe(enumerate(loader))\n",
        "def f(ds):\n    loader = DataLoader(ds)\n    probe(zip(loader, range(10)))\n",
        "def f(ds):\n    loader = DataLoader(ds)\n    probe((b.cuda() for b in loader))\n",
        "def f(ds):\n    loader = DataLoader(ds)\n    probe(itertools.islice(loader, 100))\n",
        "def f(ds):\n    loader = DataLoader(ds)\n    probe(map(lambda b: b, loader))\n",
        "def f(ds, warmup):\n    loader = DataLoader(ds)\n    probe(itertools.chain(warmup, loader))\n",
        "def f(ds):\n    loader = DataLoader(ds)\n    probe(tqdm(loader))\nfrom tqdm import tqdm\n",
    ],
)
def test_loaders_are_known_by_what_builds_them(body):
    (value,) = _probed_values(body)
    assert value.role is Role.LOADER
    # the loader object itself, or an iterator over it (a second pass finds that one exhausted)
    assert value.iterator is any(f"probe({call}" in body for call in ("iter", "enumerate", "zip", "(b.", "itertools", "map", "tqdm"))


@pytest.mark.parametrize(
    "body",
    [
        # wrapped by accelerate's and Fabric's methods and functions
        "from accelerate.utils import skip_first_batches\ndef f(ds):\n    probe(skip_first_batches(DataLoader(ds), 3))\n",
        "def f(ds, fabric):\n    loader = fabric.setup_dataloaders(DataLoader(ds))\n    probe(loader)\n",
        # put in a list by append, read back by index
        "def f(ds):\n    loaders = []\n    loaders.append(DataLoader(ds))\n    probe(loaders[0])\n",
    ],
)
def test_loaders_are_followed_through_wrappers_and_lists(body):
    (value,) = _probed_values(body)
    assert value.role is Role.LOADER and not value.iterator


def test_datasets_of_torchvision_are_known_by_the_call_that_builds_them():
    (value,) = _probed_values("import torchvision\ndef f():\n    ds = torchvision.datasets.CIFAR10('.')\n    probe(ds)\n")
    assert value.role is Role.DATASET


def test_a_dataset_of_the_file_is_an_object_of_that_class():
    (value,) = _probed_values("class Frames(Dataset):\n    pass\ndef f():\n    probe(Frames())\n")
    assert value.role is Role.INSTANCE and value.cls.name == "Frames"


@pytest.mark.parametrize(
    "body",
    [
        "probe([1, 2, 3])\n",
        "probe(range(10))\n",
        "def f(sets):\n    probe([DataLoader(s) for s in sets])\n",  # a list *of* loaders: its items are
        "def f(its):\n    probe(iter(it).__next__ for it in its)\n",  # made here, item by item
        "def g(values):\n    probe(values)\ng([1e-4, 3e-4])\n",
        # values of packages of paths and plots; a module's own parameters
        "import glob\nprobe(sorted(glob.glob('*.tar')))\n",
        "import matplotlib.pyplot as plt\nprobe(plt.rcParams['axes.prop_cycle'].by_key()['color'])\n",
        "def f(model):\n    probe(model.parameters())\n",
    ],
)
def test_things_built_in_memory_are_known_not_to_be_loaders(body):
    (value,) = _probed_values(body)
    assert value.role is None and (value.kind is not Kind.UNKNOWN or value.items is not None or value.element is not None)


@pytest.mark.parametrize(
    "body",
    [
        "def f(loader):\n    probe(loader)\n",  # nobody in the file calls f
        "class T:\n    def fit(self):\n        probe(self.train_loader)\n",  # set by a base class elsewhere
        "from mylib import make_loader\nprobe(make_loader())\n",
    ],
)
def test_what_the_file_does_not_show_is_unknown_not_a_guess_by_name(body):
    (value,) = _probed_values(body)
    assert value.role is None and value.kind is Kind.UNKNOWN and value.element is None


def test_a_nested_function_that_its_maker_returns_is_followed_where_it_is_called():
    facts = facts_of(
        """
        import torch.nn as nn
        def make_policy(device):
            encoder = nn.Linear(8, 4).to(device)
            def policy(obs):
                return encoder(obs)
            return policy
        act = make_policy("cuda")
        action = act(obs)
        probe(action)
        """
    )
    assert probed(facts).kind is Kind.GRAPH
    callees = {fact.node.value.func.value: callee.name for call, fact, callee in call_graph(facts).resolved if callee is not None and isinstance(fact.node, cst.Assign)}
    assert callees["act"] == "policy"  # the call graph follows it too


def test_a_returned_nested_function_has_callers_the_file_does_not_show():
    facts = facts_of(
        """
        import torch.nn as nn
        def make_policy(model):
            def policy(obs):
                return model(obs)
            return policy
        """
    )
    policy = function(facts, "policy")
    assert policy.node in facts._recording.escaping
