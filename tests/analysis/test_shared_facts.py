"""The facts several rules share (leaklint.analysis beyond values): where a node runs, which local
function a call runs, which functions run every step, hooks, carried states, Keras models, lines."""

from __future__ import annotations

import textwrap

import libcst as cst

import pytest

from leaklint.analysis.accumulate import accumulation, grown_tensor
from leaklint.analysis.arguments import literal_truth
from leaklint.analysis.calls import call_graph, local_callee
from leaklint.analysis.names import ImportMap
from leaklint.analysis.carry import carried_states
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.hooks import HookKind, hook_registrations, resolve_hook
from leaklint.analysis.keras import keras_models
from leaklint.analysis.places import Level, loop_level, step_level
from leaklint.analysis.steps import per_step_functions
from leaklint.analysis.syntax import call_argument, is_literal, written_words


def facts_of(source: str) -> ModuleFacts:
    return ModuleFacts(cst.parse_module(textwrap.dedent(source)))


def function(facts: ModuleFacts, name: str):
    return next(info for info in facts.structure.functions.values() if info.name == name)


def test_derived_facts_are_built_once_per_module():
    facts = facts_of("import torch\n")
    assert facts.index is facts.index
    assert call_graph(facts) is call_graph(facts)
    assert hook_registrations(facts) is hook_registrations(facts)


def test_line_of_positions_a_node_anywhere_in_the_module():
    facts = facts_of(
        """\
        import torch

        def train(loader):
            for epoch in range(3):
                for x in loader:
                    pass
        """
    )
    lines = sorted(facts.line_of(loop) for loop in facts.structure.loops)
    assert lines == [4, 5]
    assert facts.line_of(cst.Name("elsewhere")) is None


def test_loop_levels_and_the_step_a_call_runs_in():
    facts = facts_of(
        """\
        import torch
        for epoch in range(10):
            for x, y in loader:
                loss = model(x).sum()
                loss.backward()
                torch.cuda.empty_cache()
            for head in heads:
                head.reset()
        """
    )
    levels = sorted(loop_level(facts, loop).value for loop in facts.structure.loops)
    assert levels == ["epoch", "step", "structure"]
    [place] = facts.index.calls_named("empty_cache")
    assert step_level(facts, place)[0] is Level.STEP
    [reset] = facts.index.calls_named("reset")
    assert step_level(facts, reset)[0] is Level.EPOCH  # the structure loop does not count


def _levels_by_line(facts: ModuleFacts) -> dict[int, str]:
    return {facts.line_of(loop): loop_level(facts, loop).value for loop in facts.structure.loops}


def test_loops_are_classified_by_what_they_do_not_by_their_names():
    facts = facts_of(
        """\
        import torch
        from torch.utils.data import DataLoader
        from transformers import Trainer

        def evaluate(model, records):
            outs = []
            for inputs, _ in records:                           # 7: runs the model on a field of each record
                outs.append(model(inputs))
            return outs

        def embed(model, texts, n):
            outs = []
            for start in range(0, len(texts), n):               # 13: a chunk walk (LL202's concern, not a step)
                outs.append(model(texts[start:start + n]))
            return outs

        def fid_stats(model, dl, num_batches):
            it = iter(dl)
            for _ in range(num_batches):                        # 19: draws a batch and runs the model on it
                batch = next(it)
                model(batch)

        class MyTrainer(Trainer):
            def gather(self, dataset):
                for batch in self.get_eval_dataloader(dataset):  # 25: the trainer's loader
                    print(batch)

        def train(model, dataset, opt):
            loader = DataLoader(dataset)
            for batch_iter_step in range(3):                    # 30: names say step, it does nothing per step
                print(batch_iter_step)
            for epoch_count in [1, 2]:                          # 32: around a step loop, not counting
                for x in loader:                                # 33: a loader value
                    print(x)
            for n in range(100):                                # 35: counts, around a step loop
                for x in loader:
                    opt.zero_grad()
                    model(x).sum().backward()
                    opt.step()
        """
    )
    assert _levels_by_line(facts) == {
        7: "step", 13: "structure", 19: "step", 25: "step", 30: "structure", 32: "outer", 33: "step", 35: "epoch", 36: "step",
    }


def test_guards_stay_in_their_scope_unless_asked():
    facts = facts_of(
        """\
        if debug:
            def check():
                if step % 10 == 0:
                    torch.autograd.set_detect_anomaly(True)
        """
    )
    [place] = facts.index.calls_named("set_detect_anomaly")
    assert [cst.Module([]).code_for_node(test) for test in place.guards()] == ["step % 10 == 0"]
    assert len(place.all_guards()) == 2


def test_branches_say_which_side_of_each_test_holds_the_node():
    facts = facts_of(
        """\
        def run(phase, step):
            if phase == "train":
                pass
            elif step:
                optimizer.step()
        """
    )
    [place] = facts.index.calls_named("step")
    assert [(cst.Module([]).code_for_node(test), side) for test, side in place.branches()] == [('phase == "train"', False), ("step", True)]


