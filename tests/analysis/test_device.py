"""Where a tensor lives (leaklint.analysis.device, ``Value.device``) and what a statement keeps
(leaklint.analysis.stores)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from leaklint.analysis.device import on_accelerator, produces_model_output
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import ImportMap
from leaklint.analysis.stores import stores
from leaklint.analysis.values import Device, Kind, Value, join


def facts_of(source: str) -> ModuleFacts:
    return ModuleFacts(cst.parse_module(textwrap.dedent(source)))


def probe(source: str, function: str = "<module>") -> Value:
    """The value of the argument of the ``probe(...)`` statement in ``function``."""
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


@pytest.mark.parametrize(
    "expression, device",
    [
        ("x.to(device)", Device.ACCELERATOR),
        ("x.cuda()", Device.ACCELERATOR),
        ("x.to('cuda:1', non_blocking=True)", Device.ACCELERATOR),
        ("x.to(device=self_device)", Device.ACCELERATOR),
        ("x.to(device).cpu()", Device.HOST),
        ("x.cuda().to('cpu')", Device.HOST),
        ("x.cuda().to(torch.device('cpu'))", Device.HOST),
        ("x.cuda().to(torch.float16)", Device.ACCELERATOR),
        ("x.cuda().to(y.dtype)", Device.ACCELERATOR),
        ("torch.zeros(3, device=device)", Device.ACCELERATOR),
        ("torch.zeros(3)", Device.HOST),
        ("torch.zeros(3, device='cpu')", Device.HOST),
        ("torch.zeros_like(x.cuda())", Device.ACCELERATOR),
        ("torch.softmax(x.cuda(), dim=-1)", Device.ACCELERATOR),
        ("x.cuda().argmax(-1)[:5] * 2", Device.ACCELERATOR),
        ("[x.cuda(), y]", Device.ACCELERATOR),
        ("{'a': x.cuda()}", Device.ACCELERATOR),
        ("torch.zeros(3).cuda() == y", Device.ACCELERATOR),
        ("einops.rearrange(x.cuda(), 'b c -> c b')", Device.ACCELERATOR),
        ("x", Device.UNKNOWN),
        ("metric(x.cuda())", Device.UNKNOWN),
        ("tokenizer.decode(x.cuda())", Device.UNKNOWN),
    ],
)
def test_where_an_expression_puts_a_tensor(expression, device):
    source = f"import torch\nimport einops\nprobe({expression})\n"
    assert probe(source).device is device


def test_a_model_output_is_where_the_model_or_its_inputs_are():
    source = """\
        import torch
        model = Net().to(device)
        net = Net()
        a = model(x)
        b = net(x.cuda())
        c = net(x)
        d = model.generate(x)
        probe((a, b, c, d))
        """
    value = probe(source)
    assert [item.device for item in value.items] == [Device.ACCELERATOR, Device.ACCELERATOR, Device.UNKNOWN, Device.ACCELERATOR]


def test_flow_order_matters():
    source = """\
        import torch
        def f(model, x, device):
            with torch.no_grad():
                logits = model(x.to(device))
            probe(logits)
            logits = logits.cpu()
            keep(logits)
        """
    assert probe(source, "f").device is Device.ACCELERATOR
    facts = facts_of(source)
    keep = next(fact for fact in facts.statements() if "keep" in facts.module.code_for_node(fact.node))
    assert keep.env["logits"].device is Device.HOST


def test_a_device_chosen_on_one_path_only_is_either():
    source = """\
        import torch
        def bank(n, use_cuda):
            features = torch.zeros(n, 8)
            if use_cuda:
                features = features.cuda()
            probe(features)
        """
    value = probe(source, "bank")
    assert value.device is Device.EITHER
    assert not on_accelerator(value)


def test_joining_keeps_the_accelerator_but_not_a_python_value():
    on_device = Value(Kind.DETACHED, device=Device.ACCELERATOR)
    nothing = Value(Kind.NOT_TENSOR)
    host = Value(Kind.DETACHED, device=Device.HOST)
    assert join(nothing, on_device).device is Device.ACCELERATOR
    assert join(nothing, host).device is Device.HOST
    assert join(host, on_device).device is Device.EITHER


def test_frameworks_place_batches_and_models():
    source = """\
        import lightning.pytorch as pl
        import torch
        from transformers import Trainer
        from accelerate import Accelerator

        class Lit(pl.LightningModule):
            def __init__(self):
                super().__init__()
                self.net = torch.nn.Linear(4, 4)

            def validation_step(self, batch, batch_idx):
                x, y = batch
                probe((x, self.net(x[0].float().cpu()), self(x)))

        class MyTrainer(Trainer):
            def evaluate_all(self, loader):
                for inputs in loader:
                    probe((self._prepare_inputs(inputs), self.prediction_step(self.model, inputs, False)))

        def gather(accelerator, logits):
            probe(accelerator.gather_for_metrics(logits))
        """
    lit = probe(source, "validation_step")
    assert [item.device for item in lit.items] == [Device.ACCELERATOR] * 3
    trainer = probe(source, "evaluate_all")
    assert [item.device for item in trainer.items] == [Device.ACCELERATOR] * 2
    assert probe(source, "gather").device is Device.ACCELERATOR


def test_local_functions_return_their_tensors_place():
    source = """\
        import torch
        def features(model, x):
            return model(x.cuda())[0]
        def host(model, x):
            return model(x.cuda()).cpu()
        def caller(model, x):
            probe((features(model, x), host(model, x)))
        """
    value = probe(source, "caller")
    assert [item.device for item in value.items] == [Device.ACCELERATOR, Device.HOST]


@pytest.mark.parametrize(
    "statement, expected",
    [
        ("preds.append(out)", ("preds", "out", "append")),
        ("d.setdefault(k, []).append(out)", ("d", "out", "append")),
        ("d[k][j] = out", ("d", "out", "item")),
        ("preds += [out]", ("preds", "[out]", "append")),
        ("preds = preds + [out]", ("preds", "[out]", "append")),
        ("preds = torch.cat([preds, out])", ("preds", "out", "concat")),
        ("preds = out if preds is None else torch.cat((preds, out), dim=0)", ("preds", "out", "concat")),
        ("preds = torch.cat([preds, out]) if preds is not None else out", ("preds", "out", "concat")),
    ],
)
def test_what_a_statement_keeps(statement, expected):
    module = cst.parse_module(f"import torch\n{statement}\n")
    imports = ImportMap.from_module(module)
    node = module.body[1].body[0]
    found = [(store.container, module.code_for_node(store.value), store.kind) for store in stores(node, imports)]
    assert expected in found


@pytest.mark.parametrize(
    "statement",
    ["stats['last'] = out", "buffer[i:j] = out", "preds = torch.cat([a, out])", "x = out"],
)
def test_what_keeps_nothing_new(statement):
    module = cst.parse_module(f"import torch\n{statement}\n")
    node = module.body[1].body[0]
    assert list(stores(node, ImportMap.from_module(module))) == []


def test_calls_that_produce_a_model_output():
    facts = facts_of(
        """\
        import torch
        def helper(model, x):
            return model(x)
        def run(model, x):
            a = model(x)
            b = model.generate(x)
            c = helper(model, x)
            d = torch.softmax(x, -1)
            e = model.parameters()
        """
    )
    run = next(info for info in facts.structure.functions.values() if info.name == "run")
    calls = {
        facts.module.code_for_node(fact.node.targets[0].target): fact.node.value
        for fact in facts.statements()
        if fact.function is run and isinstance(fact.node, cst.Assign)
    }
    produced = {name for name, call in calls.items() if produces_model_output(facts, call, run)}
    assert produced == {"a", "b", "c"}


def test_every_part_of_a_model_output_lives_where_the_output_does():
    # a module class of the file whose forward returns a tuple, run on the accelerator: each part
    # unpacked from its output is there too, with gradients on or off; a Python number returned
    # next to a tensor by a plain function is not
    source = """
        import time
        import torch
        import torch.nn as nn

        class Autoencoder(nn.Module):
            def forward(self, x):
                code = self.encoder(x)
                return code, self.decoder(code)

        def timed_loss(a, b):
            start = time.time()
            loss = (a - b).square().mean()
            return loss, time.time() - start

        def run(x):
            model = Autoencoder().cuda()
            code, recon = model(x.cuda())
            with torch.no_grad():
                frozen_code, _ = model(x.cuda())
            loss, seconds = timed_loss(recon, x.cuda())
            probe(PROBED)
    """
    assert probe(source.replace("PROBED", "code"), "run").device is Device.ACCELERATOR
    assert probe(source.replace("PROBED", "frozen_code"), "run").device is Device.ACCELERATOR
    assert probe(source.replace("PROBED", "seconds"), "run").device is not Device.ACCELERATOR
