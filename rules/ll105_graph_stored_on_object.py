"""LL105 graph-stored-on-object: one step's autograd graph parked in an attribute, a global, a
closure cell, or the store of a forward hook."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from leaklint.analysis.torch_api import GLOBAL_HOOK_FUNCTIONS, HOOK_METHODS
from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.prefilter import SyntaxShape


class GraphStoredOnObject(Rule):
    code = "LL105"
    name = "graph-stored-on-object"
    severity = Severity.PEAK
    summary = "A graph-attached tensor is kept in an attribute, a global or a hook's store from one step to the next."
    help = "store the tensor's .detach() (add .cpu() to move it off the device)"
    docs = """
## What it finds
A tensor that carries its autograd graph (a model output, a loss, or something computed from one,
with gradients enabled) stored where it outlives the step that made it:

- an attribute (`self.last_attention = attn`), a `global` or a `nonlocal` name, or a constant-key
  slot of one (`self.stats["out"] = out`), assigned in `forward`, `training_step`, `train_step`,
  `step`, a function that runs one training step (it calls backward outside its own loops), a
  function called once per iteration from a loop in the same file, or inside a training or
  evaluation loop;
- the output or input of a forward hook (or the input of a forward pre-hook) stored by the hook
  into an attribute, a global, a closure variable, or a dict/list that lives outside the hook:
  `activation[name] = output` in the classic feature-extraction hook, `self.activations = output`
  in a Grad-CAM helper, `module.out = out`. A hook that appends to a list grows with every forward
  pass, and the message says so. Hooks are found from the `register_forward_hook`,
  `register_forward_pre_hook` and `register_module_forward_hook` calls in the file: plain functions,
  methods (`self.save`), nested defs returned by a factory (`get_activation(name)`), lambdas,
  objects with `__call__` and `functools.partial`.

## Why it matters
The slot holds one graph at a time, so memory does not grow; but the graph of the last step, with
every activation it saved for backward, stays alive while the next step builds its own. Without a
backward in between (evaluation, feature extraction, visualisation) that doubles the peak memory of
a forward pass; with one, the stored tensor itself (an attention map is batch x heads x tokens x
tokens) and the graph's nodes still survive into the next step. The PyTorch FAQ warns about exactly
this: a tensor assigned to a member variable is not freed until the object goes out of scope.

## Example
```python
activation = {}

def get_activation(name):
    def hook(module, inputs, output):
        activation[name] = output
    return hook

model.layer4.register_forward_hook(get_activation("layer4"))
```

## Use instead
```python
activation = {}

def get_activation(name):
    def hook(module, inputs, output):
        activation[name] = output.detach()
    return hook

model.layer4.register_forward_hook(get_activation("layer4"))
```

## Fix safety
No automatic fix: the stored tensor may be read later for a backward (which `.detach()` would
break), for logging (`.detach()` fits) or for display (`.item()`, `.cpu()`); which one is right,
and whether the attribute should be kept at all, is a judgement call.

## Known false positives
A stored tensor that is meant to carry its graph (a hook that captures features for a perceptual or
distillation loss, GAN code that keeps `self.fake_B` for the generator's backward, pix2pix's
`self.loss_G = ...; self.loss_G.backward()`) is recognised when the slot, or the value stored in
it, flows into a backward call anywhere in the file: the backward frees the graph's buffers, so
what stays alive is small and the finding has low confidence (hidden by default). Storing a
forward's input (`self.x = x`) is not reported unless the input is known to carry a graph.
Gradients stored by backward hooks and `Tensor.register_hook` hooks carry no graph (unless you
differentiate with `create_graph=True`) and are not reported. A hook whose model only runs under
`torch.no_grad()` in the file sees outputs without a graph: low confidence. So does a hook whose
store code outside it empties after reading it (`feats.clear()`, `feats.pop("fc")`, `feats = {}`
again inside a loop or a reset method): the graph is handed over, not parked. Creating the store
(`feats = {}` in the function that defines the closure hook, before registering it) is not
emptying it: such a closure hook is reported like one storing into a module-level dict. Assignments in
`__init__`, and in functions that do not run every step, are not reported. A recurrent state
fed back into its own next value (`self.hidden = rnn(x, self.hidden)`, also after a lazy start
such as `if self.memory is None: self.memory = torch.zeros_like(x)`, which leaves the previous
call's value in place on every later call) chains one graph per step: that growth is LL103's
finding, and this rule stays quiet about it.

## References
- PyTorch FAQ, "Don't hold onto tensors and variables you don't need" (a tensor assigned to a
  member variable is not freed until the object goes out of scope):
  https://pytorch.org/docs/stable/notes/faq.html
- `self.activity = y` in `forward` without `.detach()` reported as a memory leak:
  https://github.com/growingnet/gromo/issues/135
- A CAM helper whose forward hook keeps `self.target_output = output`:
  https://github.com/jacobgil/pytorch-grad-cam/issues/88
- Activations kept with their graph by CAM hooks (`detach=False`) holding GPU memory across
  iterations: https://github.com/jacobgil/pytorch-grad-cam/pull/575
- Runtime repro: `leaklint verify LL105` measures the leaky and the fixed loop body.
"""
    VALID = (
        """
import torch.nn as nn
class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, dim * 3)
        self.last_attention = None
    def forward(self, x):
        self.last_input = x
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        self.last_attention = attn.detach()
        self.attention_mean = attn.mean().item()
        return attn @ v
""",
        """
activation = {}
def get_activation(name):
    def hook(module, inputs, output):
        activation[name] = output.detach().cpu()
    return hook
