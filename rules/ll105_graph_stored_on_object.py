"""LL105 graph-stored-on-object: one step's autograd graph parked in an attribute, a global, a
closure cell, or the store of a forward hook."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.calls import call_graph, function_named
from leaklint.analysis.stores import constant_key
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.graph_use import graph_use
from leaklint.analysis.hooks import HookFunction, HookKind, HookRegistration, graph_parameters, hook_registrations, resolve_hook
from leaklint.analysis.names import dotted_name, dotted_names_in
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.steps import per_step_functions
from leaklint.analysis.structure import FunctionInfo, GradMode, bound_names, names_bound_in
from leaklint.analysis.syntax import call_argument, declared_names, root_name
from leaklint.analysis.torch_api import GLOBAL_HOOK_FUNCTIONS, GRAPH_EVIDENCE, HOOK_METHODS, LOOPS_OR_FUNCTIONS, TORCH_CODE
from leaklint.analysis.values import Evidence, Kind, Value
from leaklint.analysis.walk import calls_in, not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names
from leaklint.rule import Measured, Rule, Violation


class GraphStoredOnObject(Rule):
    code = "LL105"
    name = "graph-stored-on-object"
    severity = Severity.PEAK
    summary = "A graph-attached tensor is kept in an attribute, a global or a hook's store from one step to the next."
    help = "store the tensor's .detach() (add .cpu() to move it off the device)"
    needs = TORCH_CODE & LOOPS_OR_FUNCTIONS
    autograd = True
    needs_above_low = GRAPH_EVIDENCE | Names(*HOOK_METHODS, *GLOBAL_HOOK_FUNCTIONS)
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(3, 0, 11), leaks=(11, 2))
    docs = """
## What it finds
A tensor that carries its autograd graph (a model output, a loss, or something computed from one,
with gradients enabled) stored where it outlives the step that made it:

