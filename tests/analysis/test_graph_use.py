"""leaklint.analysis.graph_use: is the graph a forward records ever used by a backward? And the
carries built on it (leaklint.analysis.carry): inference loops, running statistics, live states."""

from __future__ import annotations

import textwrap

import libcst as cst

from leaklint.analysis.carry import carried_states, detached_each_iteration
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.graph_use import frozen_models, graph_use
from leaklint.findings import Confidence


def facts_of(source: str) -> ModuleFacts:
    return ModuleFacts(cst.parse_module(textwrap.dedent(source)))


def function(facts: ModuleFacts, name: str):
    return next(info for info in facts.structure.functions.values() if info.name == name)


def unused(facts: ModuleFacts, callee: str) -> bool:
    """Whether the (first) forward of ``callee`` has a graph nothing differentiates."""
    call = next(c for c in facts.model_calls() if c.callee == callee)
    used, _ = graph_use(facts).expression_flow(call.node, call.statement.function)
    return not used


def test_a_forward_whose_output_reaches_a_backward_is_used():
    facts = facts_of(
        """
        import torch.nn as nn
        model = nn.Linear(4, 4)
        def loss_of(x):
            return model(x).sum()
        for x in loader:
            loss = loss_of(x)
            loss.backward()
        """
    )
    assert not unused(facts, "model")


def test_outputs_that_end_in_values_files_and_detached_tensors_are_unused():
    facts = facts_of(
        """
        import torch
        import torch.nn as nn
        from torchvision.utils import save_image
        generator = nn.Linear(4, 4)
        def grid(samples, path):
            save_image(torch.cat([s.detach() for s in samples]), path)
        for step, x in enumerate(loader):
            fakes = [generator(x)]
            grid(fakes, f"{step}.png")
        """
    )
    assert unused(facts, "generator")


def test_a_value_kept_where_leaklint_cannot_follow_counts_as_used():
    facts = facts_of(
        """
        import torch.nn as nn
        model = nn.Linear(4, 4)
        class Trainer:
            def run(self, x):
                self.last = model(x)
        """
    )
    assert not unused(facts, "model")
    stored = facts_of(
        """
        import torch.nn as nn
        model = nn.Linear(4, 4)
        def record(buffer, x):
            buffer.append(model(x))
        """
    )
    assert not unused(stored, "model")  # a parameter's container: its callers are unknown


def test_returns_are_followed_to_every_call_site_in_the_file():
    dead = facts_of(
        """
        import torch.nn as nn
        model = nn.Linear(4, 4)
        def predict(x):
            return model(x).cpu()
        flows = [predict(x) for x in frames]
        print(len(flows))
        """
    )
    assert unused(dead, "model")
    used = facts_of(
        """
        import torch.nn as nn
        model = nn.Linear(4, 4)
        def predict(x):
            return model(x)
        print(predict(x0).shape)
        predict(x1).sum().backward()
        """
    )
    assert not unused(used, "model")


def test_a_method_called_on_an_instance_of_a_local_class_is_followed():
    facts = facts_of(
        """
        import torch.nn as nn
        class Sampler:
            def __init__(self, model):
                self.model = model
            def step(self, x):
                return self.model(x)
        sampler = Sampler(nn.Linear(4, 4))
        out = sampler.step(x)
        out.sum().backward()
        """
    )
    assert not unused(facts, "self.model")


def test_runs_with_grad_follows_the_callers():
    facts = facts_of(
        """
        import torch
        def sample(model, n):
            return model(torch.randn(n, 4))
        def helper(model):
            return model(torch.randn(1, 4))
        with torch.no_grad():
            sample(net, 8)
        """
    )
    use = graph_use(facts)
    assert use.runs_with_grad(function(facts, "sample")) is False
    assert use.runs_with_grad(function(facts, "helper")) is None
    assert use.runs_with_grad(facts.structure.top) is True