@pytest.mark.parametrize(
    "test, literals, truth",
    [
        ("train", {"train": False}, False),
        ("not train", {"train": False}, True),
        ('phase == "train"', {"phase": "val"}, False),
        ('phase != "train"', {"phase": "val"}, True),
        ('mode in ("train", "finetune")', {"mode": "finetune"}, True),
        ('mode not in ["train"]', {"mode": "train"}, False),
        ("train", {}, None),
        ("phase == other", {"phase": "val"}, None),
        ("train and debug", {"train": True, "debug": True}, None),
    ],
)
def test_the_truth_of_a_test_on_literal_parameters(test, literals, truth):
    assert literal_truth(cst.parse_expression(test), literals) is truth


def test_recovery_code_behind_an_error_flag():
    facts = facts_of(
        """\
        import torch
        def step(model, batch):
            oom, failure, big = False, None, False
            try:
                model(batch).sum().backward()
            except torch.cuda.OutOfMemoryError as e:
                oom = True
                failure = e
                big = True
            big = batch.numel() > 10
            if oom:
                first()
            else:
                second()
            if failure is not None and retries < 3:
                third()
            if big:
                fourth()
        """
    )
    flagged = {name: facts.index.calls_named(name)[0].guarded_by_error_flag() for name in ("first", "second", "third", "fourth")}
    assert flagged == {"first": True, "second": False, "third": True, "fourth": False}


def test_loops_that_run_the_model_on_each_item_repeat_per_input():
    facts = facts_of(
        """\
        class Explainer:
            def __init__(self, model):
                self.model = model
            def __call__(self, x):
                return self.model(x)
        def explain(model, images, names):
            for img in images:
                model(img.unsqueeze(0))
            for layer in model.modules():
                model(warmup)
            for name in names:
                Explainer(model)(name)
        """
    )
    loops = {facts.module.code_for_node(loop.node.target): loop for loop in facts.structure.loops.values()}
    assert {name: loop.repeats_per_input for name, loop in loops.items()} == {"img": True, "layer": False, "name": True}
    assert not any(loop.is_iteration_loop for loop in loops.values())  # values piling up: not across these


@pytest.mark.parametrize(
    "statement, target, terms",
    [
        ("total += loss", "total", ["loss"]),
        ("stats['loss'] -= loss", "stats", ["loss"]),
        ("avg = 0.9 * avg + 0.1 * loss", "avg", ["0.1 * loss"]),
        ("avg = avg * decay + loss", "avg", ["loss"]),
        ("total = (total +\n         loss)", "total", ["loss"]),
        ("total = total - (a + b)", "total", ["a", "b"]),
        ("total.add_(loss, alpha=0.5)", "total", ["loss"]),
        ("total = th.add(total, loss)", "total", ["loss"]),
        ("total = th.add(loss, total)", "total", ["loss"]),
        ("total = total.add(loss)", "total", ["loss"]),
        ("total = sum([total, loss])", "total", ["loss"]),
        ("hist['loss'] = hist.get('loss', 0) + loss", "hist", ["loss"]),
        ("hist['loss'] = hist['loss'] + loss", "hist", ["loss"]),
        ("ema = loss if ema is None else 0.9 * ema + 0.1 * loss", "ema", ["0.1 * loss", "loss"]),
        ("outs += [out]", None, None),
        ("total = f(total, loss)", None, None),
        ("total = th.sub(loss, total)", None, None),
        ("h = h * w + h", None, None),
        ("hist['a'] = hist.get('b', 0) + loss", None, None),
        ("total *= loss", None, None),
    ],
)
def test_what_counts_as_an_accumulation(statement, target, terms):
    module = cst.parse_module("import torch as th\n" + statement + "\n")
    found = accumulation(module.body[1].body[0], ImportMap.from_module(module))
    if target is None:
        assert found is None
    else:
        assert found is not None and found.target == target
        assert [module.code_for_node(term) for term in found.terms] == terms


def test_a_tensor_grown_by_concatenation():
    module = cst.parse_module("import torch\npreds = torch.cat([preds, out])\nother = torch.cat([a, out])\n")
    imports = ImportMap.from_module(module)
    grown = grown_tensor(module.body[1].body[0], imports)
    assert grown is not None and grown[0] == "preds" and [module.code_for_node(p) for p in grown[1]] == ["out"]
    assert grown_tensor(module.body[2].body[0], imports) is None


def test_calls_resolve_to_nested_functions_methods_and_inherited_methods():
    facts = facts_of(
        """\
        def helper(): pass
        class Base:
            def shared(self): pass
            @classmethod
            def build(cls): return cls.make()
            @classmethod
            def make(cls): pass
        class Child(Base):
            def run(self):
                def helper(): pass
                helper()
                self.shared()
        def main():
            helper()
            for x in helper():
                pass
        """
    )
    graph = call_graph(facts)
    run = function(facts, "run")
    callees = {callee.name: callee for _, callee in graph.callees_of(run)}
    assert set(callees) == {"helper", "shared"}
    assert callees["helper"].parent is run  # the nested def shadows the module-level one
    assert callees["shared"].cls.name == "Base"
    [(_, make)] = graph.callees_of(function(facts, "build"))
    assert make.name == "make"
    module_helper = facts.structure.functions[facts.structure.module_functions["helper"]]
    assert len(graph.sites_of(module_helper)) == 1  # the statement view: `helper()` in main
    assert len(graph.places_of(module_helper)) == 2  # the syntax view also sees the loop header