- an attribute (`self.last_attention = attn`), a `global` or a `nonlocal` name, a constant-key
  slot of one (`self.stats["out"] = out`), or part of a tensor the object keeps
  (`self.actions[:] = policy(obs)` into `self.actions = torch.zeros(...)`: autograd records the
  copy, so the kept tensor carries the written value's graph), assigned in `forward`, `training_step`, `train_step`,
  `step`, a function that runs one training step (it calls backward outside its own loops), a
  function called once per iteration from a loop in the same file, or inside a training or
  evaluation loop;
- a graph handed to a method of another class of the file that keeps it in a slot (a logging
  mixin's `log_image`, a meter's `self.val = val`), reported at the call;
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
A store that runs only when a caller opts in (`if use_cache:` where the parameter defaults to
`False` or `None`: a KV cache; or `if self.flag:` where `__init__` sets `self.flag = False`) is low
confidence; the callers that pass `True` usually generate
under `torch.no_grad()`, which leaklint does not follow across calls. So is a setter method
(`save_attention_map(self, m): self.attention_map = m`) that every call in the file makes under
such a flag (`if is_cross_attention and self.save_attention:`).
A stored tensor that is meant to carry its graph (a hook that captures features for a perceptual or
distillation loss, GAN code that keeps `self.fake_B` for the generator's backward, pix2pix's
`self.loss_G = ...; self.loss_G.backward()`) is recognised when the slot itself flows into a
backward call anywhere in the file, and so is state the forward pass works with (`self.memory` set
by one method and read by another into a layer call or a tensor operation, a KV cache read back
into the attention): low confidence (hidden by default). A tensor stored after a backward
without `retain_graph=True` (or `create_graph=True`) already ran on it is not reported:
`loss.backward(); self.last_loss = loss` (also `scaler.scale(loss).backward()`, `(loss /
accum).backward()`, the terms of `(loss_a + loss_b).backward()`, or apex's `with amp.scale_loss(loss, opt) as scaled_loss:
scaled_loss.backward()`), or the result of a helper that ran the backward on what it returns on
every path (CycleGAN's `self.loss_D_A = self.backward_D_basic(...)`). The backward freed the
graph's saved tensors, so the slot keeps a 0-d loss and a few graph nodes, not a step's
activations. A value the backward only ran through is still reported: a model output
(`self.fake_B = fake_B` after `loss_G.backward()`: the slot keeps that activation and its graph's
nodes), and also a term of a loss computed on an earlier line (`self.loss_G_A = loss_G_A` after
`loss_G = loss_G_A + loss_cycle_A; loss_G.backward()`), although its graph's saved tensors are
freed as well: only the names the backward is called on are tracked (a known false positive). A
backward that runs only part of the graph does not count: `loss.backward(inputs=head_params)`,
`torch.autograd.grad(loss, params)` (the paths to other leaves keep their saved tensors), and
`out.backward(grad)` on a non-scalar output (the slot keeps that activation).
When the stored value is backpropagated only after the store, or
by whoever gets it back (a Lightning `training_step` that returns the loss it keeps), its whole
graph is alive when it is stored: medium confidence. Storing a
forward's input (`self.x = x`) is not reported unless the input is known to carry a graph (what the
file's calls pass counts).
Gradients stored by backward hooks and `Tensor.register_hook` hooks carry no graph (unless you
differentiate with `create_graph=True`) and are not reported. A hook whose model only runs under
`torch.no_grad()` in the file sees outputs without a graph: low confidence. So does a hook whose
store code outside it empties after reading it (`feats.clear()`, `feats.pop("fc")`, `feats = {}`
again inside a loop or a reset method): the graph is handed over, not parked. Creating the store
(`feats = {}` in the function that defines the closure hook, before registering it) is not
emptying it: such a closure hook is reported like one storing into a module-level dict, unless the
hook is installed for one call only (the function creates the store, runs the model, removes the
hooks with `handle.remove()`, and neither returns nor keeps the store). A store the hook appends to
is handed over when the reader takes the items out one by one (`.pop()`, the per-sample gradient
pattern); clearing it once an epoch still lets it grow in between. Reads like `self.a, self.b =
None, None` empty both slots. Assignments in
`__init__`, and in functions that do not run every step, are not reported. A recurrent state
fed back into its own next value (`self.hidden = rnn(x, self.hidden)`, also after a lazy start
such as `if self.memory is None: self.memory = torch.zeros_like(x)`, which leaves the previous
call's value in place on every later call) chains one graph per step: that growth is LL103's
finding, and this rule stays quiet about it. Truncated BPTT where the same step method first
rebinds the slot to a detached copy, on every path and before any forward runs
(`self.hidden = (h.detach(), c.detach())`, then `out, self.hidden = self.model(x, self.hidden)`),
drops the last step's graph before the next one is built: not reported. A method of another class that keeps what it is
given in a slot (a logging mixin's `self.log_image(key, img)` doing `self.images[key] = img`) is
reported at the call that hands the graph over, unless the same call also adds it up or appends it
(LL101's or LL102's growth).

On bench/realcode the true findings are recommender models (RecBole) that keep an output nothing
differentiates: a distillation teacher run with gradients every step, though only the `.data`
of its logits is read, and a score matrix kept on `self` into the next step. Most findings are
debatable: intended slots that keep one small tensor (a batch of probabilities, d2l's
`attention_weights` kept for plotting, CycleGAN-style `self.fake` read by the same step's losses)
from one step into the next, after the backward freed its saved tensors, or an LSTM aggregator's
unused state in a configuration no script selects. The false positives at first (KV caches filled
only when `use_cache=True`, BLIP's attention maps saved only under a flag no code turns on, losses
stored after the helper that returns them ran their backward, hooks installed for one call and
removed before it returns) are fixed. In the library code 2 debatable findings (peft's X-LoRA pre-hook
keeps one small scalings tensor until the next forward, on purpose; trl's GOLD trainer keeps the
last step's 0-d loss), and the truncated-BPTT false positive (the slot detached before each
forward) is fixed.

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
        # accelerate's backward(loss) frees the graph like loss.backward(): the kept loss holds
        # no activations
        """
import torch
from accelerate import Accelerator

class Trainer:
    def __init__(self, model, optimizer):
        self.accelerator = Accelerator()
        self.model, self.optimizer = self.accelerator.prepare(model, optimizer)

    def step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.accelerator.backward(loss)
        self.optimizer.step()
        self.last_loss = loss
""",
        # an attention map kept for Grad-CAM by a setter that forward calls only when a flag the
        # constructor turns off is on (and a cross-attention call): opt-in, shown with low confidence
        """
import torch
import torch.nn as nn
class CrossAttention(nn.Module):
    def __init__(self, dim, is_cross_attention=True):
        super().__init__()
        self.query, self.key = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.is_cross_attention = is_cross_attention
        self.save_attention = False
    def save_attention_map(self, attention_map):
        self.attention_map = attention_map
    def forward(self, x, context):
        probs = (self.query(x) @ self.key(context).transpose(-1, -2)).softmax(-1)
        if self.is_cross_attention and self.save_attention:
            self.save_attention_map(probs)
        return probs @ context
""",
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
        # a hook installed for one call: the function creates the store, runs the model, removes
        # the hooks, and neither keeps nor returns the store
        """
def summarize(module, inputs):
    entries = []
    def post_hook(mod, _inputs, outputs):
        entries.append((mod, outputs))
    hooks = [m.register_forward_hook(post_hook) for m in module.modules()]
    module(*inputs)
    for hook in hooks:
        hook.remove()
    print(len(entries))
""",
        # the reader takes each stored activation out again after the backward (per-sample gradients)
        """
class GradSampler:
    def __init__(self, model):
        for layer in model.children():
            layer.activations = []
            layer.register_forward_hook(self.capture)
    def capture(self, module, inputs, output):
        module.activations.append(inputs[0])
    def norms(self, model):
        return [layer.activations.pop().norm() for layer in model.children()]
""",
        # state the forward pass works with: set by one method, read by another into the computation
        """
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def init_states(self, memory):
        self.memory = memory
    def decode(self, x):
        return self.attention(x, self.memory)
    def forward(self, memory, inputs):
        self.init_states(self.encoder(memory))
        return torch.stack([self.decode(x) for x in inputs])
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
        """
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch import LightningModule
class LM(LightningModule):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(8, 8)
        self.hidden = None
    def training_step(self, batch, batch_idx):
        x, y = batch
        self.hidden = (self.hidden[0].detach(), self.hidden[1].detach())  # the last graph goes first
        out, self.hidden = self.rnn(x, self.hidden)
        return F.nll_loss(out, y)
""",
        # a loss kept after its backward ran (no retain_graph): the backward freed the graph's
        # saved tensors, so the slot keeps a 0-d loss and a few graph nodes, not a step's graph;
        # also through a gradient scaler, and handed to a method that keeps it
        """
import torch.nn.functional as F
last_loss = None
class LoggingMixin:
    def log_loss(self, key, value):
        self.logged[key] = value
class Trainer(LoggingMixin):
    def train_step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        self.last_loss = loss
        self.stats["loss"] = loss
    def fit(self, loader):
        global last_loss
        for x, y in loader:
            loss = F.mse_loss(self.model(x), y)
            self.scaler.scale(loss).backward()
            last_loss = loss
            self.log_loss("mse", loss)
""",
        # CycleGAN's discriminator helper runs the backward (through apex's scaled loss, or on
        # the loss itself) and returns the loss: the caller keeps a loss whose graph is freed
        """
import torch.nn as nn
from apex import amp
class CycleGAN:
    def __init__(self, netD_A, opt):
        self.netD_A, self.opt = netD_A, opt
        self.criterionGAN = nn.MSELoss()
    def backward_D_basic(self, netD, real, fake):
        loss_D = (self.criterionGAN(netD(real), 1.0) + self.criterionGAN(netD(fake.detach()), 0.0)) * 0.5
        if self.opt.amp:
            with amp.scale_loss(loss_D, self.optimizer_D) as scaled_loss:
                scaled_loss.backward()
        else:
            loss_D.backward()
        return loss_D
    def backward_D_A(self):
        self.loss_D_A = self.backward_D_basic(self.netD_A, self.real_B, self.fake_B)
    def optimize_parameters(self):
        self.optimizer_D.zero_grad()
        self.backward_D_A()
        self.optimizer_D.step()
""",
    )
    INVALID = (
        # a backward limited to the head's parameters runs only the head's part of the graph:
        # the backbone's saved activations stay alive in the kept loss; a backward on a
        # non-scalar output keeps the output itself
        """
import torch.nn.functional as F

class Probe:
    def __init__(self, backbone, head, opt):
        self.backbone, self.head, self.opt = backbone, head, opt

    def step(self, x, y):
        loss = F.cross_entropy(self.head(self.backbone(x)), y)
        loss.backward(inputs=list(self.head.parameters()))
        self.opt.step()
        self.last_loss = loss  # expect: LL105

    def probe(self, x, grad):
        out = self.backbone(x)
        out.backward(grad)
        self.last_out = out  # expect: LL105
""",
        # a policy's output copied into a buffer the object keeps: the copy carries the graph
        """
import torch
class ActionTerm:
    def __init__(self, policy, n_envs, n_joints):
        self.policy = policy
        self.actions = torch.zeros(n_envs, n_joints)
    def apply(self, obs):
        self.actions[:] = self.policy(obs)  # expect: LL105
        return self.actions
term = ActionTerm(torch.nn.Linear(16, 8), 64, 8)
rollout_loader = torch.utils.data.DataLoader(recorded_observations, batch_size=64)
for obs in rollout_loader:
    env_step(term.apply(obs))
""",
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
    def __init__(self, model):
        self.model = model
        self.model.eval()
        self.stats = {}
    def run(self, loader):
        global last_loss
        for x, y in loader:
            loss = F.cross_entropy(self.model(x), y)
            last_loss = loss  # expect: LL105
            self.stats["loss"] = loss  # expect: LL105
""",
        # kept for display after the backward: the backward frees the saved tensors, but the
        # slot keeps the generated images (an activation) and their graph's nodes into the next
        # step; the loss the backward ran on is a 0-d tensor with a freed graph (not reported)
        """
import torch.nn as nn
class CycleGAN:
    def __init__(self):
        self.netG_A = nn.Conv2d(3, 3, 3, padding=1)
        self.netD_B = nn.Conv2d(3, 1, 4)
    def backward_G(self):
        fake_B = self.netG_A(self.real_A)
        loss_G = nn.functional.mse_loss(self.netD_B(fake_B), self.target)
        loss_G.backward()
        self.fake_B = fake_B  # expect: LL105
        self.loss_G = loss_G
    def optimize_parameters(self):
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()
    def get_current_visuals(self):
        return {"fake_B": self.fake_B, "loss": float(self.loss_G)}
""",
        # a logging mixin's method keeps what it is given: reported at the call that hands it over
        """
import torch.nn as nn
class LoggingMixin:
    def __init__(self):
        self.image_logs = {}
    def log_image(self, key, value):
        self.image_logs[key] = value
class WorldModel(LoggingMixin):
    def __init__(self):
        super().__init__()
        self.encoder, self.decoder = nn.Linear(64, 8), nn.Linear(8, 64)
    def train_step(self, observations):
        recon = self.decoder(self.encoder(observations))
        loss = nn.functional.mse_loss(recon, observations)
        loss.backward()
        self.log_image("reconstruction", recon[:4])  # expect: LL105
""",
        """
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch import LightningModule
class LM(LightningModule):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(8, 8)
        self.hidden = None
    def training_step(self, batch, batch_idx):
        x, y = batch
        out, hidden = self.rnn(x, (self.hidden[0].detach(), self.hidden[1].detach()))
        self.hidden = None  # too late: the forward above ran while the last graph was alive
        self.hidden = hidden  # expect: LL105
        return F.nll_loss(out, y)
""",
        # a loss stored before its backward runs (the whole graph is alive then, and the slot
        # keeps it), or after a backward that keeps the graph (retain_graph=True)
        """
import torch.nn.functional as F
class Trainer:
    def train_step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        self.last_loss = loss  # expect: LL105
        loss.backward()
        self.optimizer.step()
    def gan_step(self, z):
        loss = F.softplus(-self.D(self.G(z))).mean()
        loss.backward(retain_graph=True)
        self.loss_G = loss  # expect: LL105
        self.optimizer.step()
""",
        # a helper that runs backward on its loss only on some paths, or keeps the graph for a
        # second-order backward (create_graph=True): what it returns still has its graph
        """
import torch.nn as nn
class Model:
    def __init__(self):
        self.criterion = nn.MSELoss()
    def compute(self, x, y, train):
        loss = self.criterion(self.net(x), y)
        if train:
            loss.backward()
        return loss
    def penalty(self, x, y):
        loss = self.criterion(self.net(x), y)
        loss.backward(create_graph=True)
        return loss
    def optimize_parameters(self):
        self.optimizer.zero_grad()
        self.loss = self.compute(self.x, self.y, True)  # expect: LL105
        self.loss_gp = self.penalty(self.x, self.y)  # expect: LL105
        self.optimizer.step()
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

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


# --- detection ------------------------------------------------------------------------------------
#: Calls whose result has no autograd history, whatever goes in (used where provenance is blind).
_DETACHING_METHODS = torch_api.DETACH_METHODS | torch_api.TO_PYTHON_METHODS | torch_api.NON_TENSOR_METHODS
_DETACHING_ATTRIBUTES = torch_api.DETACHED_ATTRIBUTES | torch_api.NON_TENSOR_ATTRIBUTES
_PYTHON_VALUE_BUILTINS = frozenset({"float", "int", "bool", "str", "len", "repr"})

#: Container methods that store an argument, and which positional argument they store.
_STORING_METHODS = {"append": 0, "appendleft": 0, "extend": 0, "add": 0, "put": 0, "insert": 1, "__setitem__": 1, "setdefault": 1, "update": 0}
_GROWING_METHODS = frozenset({"append", "appendleft", "extend", "add", "put", "insert"})


@dataclass(frozen=True, eq=False)
class _Store:
    node: cst.CSTNode
    statement: cst.CSTNode | None
    target: str
    stored: cst.BaseExpression
    grows: bool
    confidence: Confidence


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    for store, hook, kind in _hook_stores(facts):
        yield _hook_violation(facts, store, hook, kind)
    hook_nodes = {
        hook.node for reg in hook_registrations(facts) for hook in resolve_hook(reg.hook, reg.fact.function, facts)
    }
    for store, fact in _slot_stores(facts, hook_nodes):
        yield _slot_violation(facts, store, fact)
    yield from _through_methods(facts)


def _through_methods(facts: ModuleFacts) -> Iterator[Violation]:
    """``logger.log_image("recon", recon)`` where ``log_image`` does ``self.images[key] = value``:
    the object keeps the graph until the next call replaces it; reported at the call, where the
    graph enters the object (see ``facts.graphs_kept_by_methods``)."""
    for method_store, argument, confidence in facts.graphs_kept_by_methods("slot"):
        if any(other.expr is argument.expr and other.kind != "slot" for other in method_store.stored):
            continue  # the method also adds it up or appends it: LL101's or LL102's growth
        fact = method_store.statement
        assert fact is not None
        value = facts.value(argument.expr)
        if value.backpropagated:
            continue  # its graph's saved tensors are freed: the slot keeps a loss, not a graph
        confidence = min(confidence, _value_confidence(value), key=lambda c: c.rank)
        if _value_feeds_backward(fact, argument.expr, facts):
            confidence = min(confidence, Confidence.MEDIUM, key=lambda c: c.rank)
        message = (
            f"'{facts.describe(argument.expr)}' is kept with its autograd graph by '{method_store.receiver}' "
            f"({method_store.method.name}() stores it in {argument.attribute}); the last step's graph stays alive "
            "while the next step builds its own"
        )
        store = _Store(method_store.node, fact.line, argument.attribute, argument.expr, False, confidence)
        yield _store_violation(facts, store, message)


# ---- stores in per-step code -------------------------------------------------------------------
def _slot_stores(facts: ModuleFacts, hook_nodes: set[cst.CSTNode]) -> Iterator[tuple[_Store, StatementFact]]:
    declared: dict[FunctionInfo, set[str]] = {}
    for fact in facts.statements():
        function = fact.function
        if function.is_module_level or function.name == "__init__" or function.node in hook_nodes:
            continue
        if fact.grad is GradMode.DISABLED or not isinstance(fact.node, (cst.Assign, cst.AnnAssign)):
            continue
        if function.cls is not None and function.name == "forward" and graph_use(facts).fed_no_graph(function.cls):
            continue  # attention with no weights of its own, only ever run on plain tensors: no graph
        for target, expr, value in _assignments(fact, facts):
            if not value.is_graph or value.backpropagated or facts.kept_at_callers(fact, value):
                continue  # (backpropagated already: the slot keeps the tensor, not a step's graph)
            if _needs_declarations(target) and function not in declared:
                globals_, nonlocals = declared_names(function.node)  # type: ignore[arg-type]
                declared[function] = globals_ | nonlocals
            slot = _slot_name(target, declared.get(function, set())) or _tensor_attribute_written(target, facts)
            if slot is None or _feeds_itself(fact, slot, expr) or _detached_before_forward(facts, fact, slot):
                continue
            if function not in per_step_functions(facts) and not any(loop.is_iteration_loop for loop in fact.loops):
                continue
            confidence = _value_confidence(value)
            if _slot_feeds_backward(fact, slot, facts) or _on_request(facts, fact) or _working_state(fact, slot, facts):
                confidence = Confidence.LOW
            elif _value_feeds_backward(fact, expr, facts):
                # The backward frees the graph's saved tensors, but the slot keeps the tensor and
                # the graph's nodes into the next step, and nothing needs them there.
                confidence = min(confidence, Confidence.MEDIUM, key=lambda c: c.rank)
            yield _Store(fact.node, fact.line, slot, expr, False, confidence), fact


def _tensor_attribute_written(target: cst.BaseExpression, facts: ModuleFacts) -> str | None:
    """``self.actions`` for ``self.actions[:] = policy(obs)``: a write into part of a tensor the
    object keeps (``self.actions = torch.zeros(n, d)``). The copy is recorded by autograd, so the
    tensor itself now carries the written value's graph into the next step."""
    if not isinstance(target, cst.Subscript) or constant_key(target):
        return None
    owner = dotted_name(target.value)
    if owner is None or not owner.startswith("self."):
        return None
    return owner if facts.value(target.value).is_plain_tensor else None


def _on_request(facts: ModuleFacts, fact: StatementFact) -> bool:
    """The store runs only when a caller opts in (``if use_cache:`` with ``use_cache=False`` by
    default, a KV cache filled during generation): whether it keeps graphs depends on whether
    those callers record gradients, which leaklint does not follow."""
    place = facts.index.place_of(fact)
    if place is not None and place.opt_in_flag() is not None:
        return True
    # a setter method (`save_attention_map(self, m)`) that every call in the file makes under
    # such a flag (`if self.save_attention: self.save_attention_map(probs)`)
    function = fact.function
    if not function.is_method or function.may_be_called_by_base or function.name.startswith("__"):
        return False
    places = call_graph(facts).places_of(function)
    return bool(places) and all(site.opt_in_flag() is not None for site in places)


def _needs_declarations(target: cst.BaseExpression) -> bool:
    """A plain name (or a constant-key slot of one) is a slot only if declared global/nonlocal."""
    while isinstance(target, cst.Subscript):
        target = target.value
    return isinstance(target, cst.Name)


def _assignments(fact: StatementFact, facts: ModuleFacts) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression, Value]]:
    """(target, stored expression, value) for each simple target of an assignment statement."""
    node = fact.node
    if isinstance(node, cst.Assign):
        pairs = [(t.target, node.value) for t in node.targets]
    elif isinstance(node, cst.AnnAssign) and node.value is not None:
        pairs = [(node.target, node.value)]
    else:
        return
    for target, expr in pairs:
        yield from _unpack(target, expr, facts.value(expr))


def _unpack(target: cst.BaseExpression, expr: cst.BaseExpression, value: Value) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression, Value]]:
    if isinstance(target, (cst.Tuple, cst.List)):
        elements = target.elements
        literal = expr.elements if isinstance(expr, (cst.Tuple, cst.List)) and len(expr.elements) == len(elements) else None
        items = value.items if value.items is not None and len(value.items) == len(elements) else None
        for i, element in enumerate(elements):
            part_expr = literal[i].value if literal is not None else expr
            part = items[i] if items is not None else value
            yield from _unpack(element.value, part_expr, part)
        return
    yield target, expr, value


def _slot_name(target: cst.BaseExpression, declared: set[str]) -> str | None:
    """``self.x``, a declared global/nonlocal, or a constant-key slot of one (``self.stats["out"]``)."""
    if isinstance(target, cst.Subscript):
        if not constant_key(target):
            return None  # a key per step is a growing container: LL102's business
        base = _slot_name(target.value, declared)
        return f"{base}[{_key_text(target)}]" if base is not None else None
    name = dotted_name(target)
    if name is None:
        return None
    if name.startswith("self."):
        return name
    return name if "." not in name and name in declared else None


def _key_text(target: cst.Subscript) -> str:
    element = target.slice[0].slice
    return element.value.value if isinstance(element, cst.Index) and hasattr(element.value, "value") else "..."  # type: ignore[union-attr]


def _value_confidence(value: Value) -> Confidence:
    """Loss/backward evidence keeps its confidence; a model output or derived value is at most medium."""
    if value.evidence is Evidence.NAME:
        return Confidence.LOW
    if value.evidence in (Evidence.LOSS, Evidence.BACKWARD):
        return value.confidence
    return min(value.confidence, Confidence.MEDIUM, key=lambda c: c.rank)


def _slot_feeds_backward(fact: StatementFact, slot: str, facts: ModuleFacts) -> bool:
    """The stored graph is the step's working state: the slot itself flows into a backward call
    (in this function, or for ``self.x`` anywhere in the file: pix2pix's ``self.fake_B`` read by
    ``backward_G``)."""
    consumed = facts.summary(fact.function).backward_consumed
    target = slot.split("[", 1)[0]
    return target in consumed or (target.startswith("self.") and target in facts.index.backward_consumed)


def _working_state(fact: StatementFact, slot: str, facts: ModuleFacts) -> bool:
    """``self.memory`` set by one method and read by another into the model's computation (an
    operand of a layer call or a tensor operation that carries a graph): state the forward pass
    works with, which the next pass replaces, not a graph kept for display or logging."""
    cls = fact.function.cls
    if cls is None or not slot.startswith("self.") or "[" in slot:
        return False
    return slot in facts.derived(_computed_from_attributes).get(cls, frozenset())


def _computed_from_attributes(facts: ModuleFacts) -> dict[object, frozenset[str]]:
    """Per class: the ``self.x`` attributes its methods read into a graph-carrying computation
    (a call or arithmetic whose value carries a graph, taking ``self.x`` as an operand)."""
    found: dict[object, set[str]] = {}
    for info in facts.structure.functions.values():
        if info.cls is None:
            continue
        for statement in facts.index.statements_of(info):
            for node in walk(statement.node, into=not_into_scopes):
                if isinstance(node, cst.Call):
                    if _is_container_call(node, facts):
                        continue
                    operands = [node.func.value] if isinstance(node.func, cst.Attribute) else []
                    for arg in node.args:  # torch.cat((x, self.state), -1): the elements too
                        value = arg.value
                        operands += [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
                elif isinstance(node, cst.BinaryOperation):
                    operands = [node.left, node.right]
                else:
                    continue
                if not facts.value(node).is_graph:
                    continue
                for operand in operands:
                    name = dotted_name(operand)
                    if name is not None and name.startswith("self.") and facts.value(operand).is_graph:
                        found.setdefault(info.cls, set()).add(name)
    return {cls: frozenset(names) for cls, names in found.items()}


def _is_container_call(call: cst.Call, facts: ModuleFacts) -> bool:
    """``OrderedDict(fake=self.fake)``, ``dict(...)``, ``list(...)``: gathers values, computes nothing."""
    func = call.func
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
    if isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend", "update", "insert", "setdefault", "add", "put"):
        return True
    return name in ("dict", "list", "tuple", "OrderedDict", "set", "print", "str", "float", "int", "len")


def _value_feeds_backward(fact: StatementFact, expr: cst.BaseExpression, facts: ModuleFacts) -> bool:
    """The stored value's graph is backpropagated (here, or by whoever gets it back), but not
    through the slot: ``loss.backward(); self.last_loss = loss``."""
    if _returned_into_backward(fact, expr, facts):
        return True
    consumed = facts.summary(fact.function).backward_consumed
    for name in dotted_names_in(expr):
        known = fact.env.get(name)
        if known is not None and known.is_graph and name in consumed:
            return True
    return False


def _returned_into_backward(fact: StatementFact, expr: cst.BaseExpression, facts: ModuleFacts) -> bool:
    """The stored value is part of what the function returns, and whoever calls it runs backward
    on the result: Lightning on what ``training_step`` returns, or a caller in this file
    (``loss = self.compute_loss(...); loss.backward()``)."""
    function = fact.function
    returned = facts.summary(function).returned_names
    if not any(name in returned for name in dotted_names_in(expr)):
        return False
    if function.cls is not None and function.cls.is_lightning and function.name == "training_step":
        return True
    return function in facts.derived(_backpropagated_functions)


def _backpropagated_functions(facts: ModuleFacts) -> set[FunctionInfo]:
    """Functions whose result some caller in the file runs backward on (``loss = self.compute(x);
    loss.backward()``)."""
    found: set[FunctionInfo] = set()
    for _, fact, callee in call_graph(facts).resolved:
        node = fact.node
        if callee is None or not isinstance(node, cst.Assign) or not isinstance(node.value, (cst.Call, cst.Tuple, cst.Subscript)):
            continue
        names = {name for target in node.targets for name in bound_names(target.target)}
        if names & facts.summary(fact.function).backward_consumed:
            found.add(callee)
    return found


def _slot_violation(facts: ModuleFacts, store: _Store, fact: StatementFact) -> Violation:
    message = (
        f"'{facts.describe(store.stored)}' is stored in '{store.target}' with its autograd graph {_where(fact, facts)}; "
        "the last step's graph stays alive while the next step builds its own"
    )
    return _store_violation(facts, store, message)


def _store_violation(facts: ModuleFacts, store: _Store, message: str) -> Violation:
    receiver = facts.describe_receiver(store.stored)
    return Violation(
        node=store.node,
        message=message,
        confidence=store.confidence,
        help=f"store {receiver}.detach() (add .cpu() to move it off the device)" if receiver else None,
        statement=store.statement,
    )


def _where(fact: StatementFact, facts: ModuleFacts) -> str:
    if any(loop.is_iteration_loop for loop in fact.loops):
        return "inside a loop over iterations"
    reason = per_step_functions(facts).get(fact.function)
    return f"({reason})" if reason else "every step"


def _feeds_itself(fact: StatementFact, slot: str, expr: cst.BaseExpression) -> bool:
    """``self.hidden = rnn(x, self.hidden)``: the slot's old graph feeds its new value, so the
    graphs chain across steps. That is growth, and LL103's finding; not reported here unless the
    old value is known to be detached (``self.h = (h.detach(), c.detach())`` on the line before)."""
    target = slot.split("[", 1)[0]
    previous = fact.env.get(target)
    if previous is not None and previous.role is None and previous.kind in (Kind.DETACHED, Kind.NOT_TENSOR):
        return False
    if _mentions_undetached(expr, target):
        return True
    # through a local: state = torch.cat((self.state, x)); self.state = state[:, 1:]
    for name in dotted_names_in(expr):
        known = fact.env.get(name)
        if known is not None and known.is_graph and target in known.deps:
            return True
    return False


def _detached_before_forward(facts: ModuleFacts, fact: StatementFact, slot: str) -> bool:
    """Truncated BPTT: the same method first rebinds the slot to a detached copy
    (``self.hidden = (h.detach(), c.detach())``), on every path and before any forward runs,
    then stores the new graph in it. The last step's graph is dropped when the next step
    starts, before that step builds its own: they are never alive together."""
    target = slot.split("[", 1)[0]
    previous = fact.env.get(target)
    if previous is None or previous.role is not None or previous.kind not in (Kind.DETACHED, Kind.NOT_TENSOR):
        return False
    statements = facts.index.statements_of(fact.function)
    position = next((index for index, other in enumerate(statements) if other is fact), None)
    if position is None:
        return False
    rebinding = next(
        (index for index in range(position - 1, -1, -1) if target in names_bound_in(statements[index].node)), None
    )
    if rebinding is None:
        return False  # detached where it came from (another method): not this method's doing
    before = {id(other.node) for other in statements[:rebinding]}
    return not any(
        call.statement is not None and id(call.statement.node) in before
        for call in facts.model_calls()
    )


def _mentions_undetached(expr: cst.BaseExpression, target: str) -> bool:
    """``self.h = rnn(x, self.h)`` but not ``self.h = rnn(x, self.h.detach())``."""

    def into(node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            return node.func.attr.value not in _DETACHING_METHODS
        return not_into_scopes(node)

    return any(
        isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) == target
        for node in walk(expr, into=into)
    )


# ---- stores in forward hooks -------------------------------------------------------------------
def _hook_stores(facts: ModuleFacts) -> Iterator[tuple[_Store, HookFunction, HookKind]]:
    seen: set[cst.CSTNode] = set()
    forwards_without_grad = _forwards_only_without_grad(facts)
    for registration in hook_registrations(facts):
        if registration.kind not in (HookKind.FORWARD, HookKind.FORWARD_PRE):
            continue  # gradients handed to backward hooks carry no graph
        for hook in resolve_hook(registration.hook, registration.fact.function, facts):
            if hook.node in seen:
                continue
            seen.add(hook.node)
            graph_params = graph_parameters(hook, registration.kind)
            if not graph_params:
                continue
            if isinstance(hook.node, cst.Lambda):
                stores = _lambda_stores(hook.node, graph_params, registration)
            else:
                stores = _function_hook_stores(hook, graph_params, facts)
            for store in stores:
                confidence = store.confidence
                if forwards_without_grad or _container_feeds_backward(store.target, facts):
                    confidence = Confidence.LOW
                elif _scoped_to_one_call(store.target, hook, registration, facts):
                    continue
                elif _emptied_by_reader(store.target, hook, facts, store.grows):
                    confidence = Confidence.LOW
                yield _with_confidence(store, confidence), hook, registration.kind


def _scoped_to_one_call(target: str, hook: HookFunction, registration: HookRegistration, facts: ModuleFacts) -> bool:
    """A closure hook installed for one call of the function that defines it: that function
    creates the store afresh (``feats = []``), registers the hook, runs the model, removes the
    hooks (``handle.remove()``) and neither returns nor keeps the store. It dies with the call."""
    function = registration.fact.function
    if function.node is None or not isinstance(hook.node, cst.FunctionDef) or "." in target or "[" in target:
        return False
    if hook.info is None or hook.info.parent is not function:
        return False
    statements = facts.index.statements_of(function)
    created = any(
        isinstance(fact.node, cst.Assign)
        and _is_empty_container(fact.node.value)
        and any(target in bound_names(t.target) for t in fact.node.targets)
        and not fact.loops
        for fact in statements
    )
    if not created or _returns_itself(function.node, target):
        return False
    globals_, nonlocals = declared_names(function.node)
    if target in globals_ | nonlocals:
        return False
    kept = any(
        isinstance(fact.node, cst.Assign) and dotted_name(fact.node.value) == target
        for fact in statements
    )
    removed = any(
        isinstance(call.func, cst.Attribute) and call.func.attr.value == "remove" and not call.args
        for fact in statements
        for call in calls_in(fact.node)
    )
    return removed and not kept


def _returns_itself(function: cst.FunctionDef, name: str) -> bool:
    """``return feats`` / ``return out, feats``: the function hands the container itself out."""
    for node in walk(function.body, into=not_into_scopes):
        if isinstance(node, (cst.Return, cst.Yield)) and isinstance(node.value, cst.BaseExpression):
            value = node.value
            parts = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
            if isinstance(value, cst.Dict):
                parts = [e.value for e in value.elements]
            if any(dotted_name(part) == name for part in parts):
                return True
    return False


def _with_confidence(store: _Store, confidence: Confidence) -> _Store:
    return _Store(store.node, store.statement, store.target, store.stored, store.grows, confidence)


def _forwards_only_without_grad(facts: ModuleFacts) -> bool:
    """Every model forward the file runs is under no_grad: hooks see outputs without a graph."""
    calls = facts.model_calls()
    return bool(calls) and all(call.grad is GradMode.DISABLED for call in calls)


def _container_feeds_backward(target: str, facts: ModuleFacts) -> bool:
    """Features captured for a loss: the store is read into something that is backpropagated."""
    base = re.split(r"[\[.]", target.removeprefix("self."), maxsplit=1)[0]
    consumed = facts.index.backward_consumed
    if target.startswith("self."):
        return f"self.{base}" in consumed or any(name.endswith("." + base) for name in consumed)
    return base in consumed


def _emptied_by_reader(target: str, hook: HookFunction, facts: ModuleFacts, grows: bool = False) -> bool:
    """The hook hands its output over: code outside it (not ``__init__``, not module set-up)
    empties the store after reading it (``self._outputs[device] = OrderedDict()``, ``.clear()``,
    ``.pop(k)``, ``del d[k]``, ``self.input, self.output = None, None``), so no graph waits there
    for the next forward pass. A store the hook appends to (``grows``) is handed over only when
    the reader takes its items out one by one (``.pop()``): the per-sample gradient pattern, one
    activation in per forward and one out per step; emptied now and then (``.clear()`` once an
    epoch), it still grows in between."""
    base = target.split("[", 1)[0]
    leaf = base.rsplit(".", 1)[-1]

    def same(expr: cst.BaseExpression) -> bool:
        name = _container_text(expr) if isinstance(expr, (cst.Subscript, cst.Call)) else dotted_name(expr)
        if name is None:
            return False
        return name == base or ("." in base and "." in name and name.rsplit(".", 1)[-1] == leaf)

    declared: dict[FunctionInfo, set[str]] = {}
    for fact in facts.statements():
        function = fact.function
        if function.node is hook.node or function.name == "__init__" or (function.is_module_level and not fact.loops):
            continue
        node = fact.node
        if grows:
            pass
        elif isinstance(node, cst.Assign):
            for target, value in _assigned(node):
                if _is_empty_container(value) and same(target) and not _creates(fact, base, declared):
                    return True
        elif isinstance(node, cst.Del) and any(same(t.value) for t in _del_targets(node)):
            return True
        takes = ("pop", "popleft") if grows else ("clear", "pop", "popitem")
        for call in calls_in(node):  # feats.clear(), act = module.activations.pop()
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in takes and same(func.value):
                return True
    return False


def _assigned(node: cst.Assign) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(target, value) pairs, element by element for ``a, b = None, None``."""
    for target in node.targets:
        names, value = target.target, node.value
        if isinstance(names, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) and len(names.elements) == len(value.elements):
            for name, item in zip(names.elements, value.elements):
                yield name.value, item.value
        else:
            yield names, value


def _creates(fact: StatementFact, base: str, declared: dict[FunctionInfo, set[str]]) -> bool:
    """``feats = {}`` binding a plain local for the first time (outside any loop, not declared
    ``global``/``nonlocal``): the function that sets up a closure hook creating its store, not a
    reader emptying it after use."""
    if "." in base or fact.loops or base in fact.env:
        return False
    function = fact.function
    if function.node is None:
        return False
    if function not in declared:
        globals_, nonlocals = declared_names(function.node)
        declared[function] = globals_ | nonlocals
    return base not in declared[function]


def _del_targets(node: cst.Del) -> list[cst.Element]:
    target = node.target
    return list(target.elements) if isinstance(target, cst.Tuple) else [cst.Element(target)]  # type: ignore[list-item]


def _is_empty_container(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Dict, cst.List, cst.Tuple)) and not expr.elements:
        return True
    if isinstance(expr, cst.Name) and expr.value == "None":
        return True
    if isinstance(expr, cst.Call) and not [a for a in expr.args if a.keyword is None][1:]:
        name = (dotted_name(expr.func) or "").rsplit(".", 1)[-1]
        return name in ("dict", "list", "OrderedDict", "defaultdict", "deque") and (name == "defaultdict" or not expr.args)
    return False


def _function_hook_stores(hook: HookFunction, graph_params: dict[str, Confidence], facts: ModuleFacts) -> Iterator[_Store]:
    info = hook.info
    assert info is not None and isinstance(hook.node, cst.FunctionDef)
    globals_, nonlocals = declared_names(hook.node)
    outer_names = globals_ | nonlocals
    assigned = {name for name in names_bound_in(hook.node.body) if "." not in name} - outer_names  # its locals
    params = set(info.params)
    tainted = dict(graph_params)
    for fact in facts.index.statements_of(info):
        if fact.grad is GradMode.DISABLED:
            continue
        node = fact.node
        if isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None:
            confidence = _taint(node.value, tainted, facts, info)
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for target in targets:
                slot = _outer_target(target, assigned, params, outer_names)
                if slot is not None:
                    if confidence is not None:
                        yield _Store(node, fact.line, slot, node.value, False, confidence)
                    continue
                for name in bound_names(target):
                    if confidence is not None:
                        tainted[name] = confidence
                    else:
                        tainted.pop(name, None)
        elif isinstance(node, cst.AugAssign):
            confidence = _taint(node.value, tainted, facts, info)
            slot = _outer_target(node.target, assigned, params, outer_names)
            if slot is not None and confidence is not None:
                yield _Store(node, fact.line, slot, node.value, True, confidence)
        elif isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
            store = _method_store(node.value, assigned, params, lambda e: _taint(e, tainted, facts, info))
            if store is not None:
                target, stored, grows, confidence = store
                yield _Store(node, fact.line, target, stored, grows, confidence)


def _lambda_stores(node: cst.Lambda, graph_params: dict[str, Confidence], registration: HookRegistration) -> Iterator[_Store]:
    params = {p.name.value for p in (*node.params.posonly_params, *node.params.params)}

    def taint(expr: cst.BaseExpression) -> Confidence | None:
        if _syntactically_detached(expr):
            return None
        hits = [graph_params[n] for n in dotted_names_in(expr) if n in graph_params]
        return max(hits, key=lambda c: c.rank) if hits else None

    for call in walk(node.body, into=not_into_scopes):
        if isinstance(call, cst.Call):
            store = _method_store(call, set(), params, taint)
            if store is not None:
                target, stored, grows, confidence = store
                yield _Store(call, registration.fact.line, target, stored, grows, confidence)


def _method_store(
    call: cst.Call, assigned: set[str], params: set[str], taint: Callable[[cst.BaseExpression], Confidence | None]
) -> tuple[str, cst.BaseExpression, bool, Confidence] | None:
    """``features.append(o)``, ``self.outs.__setitem__(k, o)``, ``d.update({k: o})``,
    ``setattr(obj, "x", o)`` into a container that lives outside the hook."""
    func = call.func
    if isinstance(func, cst.Name) and func.value == "setattr":
        owner, stored = call_argument(call, 0), call_argument(call, 2)
        if owner is None or stored is None or not _lives_outside(owner, assigned, params):
            return None
        confidence = taint(stored)
        return (dotted_name(owner) or "an object", stored, False, confidence) if confidence else None
    if not isinstance(func, cst.Attribute) or func.attr.value not in _STORING_METHODS:
        return None
    if not _lives_outside(func.value, assigned, params):
        return None
    method = func.attr.value
    stored = call_argument(call, _STORING_METHODS[method])
    candidates = [stored] if stored is not None else []
    if method == "update":
        candidates = [a.value for a in call.args]
        if isinstance(stored, cst.Dict):
            candidates = [e.value for e in stored.elements if isinstance(e, cst.DictElement)]
    for candidate in candidates:
        confidence = taint(candidate)
        if confidence is not None:
            return (_container_text(func.value), candidate, method in _GROWING_METHODS, confidence)
    return None


def _lives_outside(container: cst.BaseExpression, assigned: set[str], params: set[str]) -> bool:
    """A container the hook did not create: a captured or global name, or an attribute of a live
    object (``self.outs``, ``module.cache``). A parameter itself is the hook's own argument."""
    root = root_name(container)
    if root is None or root in assigned:
        return False
    return not (isinstance(container, cst.Name) and root in params)


def _container_text(container: cst.BaseExpression) -> str:
    while isinstance(container, cst.Subscript):
        container = container.value
    if isinstance(container, cst.Call) and isinstance(container.func, cst.Attribute):
        container = container.func.value
    return dotted_name(container) or "a container"


def _outer_target(target: cst.BaseExpression, assigned: set[str], params: set[str], outer_names: set[str]) -> str | None:
    """Where an assignment in a hook stores into something that outlives the call: an attribute
    (of ``self``, of the module argument, of a captured object), a declared global/nonlocal, or a
    subscript of a container the hook did not create."""
    if isinstance(target, cst.Name):
        return target.value if target.value in outer_names else None
    base = target.value if isinstance(target, cst.Subscript) else target
    if not isinstance(target, (cst.Attribute, cst.Subscript)) or not _lives_outside(base, assigned, params):
        return None
    return _container_text(target) if isinstance(target, cst.Subscript) else dotted_name(target)


def _syntactically_detached(expr: cst.BaseExpression) -> bool:
    """``o.detach().cpu()``, ``o[0].item()``, ``o.data``, ``float(o)``, ``tuple(o.shape)``: no history
    left, whatever ``o`` is."""
    node: cst.BaseExpression = expr
    while True:
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute):
                if func.attr.value in _DETACHING_METHODS:
                    return True
                node = func.value
                continue
            if isinstance(func, cst.Name) and func.value in ("tuple", "list") and len(node.args) == 1:
                node = node.args[0].value  # tuple(o.shape): as detached as what it copies
                continue
            return isinstance(func, cst.Name) and func.value in _PYTHON_VALUE_BUILTINS
        if isinstance(node, cst.Attribute):
            if node.attr.value in _DETACHING_ATTRIBUTES:
                return True
            node = node.value
            continue
        if isinstance(node, cst.Subscript):
            node = node.value
            continue
        return False


def _taint(expr: cst.BaseExpression, tainted: dict[str, Confidence], facts: ModuleFacts, scope: FunctionInfo) -> Confidence | None:
    """How sure we are that ``expr`` carries a hook argument's graph (None: it does not).

    The provenance pass values hook bodies without knowing their parameters are tensors, so its
    answer only counts when it proves the opposite (``o.detach()`` is detached whatever ``o`` is).
    A function leaklint cannot see (``stat_fn(module, input, output)``) may return anything: low.
    """
    if _syntactically_detached(expr):
        return None
    value = facts.value(expr)
    if value.role is None and value.kind in (Kind.DETACHED, Kind.NOT_TENSOR):
        return None
    hits = [tainted[name] for name in dotted_names_in(expr) if name in tainted]
    if not hits:
        return None
    best = max(hits, key=lambda c: c.rank)
    if isinstance(expr, cst.Call) and _opaque_callee(expr, scope, facts):
        return Confidence.LOW
    return best


def _opaque_callee(call: cst.Call, scope: FunctionInfo, facts: ModuleFacts) -> bool:
    """A call of a function that is neither torch's, a builtin, a tensor method, nor one of this
    file whose result is known."""
    func = call.func
    if isinstance(func, cst.Attribute):
        return False  # a method of the tensor (o.mean()) or of torch (torch.sigmoid)
    if not isinstance(func, cst.Name):
        return True
    qualified = facts.imports.qualify(func.value)
    if qualified is not None:
        return not qualified.startswith("torch.")
    if func.value in ("tuple", "list", "dict", "sorted", "reversed", "max", "min", "sum", "abs"):
        return False
    local = function_named(func.value, scope, facts)
    return local is None


def _hook_violation(facts: ModuleFacts, store: _Store, hook: HookFunction, kind: HookKind) -> Violation:
    name = hook.node.name.value if isinstance(hook.node, cst.FunctionDef) else "lambda"
    what = facts.describe(store.stored)
    if store.grows:
        message = (
            f"the {kind.value} '{name}' adds '{what}' to '{store.target}' with its autograd graph; "
            "every forward pass adds one more graph that stays alive, so memory grows"
        )
    else:
        message = (
            f"the {kind.value} '{name}' stores '{what}' in '{store.target}' with its autograd graph; "
            "the last forward pass's graph stays alive until the hook runs again"
        )
    return _store_violation(facts, store, message)