def test_a_models_own_train_call_is_not_a_call_of_a_plain_classs_train_method():
    facts = facts_of(
        """
        import torch
        class Fitter:
            def __init__(self):
                self.model = torch.nn.Linear(4, 2)
            def run(self, batches, train):
                self.model.train(train)
                return [self.model(x) for x in batches]
            def train(self, batches):
                return self.run(batches, True)
        """
    )
    use = graph_use(facts)
    assert use.runs_with_grad(function(facts, "train")) is None  # no call of it in the file


def test_a_parameter_named_like_nothing_is_a_model_when_every_caller_passes_one():
    facts = facts_of(
        """
        import torch.nn as nn
        def score(policy_net, batches):
            return [policy_net(b) for b in batches]
        net = nn.Linear(4, 4)
        net.eval()
        score(net, data)
        """
    )
    call = facts.model_calls()[0]
    # The value analysis follows the caller's nn.Linear into the parameter (high); without it the
    # callers' evidence still makes it medium.
    assert graph_use(facts).model_confidence(call.node.func, function(facts, "score")) >= Confidence.MEDIUM


def test_frozen_and_parameterless_models():
    facts = facts_of(
        """
        import torch.nn as nn
        teacher = nn.Linear(4, 4)
        for name, p in teacher.named_parameters():
            p.requires_grad = False
        act, lin = nn.ReLU(), nn.Linear(4, 4)
        y = act(x)
        z = lin(x)
        """
    )
    assert frozen_models(facts) == frozenset({"teacher"})
    use = graph_use(facts)
    calls = {call.callee: call for call in facts.model_calls()}
    # nn.ReLU() has no parameters: calling it is no model forward (its output has a graph only
    # through its input), so it is not among the model calls
    assert "act" not in calls
    act = next(f.node.value.func for f in facts.statements() if isinstance(f.node, cst.Assign) and facts.describe(f.node.value) == "act(x)")
    assert use.parameterless(act, facts.structure.top)
    assert not use.parameterless(calls["lin"].node.func, facts.structure.top)


def test_a_state_must_be_read_before_it_is_rebound_to_be_carried():
    facts = facts_of(
        """
        import torch
        import torch.nn.functional as F
        def refine(model, optimizer, batches):
            for title, target in batches:
                draft = torch.zeros_like(target)
                for _ in range(3):
                    logits = model(title, draft)
                    loss = F.cross_entropy(logits, target)
                    loss.backward(retain_graph=True)
                    optimizer.step()
                    draft = logits.argmax(-1)
        """
    )
    assert [carry.name for carry in carried_states(facts)] == []


def test_an_inference_loop_carry_and_its_seed():
    facts = facts_of(
        """
        import torch.nn as nn
        model = nn.GRU(4, 4)
        def generate(x, steps):
            out, h = model(x)
            for _ in range(steps):
                out, h = model(out, h)
            return out.argmax(-1).tolist()
        print(generate(x0, 100))
        """
    )
    (carry,) = [c for c in carried_states(facts) if c.name == "h"]
    assert carry.graph_unused and carry.reported and not carry.crosses_steps
    assert len(carry.seeds) == 1


def test_a_running_statistic_of_a_layer():
    facts = facts_of(
        """
        import torch
        import torch.nn as nn
        class Norm(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("mean", torch.zeros(4))
            def forward(self, x):
                self.mean.mul_(0.9).add_(0.1 * x.mean(0))
                return x
        net = nn.Sequential(nn.Linear(4, 4), Norm())
        """
    )
    (carry,) = carried_states(facts)
    assert carry.name == "self.mean" and carry.running_statistic and carry.value.confidence is Confidence.MEDIUM


def test_states_detached_every_iteration():
    facts = facts_of(
        """
        def sample(model, x, steps):
            for t in range(steps):
                x = x - model(x)
                x = x.detach()
            return x
        """
    )
    assert (function(facts, "sample"), "x") in detached_each_iteration(facts)


