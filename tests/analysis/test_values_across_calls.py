"""Values followed through the file's own code: what calls pass, what dicts and containers hold,
which branch the calls open, where a method keeps what it is given, who backpropagates a result."""

from __future__ import annotations

import textwrap

import libcst as cst

from leaklint.analysis.facts import ModuleFacts
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