model.layer4.register_forward_hook(get_activation("layer4"))
class GradCam:
    def __init__(self, layer):
        layer.register_forward_hook(self.save_activation)
        layer.register_full_backward_hook(self.save_gradient)
    def save_activation(self, module, inputs, output):
        self.activations = output.cpu().detach()
    def save_gradient(self, module, grad_input, grad_output):
        self.gradients = grad_output[0]
shapes = {}
model.fc.register_forward_hook(lambda m, i, o: shapes.update(fc=tuple(o.shape)))
""",
        """
import torch
features = {}
def save(module, inputs, output):
    features["fc"] = output
model.fc.register_forward_hook(save)
model.eval()
with torch.no_grad():
    for x, _ in loader:
        model(x)
""",
        """
import torch.nn as nn
class Pix2Pix:
    def __init__(self, netG, netD):
        self.netG = netG
        self.netD = netD
        self.criterionGAN = nn.BCEWithLogitsLoss()
    def forward(self):
        self.fake_B = self.netG(self.real_A)
    def backward_G(self):
        pred_fake = self.netD(self.fake_B)
        self.loss_G = self.criterionGAN(pred_fake, self.real_B)
        self.loss_G.backward()
""",
        """
import torch
class Trainer:
    def train_epoch(self, loader):
        for x, y in loader:
            with torch.no_grad():
                self.last_output = self.model(x)
            self.step_count = self.step_count + 1
""",
        """
import torch.nn.functional as F
class Distiller:
    def __init__(self, student):
        self.feats = {}
        student.layer3.register_forward_hook(self.keep)
    def keep(self, module, inputs, output):
        self.feats["layer3"] = output
    def train_step(self, x, target_feats, optimizer):
        self.student(x)
        loss = F.mse_loss(self.feats["layer3"], target_feats)
        loss.backward()
        optimizer.step()
""",
        # a state fed back into its own next value (after a lazy start): LL103's finding
        """
import torch
import torch.nn as nn
class Memory(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.memory = None
    def forward(self, x):
        if self.memory is None:
            self.memory = torch.zeros_like(x)
        self.memory = torch.tanh(self.fc(x) + self.memory)
        return self.memory
""",
        # the reader empties the closure's store after every forward pass (low confidence only)
        """
def extract(model, loader):
    feats = {}
    def hook(module, inputs, output):
        feats["fc"] = output
    model.fc.register_forward_hook(hook)
    for x, _ in loader:
        model(x)
        show(feats["fc"])
        feats = {}
""",
    )
    INVALID = (
        # a closure store made by the function that registers the hook: created, never emptied
        """
def attach(model):
    feats = {}
    def hook(module, inputs, output):
        feats["fc"] = output  # expect: LL105
    model.fc.register_forward_hook(hook)
    return feats
def attach_lambda(model):
    feats = {}
    model.fc.register_forward_hook(lambda m, i, o: feats.update(fc=o))  # expect: LL105
    return feats
""",
        """
import torch.nn as nn
class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, dim * 3)
    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        self.last_attention = attn  # expect: LL105
        return attn @ v
""",
        """
activation = {}
def get_activation(name):
    def hook(model, inputs, output):
        activation[name] = output  # expect: LL105
    return hook
model.layer4.register_forward_hook(get_activation("layer4"))
outputs = []
model.fc.register_forward_hook(lambda m, i, o: outputs.append(o))  # expect: LL105
class SaveOutput:
    def __init__(self):
        self.outputs = []
    def __call__(self, module, module_in, module_out):
        self.outputs.append(module_out)  # expect: LL105
model.layer1.register_forward_hook(SaveOutput())
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
""",
        """
import torch.nn.functional as F
def fit(model, loader, optimizer):
    model.train()
    snapshot = None
    def step(x, y):
        nonlocal snapshot
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        snapshot = model(x[:4])  # expect: LL105
    for x, y in loader:
        step(x, y)
""",
        """
import torch.nn.functional as F
last_loss = None
class Validator:
    def run(self, loader):
        global last_loss
        for x, y in loader:
            loss = F.cross_entropy(self.model(x), y)
            last_loss = loss  # expect: LL105
            self.stats["loss"] = loss  # expect: LL105
""",
    )

    @classmethod
    def may_report(cls, shape: SyntaxShape, min_confidence: Confidence) -> bool:
        """A hook's store, or a slot filled per step (in a loop over steps or a per-step function)
        with a value that, above low confidence, needs graph evidence."""
        if shape.uses(*HOOK_METHODS, *GLOBAL_HOOK_FUNCTIONS):
            return True
        slots = shape.iteration_loop or shape.per_step_state_store
        return slots and (min_confidence is Confidence.LOW or shape.graph_evidence)

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        from leaklint.rules.checks.ll105_graph_stored_on_object import check

        return check(facts)

    class Repro(Rule.Repro):
        """A forward hook that keeps the layer's output in a dict (graph attached), vs `output.detach()`."""

        def setup(self, ctx):
            import torch
            ctx.model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(ctx.device)
            ctx.x = torch.randn(256, 64, device=ctx.device)
            ctx.activation = {}
            ctx.detach = None
            def hook(module, inputs, output):
                ctx.activation["features"] = output.detach() if ctx.detach else output  # noqa: LL105 (the leaky variant)
            ctx.model[3].register_forward_hook(hook)

        def leaky(self, ctx):
            ctx.detach = False
            ctx.model(ctx.x).argmax(1)

        def fixed(self, ctx):
            ctx.detach = True
            ctx.model(ctx.x).argmax(1)