def test_a_dict_entry_read_only_detached_is_unused_while_its_neighbour_is_trained_on():
    facts = facts_of(
        """
        import torch.nn as nn
        policy = nn.Linear(4, 4)
        def step(tokens, optimizer):
            trajectories = []
            for _ in range(8):
                logp = policy(tokens)
                trajectories.append({"tokens": tokens, "old_logp": logp})
            for traj in trajectories:
                loss = (traj["tokens"] - traj["old_logp"].detach()).sum()
                loss.backward()
        """
    )
    assert unused(facts, "policy")


def test_a_dict_entry_read_under_its_key_by_a_loss_is_used():
    facts = facts_of(
        """
        import torch.nn as nn
        policy = nn.Linear(4, 4)
        def step(tokens, key):
            trajectories = []
            for _ in range(8):
                trajectories.append({"tokens": tokens, "logp": policy(tokens)})
            for traj in trajectories:
                traj["logp"].sum().backward()
            for traj in trajectories:
                traj[key].sum().backward()
        """
    )
    assert not unused(facts, "policy")


def test_a_tuple_item_unpacked_into_another_name_is_not_followed():
    facts = facts_of(
        """
        import torch.nn as nn
        model = nn.Linear(4, 4)
        def run(x, y):
            pair = (model(x), y)
            out, target = pair
            target.sum().backward()
            print(out.shape)
        """
    )
    assert unused(facts, "model")


def test_a_name_bound_again_before_the_backward_leaves_the_first_value_unused():
    facts = facts_of(
        """
        import torch.nn as nn
        model = nn.Linear(4, 4)
        head = nn.Linear(4, 4)
        def run(x):
            logits = model(x)
            print(logits.argmax())
            logits = head(x)
            logits.sum().backward()
        """
    )
    assert unused(facts, "model")
    assert not unused(facts, "head")


def test_a_binding_in_a_branch_keeps_every_read():
    facts = facts_of(
        """
        import torch.nn as nn
        model = nn.Linear(4, 4)
        head = nn.Linear(4, 4)
        def run(x, flag):
            logits = model(x)
            if flag:
                logits = head(x)
            logits.sum().backward()
        """
    )
    assert not unused(facts, "model")



def _keep_at(facts: ModuleFacts, line: int, container: str):
    fact = next(f for f in facts.statements() if facts.line_of(f.node) == line)
    return facts.lifetime(fact, container)


_FLOW = """
import torch
import torch.nn as nn
class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 8)
    def sample(self, n):
        return self.net(torch.randn(n, 4))
"""


def test_a_keep_of_a_helpers_forward_is_the_finding_and_names_the_forward():
    facts = facts_of(
        _FLOW
        + """
def draw(flow, count):
    accepted = []
    while len(accepted) < count:
        candidates = flow.sample(256)
        accepted.append(candidates[candidates[:, 0] > 0])
    return torch.cat(accepted)
print(draw(Flow(), 10).shape)
"""
    )
    lifetime = _keep_at(facts, 15, "accepted")
    assert lifetime.graph_unused and lifetime.unused_forward_line == 9
    assert not lifetime.unused_forward_reported
    assert lifetime.leak_confidence(Confidence.MEDIUM) is Confidence.MEDIUM


def test_a_keep_next_to_its_forward_leaves_the_finding_to_the_forward():
    facts = facts_of(
        _FLOW
        + """
    def forward(self, x):
        return self.net(x)
def draw(flow, count):
    accepted = []
    while len(accepted) < count:
        candidates = flow(torch.randn(256, 4))
        accepted.append(candidates[candidates[:, 0] > 0])
    return torch.cat(accepted)
print(draw(Flow(), 10).shape)
"""
    )
    lifetime = _keep_at(facts, 17, "accepted")
    assert lifetime.graph_unused and lifetime.unused_forward_reported
    assert lifetime.leak_confidence(Confidence.MEDIUM) is Confidence.LOW