def test_calling_an_object_of_a_local_class_runs_its_dunder_call():
    facts = facts_of(
        """\
        class Scaler:
            def __init__(self, mean):
                self.mean = mean
            def __call__(self, x):
                return x - self.mean
        def main(batches):
            scale = Scaler(0.5)
            for x in batches:
                print(scale(x))
            return [scale(x) for x in batches]
        """
    )
    graph = call_graph(facts)
    dunder = function(facts, "__call__")
    assert len(graph.sites_of(dunder)) == 2  # the statement view: the print and the return
    assert len(graph.places_of(dunder)) == 2  # the syntax view: the same two calls
    assert "__call__" in {callee.name for _, callee in graph.callees_of(function(facts, "main"))}


def test_local_callee_ignores_calls_it_cannot_see():
    facts = facts_of("import os\ndef f():\n    os.getcwd()\n    obj.method()\n")
    calls = [call for call, _ in facts.index.statement_calls]
    assert [local_callee(call, function(facts, "f"), facts) for call in calls] == [None, None]


def test_functions_that_run_every_step():
    facts = facts_of(
        """\
        def log_stats(x): pass
        def update(model, x, y):
            loss = model(x).sum()
            loss.backward()
            log_stats(loss)
        def setup(): pass
        for x, y in loader:
            update(model, x, y)
        setup()
        """
    )
    per_step = {info.name: why for info, why in per_step_functions(facts).items()}
    assert set(per_step) == {"update", "log_stats"}
    assert per_step["log_stats"] == "'log_stats' is called from 'update', which runs every step"


def test_what_a_frameworks_per_batch_hook_calls_runs_every_step():
    facts = facts_of(
        """\
        import pytorch_lightning as pl
        class Plotter:
            def update(self, pred):
                self.kept.append(pred)
        class Forecaster(pl.LightningModule):
            def __init__(self):
                super().__init__()
                self.plotter = Plotter()
            def test_step(self, batch, batch_idx):
                self.plotter.update(self(batch))
        """
    )
    per_step = {info.name: why for info, why in per_step_functions(facts).items()}
    assert per_step["test_step"] == "the framework calls 'test_step' once per batch"
    assert "update" in per_step


def test_hooks_resolve_through_factories_and_partials():
    facts = facts_of(
        """\
        import functools
        def get_activation(name):
            def hook(module, inputs, output):
                store[name] = output
            return hook
        def save(name, module, inputs, output): pass
        model.fc.register_forward_hook(get_activation("fc"))
        model.head.register_forward_hook(functools.partial(save, "head"))
        x.register_hook(lambda g: g)
        """
    )
    registrations = hook_registrations(facts)
    assert [r.kind for r in registrations] == [HookKind.FORWARD, HookKind.FORWARD, HookKind.TENSOR]
    resolved = [resolve_hook(r.hook, r.fact.function, facts) for r in registrations]
    assert [[h.node.name.value for h in hooks] for hooks in resolved[:2]] == [["hook"], ["save"]]
    assert resolved[1][0].bound == 1
    assert isinstance(resolved[2][0].node, cst.Lambda)


def test_carried_states_follow_a_hidden_state_across_batches():
    facts = facts_of(
        """\
        hidden = model.init_hidden(4)
        for x, y in loader:
            out, hidden = model(x, hidden)
            criterion(out, y).backward()
        """
    )
    [carry] = carried_states(facts)
    assert carry.name == "hidden" and carry.crosses_steps and carry.backward_each_iteration


def test_keras_models_by_constructor_builder_and_compile():
    facts = facts_of(
        """\
        from tensorflow import keras
        def build():
            net = keras.Sequential()
            return net
        a = keras.models.load_model("m.h5")
        b = build()
        c.compile(optimizer="adam", loss="mse")
        """
    )
    models = keras_models(facts)
    assert set(models.builders) == {"build"}
    place = facts.index.assignments[-1]
    assert all(models.name(name, place) is not None for name in ("a", "b", "c"))
    assert models.name("d", place) is None


def test_call_arguments_by_position_or_keyword():
    call = cst.parse_expression("f(1, *rest, flag=False)")
    assert isinstance(call, cst.Call)
    assert is_literal(call_argument(call, 0), "1")
    assert call_argument(call, 1) is None  # hidden behind *rest
    assert call_argument(call, 5, "flag") is None  # *rest comes first: unknown
    keyword = cst.parse_expression("f(x, flag=False)")
    assert is_literal(call_argument(keyword, 3, "flag"), "False")  # type: ignore[arg-type]


def test_written_words_are_names_and_strings_but_no_comment():
    expression = cst.parse_expression('(  # all the params\n    group["params"] + model.named_buffers(f"{x}rest")\n)')
    assert written_words(expression) == ["group", '"params"', "model", "named_buffers", "x", "rest"]
