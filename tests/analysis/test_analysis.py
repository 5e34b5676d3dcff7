"""The shared analysis, question by question: is this value attached to a graph, and why?"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.structure import GradMode, is_eval_function_name
from leaklint.analysis.values import Evidence, Kind, Role
from leaklint.findings import Confidence


def facts_of(source: str) -> ModuleFacts:
    return ModuleFacts(cst.parse_module(textwrap.dedent(source)))


def value_at_end(source: str, name: str, function: str = "<module>"):
    """The value ``name`` holds in the statement ``probe(name)`` of ``function``."""
    facts = facts_of(source)
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


def test_backward_is_the_strongest_evidence():
    value = value_at_end("loss = compute(batch)\nloss.backward()\nprobe(loss)\n", "loss")
    assert (value.kind, value.evidence, value.confidence) == (Kind.GRAPH, Evidence.BACKWARD, Confidence.HIGH)


@pytest.mark.parametrize(
    "source",
    [
        "import torch.nn.functional as F\nloss = F.cross_entropy(out, y)\n",
        "from torch import nn\ncriterion = nn.MSELoss()\nloss = criterion(out, y)\n",
        "import torch as th\nloss = th.nn.functional.l1_loss(out, y)\n",
    ],
)
def test_loss_functions_are_resolved_through_import_aliases(source):
    value = value_at_end(source + "probe(loss)\n", "loss")
    assert value.is_graph and value.evidence is Evidence.LOSS


def test_model_outputs_are_attached_with_medium_confidence():
    source = """
        import torch.nn as nn
        class Net(nn.Module):
            pass
        model = Net()
        out = model(x)
        probe(out)
    """
    value = value_at_end(source, "out")
    assert value.is_graph and value.evidence is Evidence.MODEL and value.confidence is Confidence.MEDIUM


def test_a_name_alone_gives_low_confidence():
    value = value_at_end("out = net(x)\nprobe(out)\n", "out")
    assert value.is_graph and value.confidence is Confidence.LOW


def test_module_methods_are_evidence_of_a_model():
    value = value_at_end("opt = make(encoder.parameters())\nfeats = encoder(x)\nprobe(feats)\n", "feats")
    assert value.is_graph and value.confidence is Confidence.MEDIUM


@pytest.mark.parametrize(
    "expression, kind",
    [
        ("loss.item()", Kind.NOT_TENSOR),
        ("float(loss)", Kind.NOT_TENSOR),
        ("loss.tolist()", Kind.NOT_TENSOR),
        ("loss.detach()", Kind.DETACHED),
        ("loss.detach().cpu()", Kind.DETACHED),
        ("loss.cpu()", Kind.GRAPH),
        ("loss * 2 + 1", Kind.GRAPH),
        ("(out.argmax(1) == y).sum()", Kind.DETACHED),
        ("torch.max(out, 1)[1]", Kind.DETACHED),
        ("torch.max(out, 1)[0]", Kind.GRAPH),
        ("out.shape[0]", Kind.NOT_TENSOR),
        ("[out, y]", Kind.GRAPH),
        ("{'out': out.detach()}", Kind.DETACHED),
    ],
)
def test_what_removes_or_keeps_the_graph(expression, kind):
    source = f"""
        import torch
        loss = criterion(model(x), y)
        loss.backward()
        out = model(x)
        value = {expression}
        probe(value)
    """
    assert value_at_end(source, "value").kind is kind


def test_tuple_unpacking_keeps_each_part():
    source = "import torch\n_, predicted = torch.max(model(x), 1)\nprobe(predicted)\n"
    assert value_at_end(source, "predicted").kind is Kind.DETACHED


def test_flow_order_matters():
    source = """
        loss = criterion(model(x), y)
        loss = loss.item()
        probe(loss)
    """
    assert value_at_end(source, "loss").kind is Kind.NOT_TENSOR


def test_no_grad_blocks_and_decorators_detach_what_they_compute():
    source = """
        import torch
        with torch.no_grad():
            out = model(x)
        probe(out)
    """
    assert value_at_end(source, "out").kind is Kind.DETACHED
    decorated = """
        import torch
        @torch.inference_mode()
        def predict(model, x):
            out = model(x)
            probe(out)
    """
    assert value_at_end(decorated, "out", "predict").kind is Kind.DETACHED


def test_a_function_only_called_under_no_grad_runs_without_grad():
    source = """
        import torch
        def helper(model, x):
            out = model(x)
            probe(out)
        def main(model, x):
            with torch.no_grad():
                helper(model, x)
    """
    assert value_at_end(source, "out", "helper").kind is Kind.DETACHED


def test_a_function_also_passed_as_a_callback_is_not_assumed_guarded():
    source = """
        import torch
        def helper(model, x):
            out = model(x)
            probe(out)
        def main(model, x):
            with torch.no_grad():
                helper(model, x)
            register(helper)
    """
    assert value_at_end(source, "out", "helper").is_graph


def _grad_modes_of_loss_methods(bases: str) -> dict[str, GradMode]:
    facts = facts_of(
        f"""
        import torch
        from transformers import Trainer
        class Tuned({bases}):
            def compute_loss(self, model, inputs):
                return self._compute_loss(model, inputs)
            def _compute_loss(self, model, inputs):
                loss = model(**inputs).loss
                return loss
            def prediction_step(self, model, inputs):
                with torch.no_grad():
                    loss = self.compute_loss(model, inputs)
                return loss
        """
    )
    return {f.function.name: f.grad for f in facts.statements() if f.function.name in ("compute_loss", "_compute_loss")}


def test_a_method_a_base_of_another_package_may_call_keeps_its_grad_mode():
    # transformers' Trainer calls compute_loss from its training step with gradients on: the
    # no_grad caller of the file is not its only caller, nor of the helper it calls (trl)
    modes = _grad_modes_of_loss_methods("Trainer")
    assert modes == {"compute_loss": GradMode.ENABLED, "_compute_loss": GradMode.ENABLED}


def test_a_method_of_a_class_without_foreign_bases_follows_its_callers():
    modes = _grad_modes_of_loss_methods("object")
    assert modes == {"compute_loss": GradMode.DISABLED, "_compute_loss": GradMode.DISABLED}


@pytest.mark.parametrize(
    "read, kind",
    [
        ('self.scales["a"] * 2', Kind.UNKNOWN),
        ("self.shifts[0] * 2", Kind.UNKNOWN),
        ("self.weight * 2", Kind.UNKNOWN),
        ("self.fixed * 2", Kind.DETACHED),
    ],
)
def test_parameters_and_the_items_of_parameter_containers_may_require_grad(read, kind):
    source = """
        import torch
        from torch import nn
        class Scaled(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.scales = nn.ParameterDict({})
                self.scales["a"] = nn.Parameter(torch.ones(n))
                self.shifts = nn.ParameterList([nn.Parameter(torch.zeros(n))])
                self.weight = nn.Parameter(torch.ones(n))
                self.fixed = nn.Parameter(torch.ones(n), requires_grad=False)
            def forward(self, x):
                probe(READ)
        """
    assert value_at_end(source.replace("READ", read), "x", "forward").kind is kind


def test_tensors_that_share_the_callers_storage_are_not_fresh():
    source = """
        import torch
        def load(counts, array):
            shared = torch.as_tensor(counts)
            buffer = torch.from_numpy(array)
            copied = torch.tensor(counts)
            probe(shared)
            probe(buffer)
            probe(copied)
    """
    facts = facts_of(source)
    freshness = [facts.value(f.node.value.args[0].value).fresh for f in facts.statements() if isinstance(f.node, cst.Expr)]
    assert freshness == [False, False, True]


def test_set_grad_enabled_with_a_runtime_flag_is_conditional():
    facts = facts_of(
        """
        import torch
        with torch.set_grad_enabled(phase == "train"):
            out = model(x)
        """
    )
    [fact] = [f for f in facts.statements() if isinstance(f.node, cst.Assign)]
    assert fact.grad is GradMode.CONDITIONAL


@pytest.mark.parametrize(
    "source, mode",
    [
        ("with torch.enable_grad():\n    out = model(x)\n", GradMode.ENABLED_EXPLICITLY),
        ("with torch.set_grad_enabled(True):\n    out = model(x)\n", GradMode.ENABLED_EXPLICITLY),
        ("torch.set_grad_enabled(True)\nout = model(x)\n", GradMode.ENABLED_EXPLICITLY),
        ("@torch.set_grad_enabled(True)\ndef f():\n    out = model(x)\n", GradMode.ENABLED_EXPLICITLY),
        ("@torch.no_grad()\n@torch.enable_grad()\ndef f():\n    out = model(x)\n", GradMode.ENABLED_EXPLICITLY),
        ("@torch.set_grad_enabled(flag)\ndef f():\n    out = model(x)\n", GradMode.CONDITIONAL),
        ("out = model(x)\n", GradMode.ENABLED),
    ],
)
def test_gradients_enabled_on_purpose_differ_from_the_default(source, mode):
    facts = facts_of("import torch\n" + source)
    [fact] = [f for f in facts.statements() if isinstance(f.node, cst.Assign)]
    assert fact.grad is mode
    assert facts.value(fact.node.value).is_graph


def test_an_attribute_bound_on_one_branch_keeps_its_previous_value_on_the_other():
    source = """
        import torch
        import torch.nn as nn
        class Memory(nn.Module):
            def forward(self, x):
                if self.memory is None:
                    self.memory = torch.zeros_like(x)
                probe(self.memory)
                self.memory = torch.tanh(self.fc(x) + self.memory)
                return self.memory
    """
    assert value_at_end(source, "self.memory", "forward").is_graph  # the previous call's state


def test_module_and_lightning_methods_called_on_self_are_not_submodules():
    facts = facts_of(
        """
        import torch.nn as nn
        import lightning as L
        class Lit(L.LightningModule):
            def training_step(self, batch, idx):
                names = {id(m): n for n, m in self.named_modules()}
                self.log("loss", batch)
                return self.head(batch)
        """
    )
    assert [facts.module.code_for_node(call.node.func) for call in facts.model_calls()] == ["self.head"]


def test_local_helpers_that_return_a_loss_make_their_call_sites_attached():
    source = """
        import torch.nn.functional as F
        def step(model, x, y):
            return F.cross_entropy(model(x), y)
        loss = step(model, x, y)
        probe(loss)
    """
    value = value_at_end(source, "loss")
    assert value.is_graph and value.evidence is Evidence.LOSS


def test_attributes_assigned_in_init_are_known_in_other_methods():
    source = """
        import torch.nn as nn
        class Trainer:
            def __init__(self):
                self.net = nn.Linear(3, 3)
            def step(self, x):
                out = self.net(x)
                probe(out)
    """
    assert value_at_end(source, "out", "step").is_graph


def test_values_flow_from_one_iteration_to_the_next():
    source = """
        hidden = None
        for x in loader:
            probe(hidden)
            hidden = model(x)
    """
    assert value_at_end(source, "hidden").is_graph


def test_lightning_validation_step_runs_without_grad():
    source = """
        import pytorch_lightning as pl
        class Lit(pl.LightningModule):
            def validation_step(self, batch, idx):
                out = self(batch)
                probe(out)
    """
    assert value_at_end(source, "out", "validation_step").kind is Kind.DETACHED


def test_a_loop_knows_what_it_rebinds_and_whether_it_trains():
    facts = facts_of(
        """
        total = 0
        for x, y in loader:
            running = 0
            loss = criterion(model(x), y)
            loss.backward()
            total += loss
        """
    )
    [loop] = facts.structure.loops.values()
    assert {"x", "y", "running", "loss"} <= loop.rebound and "total" not in loop.rebound
    assert loop.has_backward and loop.is_iteration_loop


@pytest.mark.parametrize(
    "loop, bound",
    [
        ("i = 0\nfor batch in flow(x):\n    show(batch)\n    i += 1\n    if i % 4 == 0:\n        break\n", 4),
        ("n = 0\nwhile True:\n    n += 2\n    if n >= 10:\n        break\n", 5),
        ("k = 3\nwhile k < 10:\n    k += 1\n", 7),
        ("j = 0\nfor b in loader:\n    if j > 5:\n        break\n    j += 1\n", 7),
        ("for x in range(3):\n    pass\n", 3),
        # a continue may skip the increment; a second increment may jump over the bound
        ("m = 0\nfor b in loader:\n    if b:\n        continue\n    m += 1\n    if m == 3:\n        break\n", None),
        ("q = 0\nfor b in loader:\n    q += 1\n    for c in b:\n        q += 1\n    if q == 3:\n        break\n", None),
        ("r = start\nfor b in loader:\n    r += 1\n    if r >= 7:\n        break\n", None),
        ("for b in loader:\n    s = 0\n    s += 1\n    if s > 2:\n        break\n", None),
    ],
)
def test_a_loop_knows_the_iterations_its_literals_or_a_counter_allow(loop, bound):
    facts = facts_of(loop)
    outer = next(info for node, info in facts.structure.loops.items() if node in facts.module.body)
    assert outer.at_most == bound


@pytest.mark.parametrize("name", ["evaluate", "validate", "validation_step", "test", "test_epoch", "predict", "infer", "run_inference", "evaluate_model", "val_epoch", "eval_step"])
def test_evaluation_function_names(name):
    assert is_eval_function_name(name)


@pytest.mark.parametrize("name", ["test_forward_shapes", "train", "training_step", "forward", "attest", "evaluation_metrics_to_csv"])
def test_names_that_are_not_evaluation(name):
    assert not is_eval_function_name(name)


def test_roles_of_constructed_objects():
    source = """
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(ds)
        opt = torch.optim.Adam(params)
        probe(loader)
        probe(opt)
    """
    facts = facts_of(source)
    probes = [f.node.value.args[0].value for f in facts.statements() if isinstance(f.node, cst.Expr)]
    assert [facts.value(p).role for p in probes] == [Role.LOADER, Role.OPTIMIZER]


@pytest.mark.parametrize(
    "guard",
    [
        "from torch import no_grad\n@no_grad()\n",
        "import torch\n@torch.no_grad\n",
        "import torch as th\n@th.inference_mode()\n",
        "import torch\n@torch.set_grad_enabled(False)\n",
        "import torch\n@torch.enable_grad()\n@torch.no_grad()\n",
    ],
)
def test_no_grad_decorators_in_every_spelling(guard):
    source = guard + "def predict(model, x):\n    out = model(x)\n    probe(out)\n"
    assert value_at_end(source, "out", "predict").kind is Kind.DETACHED


def test_set_grad_enabled_false_as_a_statement_disables_grad_for_what_follows():
    source = """
        import torch
        def evaluate(model, x):
            before = model(x)
            torch.set_grad_enabled(False)
            after = model(x)
            probe(after)
    """
    assert value_at_end(source, "after", "evaluate").kind is Kind.DETACHED


def test_enable_grad_inside_no_grad_records_again():
    source = """
        import torch
        with torch.no_grad():
            with torch.enable_grad():
                out = model(x)
        probe(out)
    """
    assert value_at_end(source, "out").is_graph


def test_train_false_puts_a_model_in_eval_mode():
    facts = facts_of(
        """
        import torch.nn as nn
        model = nn.Linear(2, 2)
        model.train(False)
        out = model(x)
        """
    )
    [call] = facts.model_calls()
    assert call.eval_reason == "eval-mode"


# ---- import aliases and the local names that shadow them -------------------------------------------
def _resolved_decorators(source: str) -> dict[str, str | None]:
    """Function name -> what its first decorator's callee resolves to."""
    facts = facts_of(source)
    return {
        info.name: facts.imports.resolve(info.node.decorators[0].decorator.func)
        for info in facts.structure.functions.values()
        if info.node.decorators
    }


def test_a_local_assignment_shadows_an_import_only_in_its_own_function():
    source = """
        import torch

        @torch.no_grad()
        def evaluate(model, loader):
            pass

        def other():
            torch = 3
            return torch
        """
    assert _resolved_decorators(source) == {"evaluate": "torch.no_grad"}
    facts = facts_of(source)
    assert facts.structure.functions[next(iter(facts.structure.functions))].decorator_grad is GradMode.DISABLED


@pytest.mark.parametrize(
    "binding",
    ["def f(model, torch):", "def f(model):\n    for torch in range(3): pass", "def f(model):\n    import numpy as torch",
     "def f(model):\n    with open('x') as torch: pass", "def f(model):\n    torch: int = 3"],
)
def test_a_name_bound_in_a_function_is_not_the_import_inside_it(binding):
    source = f"import torch\n{binding}\n    x = torch.no_grad\n    def inner():\n        return torch.no_grad\ny = torch.no_grad\n"
    facts = facts_of(source)
    attributes = [node for node in _all_nodes(facts.module) if isinstance(node, cst.Attribute) and node.attr.value == "no_grad"]
    assert [facts.imports.resolve(node) for node in attributes] == [None, None, "torch.no_grad"]


def test_a_marimo_cell_parameter_is_the_import_another_cell_makes():
    source = textwrap.dedent(
        """
        import marimo

        app = marimo.App()

        @app.cell
        def _():
            import torch
            return (torch,)

        @app.cell
        def _(torch, model, x):
            with torch.no_grad():
                y = model(x)
            return (y,)

        def helper(torch):
            return torch.no_grad
        """
    )
    facts = facts_of(source)
    attributes = [node for node in _all_nodes(facts.module) if isinstance(node, cst.Attribute) and node.attr.value == "no_grad"]
    # in the cell, `torch` is what marimo hands over (the import); in a plain function it is a parameter
    assert [facts.imports.resolve(node) for node in attributes] == ["torch.no_grad", None]


def test_a_parameter_does_not_shadow_its_functions_decorator():
    source = """
        import torch

        @torch.no_grad()
        def evaluate(model, loader, torch):
            pass
        """
    assert _resolved_decorators(source) == {"evaluate": "torch.no_grad"}


def test_module_level_rebinding_still_hides_the_import_but_an_optional_import_fallback_does_not():
    rebound = _resolved_decorators("import torch\ntorch = None\n@torch.no_grad()\ndef f(): pass\n")
    assert rebound == {"f": None}
    optional = _resolved_decorators(
        "try:\n    import torch as th\nexcept ImportError:\n    th = None\n@th.no_grad()\ndef f(): pass\n"
    )
    assert optional == {"f": "torch.no_grad"}


def test_a_global_declaration_makes_a_functions_assignment_a_module_level_one():
    source = "import torch\ndef f():\n    global torch\n    torch = 3\n@torch.no_grad()\ndef g(): pass\n"
    assert _resolved_decorators(source) == {"g": None}


def test_which_names_a_fix_may_use_where():
    facts = facts_of(
        """
        import torch
        class E:
            torch = 1
            def method(self):
                pass
        def outer(torch):
            def inner():
                pass
        def plain():
            pass
        """
    )
    functions = {info.name: info.node for info in facts.structure.functions.values()}
    imports = facts.imports
    assert not imports.bound_in("torch", None)
    assert not imports.bound_in("torch", functions["plain"])
    assert imports.bound_in("torch", functions["outer"]) and imports.bound_in("torch", functions["inner"])
    assert not imports.bound_in("torch", functions["method"])  # a class body is not a closure
    assert imports.bound_in("torch", imports.scope_around(functions["method"]))  # but its decorators run there


def _all_nodes(module: cst.Module):
    from leaklint.analysis.walk import walk

    return list(walk(module))


def test_a_nonlocal_assignment_shadows_in_the_enclosing_function_not_the_module():
    source = (
        "import torch\n"
        "def outer():\n    torch = None\n    def inner():\n        nonlocal torch\n        torch = 3\n    x = torch.no_grad\n"
        "y = torch.no_grad\n"
    )
    facts = facts_of(source)
    attributes = [node for node in _all_nodes(facts.module) if isinstance(node, cst.Attribute) and node.attr.value == "no_grad"]
    assert [facts.imports.resolve(node) for node in attributes] == [None, "torch.no_grad"]


def test_children_are_cached_only_inside_the_block_that_asks_for_it():
    """Node ids are reused once a tree is freed: a cache that outlived one file's analysis could
    hand another file's node stale children."""
    import libcst as cst

    from leaklint.analysis import walk

    module = cst.parse_module("total = total + loss\n")
    plain = walk.children(module.body[0])
    with walk.children_cached():
        first = walk.children(module.body[0])
        assert walk.children(module.body[0]) is first  # answered from the cache
        assert first == plain
    assert walk._children_cache is None
    assert walk.children(module.body[0]) is not first


def test_a_value_copy_changes_only_known_fields():
    from leaklint.analysis.values import UNKNOWN, replace

    copy = replace(UNKNOWN, kind=Kind.GRAPH, deps=frozenset({"loss"}))
    assert (copy.kind, copy.deps, UNKNOWN.kind) == (Kind.GRAPH, frozenset({"loss"}), Kind.UNKNOWN)
    with pytest.raises(AssertionError):
        replace(UNKNOWN, knd=Kind.GRAPH)


@pytest.mark.parametrize(
    ("write", "kind"),
    [
        ("buf.copy_(out)", Kind.GRAPH),  # autograd records the write: buf carries out's graph
        ("buf.scatter_(0, idx, out)", Kind.GRAPH),
        ("buf.copy_(out.detach())", Kind.DETACHED),  # a detached source leaves buf without history
        ("buf.resize_as_(out)", Kind.DETACHED),  # only out's shape: requires_grad stays False
        ("buf.fill_(1.0)", Kind.DETACHED),
    ],
)
def test_an_in_place_write_of_a_graph_tensor_attaches_the_receiver(write, kind):
    source = f"""
        import torch
        import torch.nn as nn
        model = nn.Linear(4, 4)
        out = model(x)
        buf = torch.zeros(4)
        {write}
        probe(buf)
    """
    assert value_at_end(source, "buf").kind is kind


def test_an_in_place_write_under_no_grad_attaches_nothing():
    source = """
        import torch
        import torch.nn as nn
        model = nn.Linear(4, 4)
        out = model(x)
        buf = torch.zeros(4)
        with torch.no_grad():
            buf.copy_(out)
        probe(buf)
    """
    assert value_at_end(source, "buf").kind is Kind.DETACHED