def test_a_step_hook_called_by_a_home_made_trainer_runs_as_its_calls_do():
    """validation_step of a class no framework runs: the calls the file shows decide whether it
    records gradients (here every call is under no_grad)."""
    facts = facts_of(
        """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def validation_step(self, batch):
                return self(batch)
        class Trainer:
            def fit(self, model, val):
                for batch in val:
                    with torch.no_grad():
                        model.validation_step(batch)
        """
    )
    assert graph_use(facts).runs_with_grad(function(facts, "validation_step")) is False


def test_a_lightning_step_hook_keeps_its_framework_callers():
    facts = facts_of(
        """
        import torch
        import pytorch_lightning as pl
        class Net(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                return self(batch).sum()
        def smoke(model, batch):
            with torch.no_grad():
                model.training_step(batch, 0)
        """
    )
    assert graph_use(facts).runs_with_grad(function(facts, "training_step")) is True


def test_a_parameterless_module_run_only_on_plain_tensors_is_fed_no_graph():
    """Attention with only dropout, called on torch.normal tensors: its forward records nothing
    (LL105 leaves the weights it keeps alone); inside a module with layers, its inputs carry one."""
    source = """
        import torch
        from torch import nn
        class DotProductAttention(nn.Module):
            def __init__(self, dropout):
                super().__init__()
                self.dropout = nn.Dropout(dropout)
            def forward(self, q, k, v):
                self.weights = torch.softmax(q @ k.transpose(1, 2), dim=-1)
                return self.dropout(self.weights) @ v
        q, k, v = torch.normal(0, 1, (2, 1, 2)), torch.normal(0, 1, (2, 10, 2)), torch.normal(0, 1, (2, 10, 4))
        attention = DotProductAttention(0.5)
        print(attention(q, k, v).shape)
        """
    alone = facts_of(source)
    cls = next(c for c in alone.structure.classes.values() if c.name == "DotProductAttention")
    assert graph_use(alone).fed_no_graph(cls) is True
    inside = facts_of(
        source
        + """
        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.q = nn.Linear(2, 2)
                self.attention = DotProductAttention(0.1)
            def forward(self, x):
                return self.attention(self.q(x), x, x)
        """
    )
    cls = next(c for c in inside.structure.classes.values() if c.name == "DotProductAttention")
    assert graph_use(inside).fed_no_graph(cls) is False


def test_returned_by_follows_names_to_the_function_return():
    facts = facts_of(
        """
        import torch.nn as nn
        model = nn.Linear(4, 4)
        def direct(x):
            return model(x)
        def through_a_name(x):
            y = model(x) * 2
            return y
        def only_logged(x):
            y = model(x)
            print(y.mean().item())
            return x
        """
    )
    use = graph_use(facts)
    returned = {}
    for call in facts.model_calls():
        returned[call.statement.function.name] = use.returned_by(call.node, call.statement.function)
    assert returned == {"direct": True, "through_a_name": True, "only_logged": False}


def test_frozen_parameters_and_sequential_containers_are_parameterless():
    facts = facts_of(
        """
        import torch
        import torch.nn as nn
        class Window(nn.Module):
            def __init__(self, n=64):
                super().__init__()
                self.w = nn.Parameter(torch.hann_window(n), requires_grad=False)
        class Basis(nn.Module):
            def __init__(self, n=64):
                super().__init__()
                self.b = nn.Parameter(torch.rand(n, n))
                self.b.requires_grad_(False)
        class Trained(nn.Module):
            def __init__(self, n=64):
                super().__init__()
                self.b = nn.Parameter(torch.rand(n, n))
        fixed = nn.Sequential(Window(), Basis(), nn.ReLU())
        mixed = nn.Sequential(Window(), Trained())
        a = fixed(x)
        b = mixed(x)
        """
    )
    use = graph_use(facts)
    classes = facts.structure.classes_by_name
    assert use.class_parameterless(classes["Window"]) and use.class_parameterless(classes["Basis"])
    assert not use.class_parameterless(classes["Trained"])
    calls = {call.callee: call for call in facts.model_calls()}
    assert use.parameterless(calls["fixed"].node.func, facts.structure.top)
    assert not use.parameterless(calls["mixed"].node.func, facts.structure.top)
