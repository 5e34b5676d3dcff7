"""LL102 tensor-collection: a graph-attached tensor kept in a container that outlives the step."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from leaklint.analysis.accumulate import grown_tensor
from leaklint.analysis.calls import call_graph
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.containers import container_name, is_bounded_queue
from leaklint.analysis.arguments import parameter_for
from leaklint.analysis.provenance import MethodStore, StatementFact, StoredArgument
from leaklint.analysis.steps import per_step_functions
from leaklint.analysis.stores import Store, constant_key, overwrites, stores
from leaklint.analysis.structure import FunctionInfo, iterates_data, walks_records_of_parameter
from leaklint.analysis.torch_api import GRAPH_EVIDENCE, LOOPS_OR_FUNCTIONS, TORCH_CODE
from leaklint.analysis.values import Role, strongest_graph
from leaklint.findings import Confidence, Severity
from leaklint.fixes.spec import MAPPING, container_usage, detach_each_fix, detach_fix
from leaklint.rule import Measured, Rule, Violation


class TensorCollection(Rule):
    code = "LL102"
    name = "tensor-collection"
    severity = Severity.LEAK
    fixable = True
    summary = "A tensor that carries its autograd graph is stored in a container that outlives the iteration."
    help = "store the tensor's .detach() (add .cpu() to free device memory, or use .item() for a scalar)"
    needs = TORCH_CODE & LOOPS_OR_FUNCTIONS
    autograd = True
    needs_above_low = GRAPH_EVIDENCE
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(8, 0, 1), leaks=(42, 2))
    docs = """
## What it finds
A graph-attached tensor (a loss, a model output, or something computed from one outside
`torch.no_grad()`) stored with `.append`, `.extend`, `.insert`, `.add`, `lst += [t]`, `d[k] = t` or
`d.setdefault(k, []).append(t)` into a container that lives longer than one iteration: a list
created before the loop, an attribute of `self`, or a module-level name. Tuples, lists and dicts
that hold such a tensor count too, as does a tensor grown by concatenation
(`preds = torch.cat([preds, out])`) and a comprehension over a data loader
(`outputs = [model(x) for x, _ in loader]`). `.cpu()` and `.to(...)` do not help: the copy is still part of
the graph. A store in `__init__` counts only inside a loop over steps: `__init__` runs once per object,
so a graph kept there does not pile up call after call.

Chunks a function gathers and returns (`return torch.cat(chunks)`) are kept for
its caller only when some caller may differentiate them: when the file shows every caller and,
followed through its helpers, none does (retrieval scores, metrics), the chunks' graphs are kept
for nothing and reported. Values are followed through the file's own code: what a helper or method is passed by its callers
(`store_metrics(metrics)` called with a dict of losses), what a local function or method returns,
the keys of a dict built with literal keys (`{"loss": loss.detach(), "n": x.size(0)}` carries no
graph), a local list that graphs are appended to (it holds them as the literal `[cell(x, h)]`
would, so a helper's `return torch.stack(states)` carries them),
objects built by classes of the file and handed around (constructors, `defaultdict(Cls)`),
and a function handed to a call in a training loop (an L-BFGS `closure` the optimizer calls) runs
every step. A store made by a method of another class that keeps what it is given
(`collector.add("loss", loss)` where `add` appends to `self.statistics[key]`, a replay buffer's
`insert`, an episode batch's `update`) is reported at the call that hands the graph over; a helper
of the calling class (`self.store_metrics(metrics)`), or a method that tests for tensors itself
(`if isinstance(v, torch.Tensor): v = v.clone()`), is reported where it stores. So is an append
of a method that the file calls from one place only (an early stopper's `update_values`, a
logger's `log_stat`): that call and the append are one fix apart, and the append is the line that
keeps the graph; the message names the call. A write by position into a list the class built
(`self.outputs[t] = out` into `[None] * steps`, or `self.slots, self.cursor = [], 0` of a ring
buffer) keeps one entry per position, like an append. An object whose other attributes a
backward reads (`loss` computed from `storage.rewards`) does not make the graphs a method keeps
in an attribute that nothing in the file reads (`storage.hidden`) consumed.

## Why it matters
Every stored tensor keeps its whole autograd graph alive, and with it the activations saved for
the backward pass: collecting outputs for a metric at the end of the epoch keeps one forward pass
per batch in memory. Memory grows with every batch until the epoch ends (or forever, if the list is
never cleared). `self.outputs.append(out)` in a `training_step` or `forward` is the same leak across
calls.

## Example
```python
predictions = []
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    predictions.append(out.cpu())
```

## Use instead
```python
predictions = []
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    predictions.append(out.detach().cpu())
```

## Fix safety
`.append(out)` becomes `.append(out.detach())`, and the same for the other stores
(`d[k] = out.detach()`, `lst += [out.detach()]`). A store made by a method of another object is
fixed at the call that hands the graph over (`logger.log_stat("loss", loss.detach(), step)`), also
when the finding is shown at the method's own append (a method the file calls from one place). As for LL101, **safe** when leaklint knows the
value is a tensor (a name holding a loss or something `backward()` is called on, a torch loss's
result, arithmetic on one) since detaching keeps its value, dtype and device; **unsafe** when it
may be something else: a model output (a tuple or a `ModelOutput` without `.detach()`), the result
of a callable that is a loss only by its name, or a name the file indexes or iterates over. Every
graph-carrying element of a stored literal is detached (`.extend([loss.detach(), loss.detach() * 2])`),
and each branch of a conditional expression (`.append(loss.detach() if ok else None)`); a value
that is itself nested in a literal or a comprehension (`[[a, b]]`, `[model(x) for x in xs]`) gets
no fix: which element to detach is the user's call. A value the file uses as a mapping
(`loss_dict = criterion(out, y)` with `loss_dict["ce"]` or `loss_dict.items()`, as in DETR) is
still reported — a dict of graph tensors keeps every graph — but its fix is display-only:
`{k: v.detach() for k, v in loss_dict.items()}`, since a dict has no `.detach()` and its values
may not all be tensors. Adding `.cpu()` to free device memory is left to you.

## Known false positives
An object of a class the file or another module of the linted project defines (a history, a
buffer) is judged by what its method does: `history.add(loss)` is reported when `add` appends its
argument, and not because a set's `add` would keep it. Linted alone, a script that imports the class
cannot see its methods; `.add`, `.append`, `.extend`, `.insert` and `.put` on such an object are then
read as a container's. Stores that run only when a caller opts in (`if use_cache:` where the parameter defaults to `False`
or `None`, as a KV cache filled during generation, or `if self.scalings_logging:` where the class's
`__init__` sets the attribute to `False` or `None` until a method turns it on) are low confidence: whether they keep graphs
depends on whether those callers record gradients, which leaklint does not follow. A list kept on
`self` whose graphs another method of the class backpropagates through (REINFORCE's
`saved_log_probs`, summed and `.backward()`-ed at the end of the episode) is kept on purpose and
not reported.
An attribute that only code outside the file reads (a storage object handed to another module's
update that backpropagates through it) looks unread here: its graphs are taken as kept for nothing.
Collecting losses on purpose and calling `.backward()` on their sum or stack in the same function
is recognised and not reported, as is a store under a constant key (`stats["last"] = loss` keeps
one graph, not one per step), as is a `forward` that gathers per-layer features in a loop and
returns them. Lightning's `validation_step`/`test_step`/`predict_step` run without gradients and are
not reported. A container passed in by the caller is only reported when the store happens in a loop
or in a function that runs every step. A bounded queue (`deque(maxlen=N)`) keeps the last N items
and is not reported, unless its bound is a literal over 1000 (`deque(maxlen=200_000)` fills over a
whole run: no window of recent steps). An indexed write into a tensor (a preallocated or registered buffer:
`self.memory[idx] = m` after `self.register_buffer("memory", torch.zeros(n, d))`) fills a slot of a
fixed-size tensor and is not a container store (`leaklint.analysis.stores.overwrites`, shared with
LL202). A `torch.nn` module without parameters built and called on the spot
(`nn.CosineSimilarity(dim=-1)(q, k)`) records a graph only through a graph-attached input, like a
frozen model. A helper that every call in the file drives down its `torch.no_grad()` branch
(`requires_grad=False`) is followed down that branch only. A REINFORCE-style list whose items
another method joins (`probs.extend(self.saved_log_probs[k])`) and backpropagates is kept on
purpose. Outputs of a model run once per input (frames, drawn samples) gathered in a list that
nothing differentiates afterwards (`leaklint.analysis.graph_use` follows the list into the file's
functions and back to their callers, and follows a value inside dicts and tuples by key and
position) are reported once. When the forward that records them runs in a helper the loop calls
per input (`flow.sample()`, a per-frame `extract(model, path)`), the keep is where memory grows
(the helper alone frees its graph every call): it is reported at the default confidence, its
message naming the forward, and LL201 leaves that forward to this finding. When the forward runs
in the same function as the keep, or a loop of its own carries its output (a sampler's chain),
LL201 (or LL103) reports the forward, whose `no_grad` frees the kept graphs too, and the keep is
shown with low confidence. When the graphs may still be differentiated, the keep is a guess (low
confidence.

On bench/realcode the findings at the default confidence in the scripts and notebooks are true:
GAN notebooks that append the generator's output on fixed latents every epoch with its graph, a
VAE tutorial that logs the graph-attached loss of every step, and a validation metric whose
`update` keeps each batch's predictions with their graph. The false positives at first (KV caches
filled only under `use_cache=True` inside `no_grad`, REINFORCE lists backpropagated at the end of
the episode, d2l's `Accumulator` that keeps `float(b)`, samples drawn with `sample()`, a no_grad
helper, `uint8` images from a traced generator, an optimizer wrapper built by a nested class) are
fixed. In the library code
(`bench/corpus.sh`) 2 findings, both true (torch_geometric's GLEM keeps every batch's logits with
their graphs for an epoch); the three false ones of the first triage (a parameterless
`CosineSimilarity` taken for a model, an indexed write into a registered buffer) and an opt-in
logging flag set in `__init__` (now low confidence) are fixed.

## References
- PyTorch FAQ, "Don't accumulate history across your training loop":
  https://pytorch.org/docs/stable/notes/faq.html
- Appending model outputs in a loop grows memory until it runs out (256 GB):
  https://github.com/allenai/longformer/issues/36
- Runtime repro: `leaklint verify LL102` measures the leaky and the fixed loop body.
"""
    VALID = (
        # entropies kept for the episode next to the log-probabilities its loss backpropagates:
        # the policy's forwards are kept for that backward anyway (low confidence: the entropy
        # tail of each step is extra)
        """
import torch

class Policy(torch.nn.Module):
    def __init__(self, n_obs, n_actions):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(n_obs, 128), torch.nn.ReLU(), torch.nn.Linear(128, n_actions))

    def forward(self, obs):
        return torch.distributions.Categorical(logits=self.body(obs))


def train(env, device, episodes=1000):
    policy = Policy(8, 4).to(device)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    history = []
    for episode in range(episodes):
        obs, done = env.reset(), False
        log_probs, entropies, rewards = [], [], []
        while not done:
            dist = policy(torch.as_tensor(obs, device=device))
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            entropies.append(dist.entropy())
            obs, reward, done, _ = env.step(action.item())
            rewards.append(reward)
        loss = -(torch.stack(log_probs) * torch.tensor(rewards, device=device)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(torch.stack(entropies).mean().item())
    return history
""",
        # A TensorFlow file that imports nothing of torch: a TF model's outputs kept in a list
        # carry no autograd graph (whether they pin GPU memory is another question)
        """
import numpy as np
import tensorflow as tf
from transformers import TFAutoModelForSequenceClassification


class PoolScorer:
    def __init__(self, name):
        self.model = TFAutoModelForSequenceClassification.from_pretrained(name)

    def score(self, batches):
        outputs = []
        for batch in batches:
            outputs.append(self.model(batch, training=False))
        logits = tf.concat([o.logits for o in outputs], axis=0)
        return np.asarray(tf.nn.softmax(logits, axis=-1))
""",
        # a history object of the file whose record() appends the loss detached, inside a tuple
        """
import torch
import torch.nn.functional as F
class History:
    def __init__(self):
        self.entries = []
    def record(self, loss, extras):
        self.entries.append((loss.detach(), extras))
history = History()
for x, y in loader:
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    history.record(loss, {"n": len(x)})
""",
        # draws of a distribution the decoder returns: sample() runs under no_grad
        """
import torch
import torch.distributions as td

class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(32, 784)
    def forward(self, z):
        return td.Independent(td.Bernoulli(logits=self.net(z)), 1)

def sample_images(decoder, n=16, steps=100):
    samples = []
    for _ in range(steps):
        z = torch.randn(n, 32)
        px_z = decoder(z)
        samples.append(px_z.sample())
    return samples

images = sample_images(Decoder())
""",
        # a method of a model of the file, called only from a @torch.no_grad() method of another
        # object (every `x.generate(...)` of the file is tied to a class of the file): the
        # per-call list is built without graphs
        """
import torch
import torch.nn as nn
class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(1000, 64)
        self.rnn = nn.GRU(64, 64, batch_first=True)
        self.head = nn.Linear(64, 1000)
    def generate(self, input_ids, max_new_tokens):
        out, h = self.rnn(self.embed(input_ids))
        scores, tokens = [], [input_ids]
        for _ in range(max_new_tokens):
            logits = self.head(out[:, -1])
            scores.append(logits)
            token = torch.multinomial(logits.softmax(-1), 1)
            tokens.append(token)
            out, h = self.rnn(self.embed(token), h)
        return {"sequences": torch.cat(tokens, 1), "scores": scores}
class Backend:
    def __init__(self):
        self.model = TinyLM().eval()
    @torch.no_grad()
    def generate(self, prompt, max_new_tokens=16):
        input_ids = torch.tensor([[ord(c) % 1000 for c in prompt]])
        return self.model.generate(input_ids, max_new_tokens=max_new_tokens)["sequences"]
def ask(backend, task):
    return backend.generate(f"Task: {task}")
backend = Backend()
for i in range(100):
    ask(backend, f"ticket {i}")
""",
        """
import torch
from torch import nn

class Probe(nn.Module):
    def __init__(self, example):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.example_outputs.append(self.fc(example))  # once per object, not per step
""",
        """
preds = []
for x, y in loader:
    out = model(x)
    preds.append(out.detach().cpu())
""",
        """
import torch
with torch.no_grad():
    logits = [model(x) for x, _ in val_loader]
heads = [head(features) for head in model.heads]
""",
        """
import torch
preds = []
with torch.no_grad():
    for x, y in loader:
        preds.append(model(x))
""",
        """
import torch
def step(model, batches, optimizer):
    losses = []
    for x, y in batches:
        losses.append(criterion(model(x), y))
    torch.stack(losses).sum().backward()
    optimizer.step()
""",
        """
import torch.nn as nn
class Pyramid(nn.Module):
    def forward(self, x):
        features = []
        for layer in self.layers:
            x = layer(x)
            features.append(x)
        return features
""",
        """
import torch
def run(model, train_loader, eval_loader, optimizer):
    for batch in train_loader:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
    model.eval()
    losses = []
    for batch in eval_loader:
        with torch.no_grad():
            outputs = model(**batch)
        loss = outputs.loss
        losses.append(loss)
    return torch.stack(losses).mean().item()
""",
        """
import torch.nn as nn
class Policy(nn.Module):
    def forward(self, x):
        return x
policy = Policy()
def step(x):
    out = policy(x)
    return out.sum().item(), out
def collect(loader):
    history = []
    for x in loader:
        value, out = step(x)
        history.append(value)
    return history
def episode(env):
    log_probs = []
    done = False
    while not done:
        log_probs.append(policy(env.obs).log_softmax(-1)[0])
        done = env.done
    return log_probs
""",
        """
latest = {}
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    latest["loss"] = loss
""",
        """
history = {}
for epoch, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    loss.backward()
    history[epoch] = loss.item()
""",
        # the keys of a dict are followed: only 'loss' carried the graph, and it is detached
        """
import torch
import torch.nn as nn
import torch.nn.functional as F
class DepthModel(nn.Module):
    def forward(self, batch):
        depth = self.net(batch)
        loss = F.l1_loss(depth, batch)
        return {"loss": loss, "metrics": {"l1": loss.detach()}}
class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
    def step(self, x):
        loss = self.model(x)
        return {"loss": loss, "n": x.size(0)}
    def train(self, loader):
        outputs, logs = [], []
        for batch in loader:
            output = self.model(batch)
            output["loss"].backward()
            self.optimizer.step()
            output["loss"] = output["loss"].detach()
            outputs.append(output)
            log = self.step(batch)
            logs.append({"loss": log["loss"].detach(), "n": log["n"]})
        return outputs, logs
model = DepthModel()
Trainer(model, torch.optim.Adam(model.parameters())).train(loader)
""",
        # a bounded queue keeps the last few values; a helper that detaches tensors first
        """
from collections import deque
import torch
import torch.nn.functional as F
class Window:
    def __init__(self):
        self.values = deque(maxlen=20)
    def update(self, value):
        self.values.append(value)
class Reporter:
    def __init__(self):
        self.observations = {}
    def report(self, values):
        for name, value in values.items():
            if isinstance(value, torch.Tensor):
                value = value.detach()
            self.observations.setdefault(name, []).append(value)
window, reporter = Window(), Reporter()
for x, y in loader:
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    window.update(loss)
    reporter.report({"loss": loss})
""",
        # REINFORCE: log-probs gathered per observer, joined, backpropagated and reset per episode
        """
import torch
class Agent:
    def __init__(self, policy):
        self.policy = policy
        self.saved_log_probs = {}
    def select_action(self, ob_id, state):
        m = torch.distributions.Categorical(self.policy(state))
        action = m.sample()
        self.saved_log_probs[ob_id].append(m.log_prob(action))
        return action.item()
    def finish_episode(self):
        probs = []
        for ob_id in self.saved_log_probs:
            probs.extend(self.saved_log_probs[ob_id])
            self.saved_log_probs[ob_id] = []
        loss = torch.cat([-p for p in probs]).sum()
        loss.backward()
""",
        # a model run per input in the function that gathers its outputs, for a caller that never
        # backpropagates them: the forward, in view of the list, is LL201's finding (its no_grad
        # frees the kept graphs too); low confidence here
        """
import torch.nn as nn
class Detector(nn.Module):
    def forward(self, image):
        return self.backbone(image)
def process_video(model, paths):
    features = []
    for path in paths:
        features.append(model(load(path)))
    return features
if __name__ == "__main__":
    model = Detector()
    model.eval()
    feats = process_video(model, list_frames())
    save(feats)
""",
        # a helper called with requires_grad=False from every call runs its no_grad branch
        """
import torch
def embed(encoder, prompt, requires_grad=False):
    if requires_grad:
        return encoder(prompt)
    with torch.no_grad():
        return encoder(prompt)
cached = [embed(text_encoder, p, requires_grad=False) for p in dataloader_prompts]
""",
        """
import torch
def prizes(data, q_emb, cost_e=0.5):
    # nn.CosineSimilarity has no parameters: no graph unless an input has one
    e_prizes = torch.nn.CosineSimilarity(dim=-1)(q_emb, data.edge_attr)
    costs = []
    for i, (src, dst) in enumerate(data.edge_index.t().numpy()):
        costs.append(cost_e - e_prizes[i])
    return costs
""",
        """
import torch
from torch.nn import GRUCell, Module
class Memory(Module):
    def __init__(self, num_nodes, dim):
        super().__init__()
        self.gru = GRUCell(dim, dim)
        self.register_buffer("memory", torch.zeros(num_nodes, dim))
    def update_state(self, n_id, msg):
        memory = self.gru(msg, self.memory[n_id])
        self.memory[n_id] = memory  # an in-place write into the preallocated buffer
""",
        """
from torch import nn
class Classifier(nn.Module):
    def __init__(self, dim, n):
        super().__init__()
        self.layers = nn.Linear(dim, n)
        self.log_scalings = []
        self.scalings_logging = False  # off unless enable_scalings_logging() is called
    def enable_scalings_logging(self):
        self.scalings_logging = True
    def forward(self, hidden):
        scalings = self.layers(hidden).softmax(-1)
        if self.scalings_logging:
            self.log_scalings.append(scalings)  # opt-in: low confidence
        return scalings
""",
        # d2l's Accumulator: `add` of an object some call built (not a set) is that class's
        # method, which may keep only float(b): not a container that keeps the graph
        """
import torch
from d2l import torch as d2l
def train_epoch(net, train_iter, loss, updater):
    metric = d2l.Accumulator(3)
    for X, y in train_iter:
        y_hat = net(X)
        l = loss(y_hat, y)
        updater.zero_grad()
        l.mean().backward()
        updater.step()
        metric.add(l.sum(), d2l.accuracy(y_hat, y), y.numel())
    return metric[0] / metric[2], metric[1] / metric[2]
""",
        # REINFORCE through helpers: the log-probs one method appends, another turns into the
        # loss that the caller backpropagates, and the list is reset after every update
        """
import torch
from torch.distributions import Categorical
class Agent:
    def __init__(self, policy):
        self.policy = policy
        self.optimizer = torch.optim.Adam(policy.parameters())
        self.log_probs = []
    def reset(self):
        self.log_probs = []
    def act(self, state):
        dist = Categorical(self.policy(torch.as_tensor(state).float()))
        action = dist.sample()
        self.save(dist.log_prob(action))
        return action.item()
    def save(self, log_prob):
        self.log_probs.append(log_prob)
    def policy_loss(self, ret):
        return torch.stack([-log_prob * ret for log_prob in self.log_probs]).sum()
    def learn(self, ret):
        loss = self.policy_loss(ret)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.reset()
""",
        # An early stopper whose method keeps the validation loss detached: the caller's
        # argument is not kept with its graph
        """
import torch
class EarlyStopper:
    def __init__(self, patience=5):
        self.history = []
        self.patience = patience
    def update(self, validation_loss, metrics):
        self.history.append((validation_loss.detach(), metrics))
    def should_stop(self):
        losses = [loss for loss, _ in self.history[-self.patience:]]
        return len(losses) == self.patience and min(losses) == losses[0]
class Trainer:
    def __init__(self, model, optimizer, loader, val_batch):
        self.model, self.optimizer, self.loader, self.val_batch = model, optimizer, loader, val_batch
        self.early_stopping = EarlyStopper()
    def train(self, epochs):
        for epoch in range(epochs):
            for x, y in self.loader:
                loss = ((self.model(x) - y) ** 2).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            val_loss = ((self.model(self.val_batch[0]) - self.val_batch[1]) ** 2).mean()
            self.early_stopping.update(val_loss, compute_metrics(self.model, self.val_batch))
            if self.early_stopping.should_stop():
                break
""",
        # Layer-wise inference that the file only calls through the DDP wrapper
        # (model.module.inference), always under torch.no_grad(): no graph is recorded
        """
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
class SAGE(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims, dims[1:]))
    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x
    def inference(self, x_all, loader, device):
        for i in range(len(self.layers)):
            xs = []
            for index in loader:
                x = self.layers[i](x_all[index].to(device))
                xs.append(x.cpu())
            x_all = torch.cat(xs, dim=0)
        return x_all
def run(rank, x_all, loader, epochs):
    model = DistributedDataParallel(SAGE([16, 32, 8]).to(rank), device_ids=[rank])
    for epoch in range(epochs):
        model.eval()
        with torch.no_grad():
            out = model.module.inference(x_all, loader, rank)
        print(epoch, out.shape)
""",
        # a rollout helper whose list holds detached states: its stack carries no graph
        """
import torch
import torch.nn as nn
cell = nn.GRUCell(16, 16)
def unroll(h, inputs):
    states = [h]
    for x in inputs:
        states.append(cell(x, states[-1]).detach())
    return torch.stack(states)
histories = []
for h0, inputs in loader:
    histories.append(unroll(h0, inputs))
""",
        # what the storage keeps by position is read back into the loss that is backpropagated
        """
import torch
import torch.nn as nn
class Storage:
    def __init__(self, steps):
        self.rewards = torch.zeros(steps)
        self.hidden = [None] * steps
    def insert(self, t, reward, hidden):
        self.rewards[t] = reward
        self.hidden[t] = hidden
cell, head = nn.GRUCell(8, 8), nn.Linear(8, 1)
optimizer = torch.optim.Adam(list(cell.parameters()) + list(head.parameters()))
storage = Storage(64)
for update in range(1000):
    h = torch.zeros(1, 8)
    for t in range(64):
        h = cell(observe(t), h)
        storage.insert(t, reward_at(t), h)
    values = head(torch.cat(storage.hidden)).squeeze(-1)
    loss = -(storage.rewards * values).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        # the storage's hidden states are read back by a name the code computes (getattr over
        # vars()), and the loss goes through them: the backward uses what insert() keeps
        """
import torch
import torch.nn as nn


class Storage:
    def __init__(self, steps):
        self.rewards = torch.zeros(steps)
        self.hidden = [None] * steps

    def insert(self, t, reward, hidden):
        self.rewards[t] = reward
        self.hidden[t] = hidden

    def field(self, name):
        return getattr(self, name)


cell, head = nn.GRUCell(8, 8), nn.Linear(8, 1)
optimizer = torch.optim.Adam(list(cell.parameters()) + list(head.parameters()))
storage = Storage(64)
keys = [k for k in vars(storage)]
for update in range(1000):
    h = torch.zeros(1, 8)
    for t in range(64):
        h = cell(observe(t), h)
        storage.insert(t, reward_at(t), h)
    hs = [storage.field(k) for k in keys if k != "rewards"][0]
    values = head(torch.cat(hs)).squeeze(-1)
    loss = -(storage.rewards * values).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
    )
    INVALID = (
        # a helper that unrolls a cell, gathering each step's output in a local list, returns
        # their stack: the list holds graphs (as `[cell(x, h)]` would), and so does the stack
        """
import torch
import torch.nn as nn
class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRUCell(16, 16)
    def forward(self, x, h):
        return self.gru(x, h)
def unroll(cell, h, inputs):
    states = [h]
    for x in inputs:
        states.append(cell(x, states[-1]))
    return torch.stack(states)
cell = Cell()
histories = []
for h0, inputs in loader:
    trajectory = unroll(cell, h0, inputs)
    histories.append(trajectory)  # expect: LL102
""",
        # a ring buffer whose list `__init__` builds in a tuple assignment, written by position
        """
import torch
class Ring:
    def __init__(self, size):
        self.slots, self.cursor, self.size = [], 0, size
    def put(self, item):
        if len(self.slots) < self.size:
            self.slots.append(None)
        self.slots[self.cursor] = item  # expect: LL102
        self.cursor = (self.cursor + 1) % self.size
encoder = torch.nn.Linear(32, 8)
optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
ring = Ring(4096)
for x, y in loader:
    z = encoder(x)
    ring.put(z)
    loss = (z - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        # the loss reads the storage's rewards, never the hidden states it keeps by position:
        # nothing differentiates those, whatever else of the object the backward uses
        """
import torch
import torch.nn as nn
class Storage:
    def __init__(self, steps):
        self.rewards = torch.zeros(steps)
        self.hidden = [None] * steps
    def insert(self, t, reward, hidden):
        self.rewards[t] = reward
        self.hidden[t] = hidden  # expect: LL102
cell, head = nn.GRUCell(8, 8), nn.Linear(8, 1)
optimizer = torch.optim.Adam(list(cell.parameters()) + list(head.parameters()))
storage = Storage(64)
for update in range(1000):
    h = torch.zeros(1, 8)
    for t in range(64):
        h = cell(observe(t), h)
        storage.insert(t, reward_at(t), h)
    loss = -(storage.rewards * head(h.detach()).squeeze()).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        # an image-text evaluation wrapper: the towers run through a library model's own methods
        # (get_text_features), chunk by chunk, and nothing differentiates what it returns
        """
import torch
import torch.nn.functional as F
from transformers import AutoModel, AutoTokenizer
class TextEncoder:
    def __init__(self, name):
        self.model = AutoModel.from_pretrained(name)
        self.tokenizer = AutoTokenizer.from_pretrained(name)
    def encode(self, texts, batch_size=256):
        chunks = []
        for start in range(0, len(texts), batch_size):
            inputs = self.tokenizer(texts[start:start + batch_size], padding=True, return_tensors="pt")
            feats = self.model.get_text_features(**inputs)
            chunks.append(F.normalize(feats, dim=-1).cpu())  # expect: LL102
        return torch.cat(chunks)
def retrieval_scores(encoder, queries, documents):
    q, d = encoder.encode(queries), encoder.encode(documents)
    return (q @ d.T).topk(10, dim=1).indices.tolist()
print(retrieval_scores(TextEncoder("openai/clip-vit-base-patch32"), ["a cat"], ["a dog", "a cat"]))
""",
        # one model per agent, kept in a list: each agent's output carries its graph
        """
import torch
import torch.nn as nn
class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)
    def forward(self, x):
        return torch.softmax(self.net(x), dim=-1)
class Team:
    def __init__(self, n_agents):
        self.actors = [Actor() for _ in range(n_agents)]
        self.history = []
    def act(self, observations):
        probs = [actor(obs) for actor, obs in zip(self.actors, observations)]
        self.history.append(probs[0])  # expect: LL102
        return [int(torch.multinomial(p, 1)) for p in probs]
team = Team(2)
for observations in loader:
    team.act(observations)
""",
        # a "bounded" queue so long that it fills over the whole run
        """
from collections import deque
import torch
class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.recent = deque(maxlen=100_000)
    def step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.recent.append(loss)  # expect: LL102
trainer = Trainer(model, optimizer)
for x, y in loader:
    trainer.step(x, y)
""",
        """
import torch
def predict(model, loader):
    model.eval()
    outputs = [model(x) for x, _ in loader]  # expect: LL102
    preds = torch.zeros(0)
    for x, _ in loader:
        preds = torch.cat([preds, model(x)])  # expect: LL102
    return outputs, preds
""",
        """
preds = []
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    preds.append(out.cpu())  # expect: LL102
""",
        """
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        y = self.body(x)
        self.activations.append(y)  # expect: LL102
        return y
""",
        """
losses = {}
for step, batch in enumerate(train_loader):
    loss = loss_fn(model(batch), batch)
    loss.backward()
    losses[step] = loss  # expect: LL102
    history = []
    history += [loss]
""",
        """
records = []
for x, y in loader:
    out = model(x)
    out.sum().backward()
    records.setdefault("out", []).append((out, y))  # expect: LL102
""",
        # a rollout store that writes each step's output by position into a list it built
        # (`[None] * steps`): one entry per step, like an append, not one slot
        """
import torch
class Rollout:
    def __init__(self, steps):
        self.outputs = [None] * steps
    def store(self, t, output):
        self.outputs[t] = output  # expect: LL102
policy = torch.nn.Linear(8, 4)
rollout = Rollout(128)
obs = torch.randn(1, 8)
for epoch in range(1000):
    for t in range(128):
        out = policy(obs)
        rollout.store(t, out)
        obs = torch.as_tensor(env_step(out.argmax(-1).tolist()))
""",
        # a logger whose method the file calls from one place: reported at its append (the line
        # that keeps the graph), naming the call; not at the line that makes room for a new key,
        # nor at the append of the step number
        """
class Logger:
    def __init__(self):
        self.stats, self.steps = {}, []
    def log_stat(self, key, value, step):
        if key not in self.stats:
            self.stats[key] = []
        self.steps.append(step)
        self.stats[key].append((step, value))  # expect: LL102
logger = Logger()
for step, (x, y) in enumerate(loader):
    loss = model(x, y)
    loss.backward()
    logger.log_stat("loss", loss, step)
""",
        # a statistics object of the file keeps what it is given: reported at the call that hands
        # it the graph; a helper of the trainer's own class is reported where it stores
        """
from collections import defaultdict
import torch.nn.functional as F
class StatisticsCollector:
    def __init__(self):
        self.statistics = defaultdict(list)
    def add(self, key, value):
        self.statistics[key].append(value)
class Trainer:
    def __init__(self, model):
        self.model = model
        self.stored = defaultdict(list)
    def store(self, metrics):
        for key, value in metrics.items():
            self.stored[key].append(value)  # expect: LL102
    def train_step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.store({"loss": loss})
        return loss.item()
collector = StatisticsCollector()
for x, y in loader:
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    collector.add("step", 1)
    collector.add("loss", loss)  # expect: LL102
""",
        # samples drawn until enough are accepted, from a forward (in the flow's sample()) whose
        # output nothing differentiates: the keep in the drawing loop is where graphs pile up,
        # reported here (naming the forward; LL201 leaves that forward to this finding)
        """
import torch
import torch.nn as nn
class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 8)
    def sample(self, n):
        return self.net(torch.randn(n, 4))
def draw(flow, count):
    accepted = []
    while len(accepted) < count:
        candidates = flow.sample(256)
        accepted.append(candidates[candidates[:, 0] > 0])  # expect: LL102
    return torch.cat(accepted)
print(draw(Flow(), 10).shape)
""",
        # samples drawn from a flow that is trained through the same sample(): the forward's
        # output is differentiated in training, so the keep is where the sampling loop leaks
        """
import torch
import torch.nn as nn
class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 8)
    def sample(self, n):
        return self.net(torch.randn(n, 4))
flow = Flow()
optimizer = torch.optim.Adam(flow.parameters())
for step in range(100):
    loss = flow.sample(64).pow(2).mean()
    loss.backward()
    optimizer.step()
def draw(flow, count):
    accepted = []
    while len(accepted) < count:
        candidates = flow.sample(256)
        accepted.append(candidates[candidates[:, 0] > 0])  # expect: LL102
    return torch.cat(accepted)
print(draw(flow, 10).shape)
""",
        # a closure the optimizer calls several times per step (L-BFGS)
        """
import torch
def train(model, samples, iterations):
    optimizer = torch.optim.LBFGS(model.parameters())
    losses = []
    for it in range(iterations):
        def closure():
            optimizer.zero_grad()
            loss = model(samples).pow(2).mean()
            loss.backward()
            losses.append(loss)  # expect: LL102
            return loss
        optimizer.step(closure)
    return losses
""",
        """
import torch
from torch import nn
class Memory(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gru = nn.GRUCell(dim, dim)
        self.memory = {}
    def update_state(self, n_id, msg):
        self.memory[n_id] = self.gru(msg)  # expect: LL102
""",
        # The same forward over a loader keeps every batch's logits with their graphs
        """
import torch
import torch.nn as nn
import torch.nn.functional as F


class DatasetLoss(nn.Module):
    # wraps a model; one call scores a whole loader

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, loader):
        total = 0
        outputs = []
        for x, y in loader:
            logits = self.model(x)
            total += F.cross_entropy(logits, y)
            outputs.append(logits)  # expect: LL102
        return total.item() / len(loader), torch.cat(outputs).argmax(1)


def main(loader):
    scorer = DatasetLoss(nn.Linear(16, 4))
    print(scorer(loader))
""",
        # Another class's log-probs that a backward consumes say nothing of this one's, which
        # nothing trains on and nothing empties
        """
import torch
from torch.distributions import Categorical


class Agent:
    def __init__(self, policy):
        self.policy = policy
        self.optimizer = torch.optim.Adam(policy.parameters())
        self.log_probs = []

    def act(self, state):
        dist = Categorical(self.policy(torch.as_tensor(state).float()))
        action = dist.sample()
        self.log_probs.append(dist.log_prob(action))
        return action.item()

    def policy_loss(self, ret):
        return torch.stack([-log_prob * ret for log_prob in self.log_probs]).sum()

    def learn(self, ret):
        loss = self.policy_loss(ret)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.log_probs = []


class Recorder:
    # evaluation-time recorder: keeps every log-prob, never trains on them

    def __init__(self, policy):
        self.policy = policy
        self.log_probs = []

    def act(self, state):
        dist = Categorical(self.policy(torch.as_tensor(state).float()))
        action = dist.sample()
        self.log_probs.append(dist.log_prob(action))  # expect: LL102
        return action.item()

    def report(self):
        return sum(lp.item() for lp in self.log_probs)
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A validation loop that keeps each batch's loss in a list, graph and all, vs its `.detach()`."""

        def setup(self, ctx):
            import torch
            ctx.model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(ctx.device)
            ctx.x = torch.randn(64, 64, device=ctx.device)
            ctx.y = torch.randint(0, 10, (64,), device=ctx.device)
            ctx.losses = []

        def leaky(self, ctx):
            import torch.nn.functional as F
            loss = F.cross_entropy(ctx.model(ctx.x), ctx.y)
            ctx.losses.append(loss)

        def fixed(self, ctx):
            import torch.nn.functional as F
            loss = F.cross_entropy(ctx.model(ctx.x), ctx.y)
            ctx.losses.append(loss.detach())


# --- detection ------------------------------------------------------------------------------------
#: Container methods that store their argument(s), and which positional argument is stored.
_STORING_METHODS = {"append": 0, "appendleft": 0, "add": 0, "extend": 0, "insert": 1, "put": 0}


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    yield from _through_methods(facts)
    for fact in facts.statements():
        yield from _collected_by_comprehension(facts, fact)
        for container, stored in _stores(fact, facts):
            value = strongest_graph([facts.value(expr) for expr in stored])
            if value is None or facts.kept_at_callers(fact, value) or _bounded(facts, fact, container):
                continue
            lifetime = facts.lifetime(fact, container)
            # A store that outlives the call grows with every call of the function, except in
            # ``__init__``, which runs once per object: one graph per object is LL105's peak.
            per_call = (bool(fact.loops) or "." in container or fact.function in per_step_functions(facts)) and fact.function.name != "__init__"
            confidence = lifetime.leak_confidence(value.confidence, count_call_lifetime=per_call)
            if confidence is None:
                continue
            if _unknown_add(facts, fact):
                # `metric = Accumulator(4); metric.add(l)`: that class's add, which may keep
                # float(l) or nothing; only a set's add surely keeps it. Shown with low confidence.
                confidence = Confidence.LOW
            place = facts.index.place_of(fact)
            if place is not None and place.opt_in_flag() is not None:
                # Only when a caller asks (``if use_cache:``, False by default): whether it keeps
                # graphs depends on whether those callers record gradients.
                confidence = Confidence.LOW
            graphs = [expr for expr in stored if facts.value(expr).is_graph]
            culprit = graphs[0]
            if len(graphs) > 1 and isinstance(graphs[-1], (cst.List, cst.Tuple)):
                graphs.pop()  # `[loss, loss * 2]`: detach each element, not the list
            forward = lifetime.unused_forward_line
            yield Violation(
                node=fact.node,
                message=(
                    f"'{facts.describe(culprit)}' is stored in '{container}' with its autograd graph; "
                    f"'{container}' outlives the iteration, so every stored graph stays alive"
                    + (
                        f"; nothing differentiates what it keeps: the forward at line {forward} records "
                        "those graphs for nothing"
                        if forward is not None
                        else ""
                    )
                ),
                confidence=confidence,
                help=(
                    f"run the forward at line {forward} under 'with torch.no_grad():' (its graphs are never used), "
                    "or store a .detach() of what it computes"
                    if forward is not None
                    else _help(facts, culprit)
                ),
                statement=fact.line,
                fix=detach_each_fix(facts, graphs, mapping_hint=True),
            )
            break


def _bounded(facts: ModuleFacts, fact: StatementFact, container: str) -> bool:
    """Every value ``container`` is given is a bounded queue (``deque(maxlen=100)``): it keeps the
    last few items, not one per step."""
    values = facts.index.assigned_values(fact.function, container)
    return bool(values) and all(is_bounded_queue(value, facts.imports) for value in values)


def _through_methods(facts: ModuleFacts) -> Iterator[Violation]:
    """``history.record(out)`` where ``record`` does ``self.values.append(value)``: reported at
    the call that hands the graph over, or, when the file calls the method from that one place,
    at the method's own append (the line that keeps it; the call and it are one fix apart)."""
    for store, argument, confidence in facts.graphs_kept_by_methods("append"):
        assert store.statement is not None
        inside = _single_caller_store(facts, store, argument)
        if inside is not None:
            fact, kept = inside
            yield Violation(
                node=fact.node,
                message=(
                    f"'{facts.describe(kept.value)}' is {'appended to' if kept.kind == 'append' else 'written into'} "
                    f"'{kept.container}' with the autograd graph that "
                    f"'{facts.describe(argument.expr)}' carries (passed by the call at line {facts.line_of(store.statement.node)}); "
                    "every stored graph stays alive"
                ),
                confidence=confidence,
                help=_help(facts, argument.expr),
                statement=fact.line,
                fix=detach_fix(facts, argument.expr, mapping_hint=True),
            )
            continue
        yield Violation(
            node=store.node,
            message=(
                f"'{facts.describe(argument.expr)}' is stored by '{store.receiver}' ({store.method.name}() appends it "
                f"to {argument.attribute}) with its autograd graph; every stored graph stays alive"
            ),
            confidence=confidence,
            help=_help(facts, argument.expr),
            statement=store.statement.line,
            fix=detach_fix(facts, argument.expr, mapping_hint=True),
        )


def _single_caller_store(facts: ModuleFacts, store: MethodStore, argument: StoredArgument) -> tuple[StatementFact, Store] | None:
    """The statement of a method of this file that keeps, in ``argument.attribute``
    (``self.stats``), a value computed from the parameter the call's graph-attached argument binds
    (the append or the write by position, not the ``self.stats[key] = []`` that makes room for it,
    nor the append of another parameter), when the file calls the method from one place only."""
    method = store.method
    if not isinstance(method, FunctionInfo) or method.node is None or len(call_graph(facts).sites_of(method)) != 1:
        return None
    arg = next((arg for arg in store.node.args if arg.value is argument.expr), None)
    parameter = parameter_for(method.node, store.node, arg, skip=1) if arg is not None else None
    if parameter is None:
        return None
    container = argument.attribute.split("[", 1)[0]
    for fact in facts.index.statements_of(method):
        for kept in stores(fact.node, facts.imports):
            if kept.kind in ("append", "item") and kept.container.split("[", 1)[0] == container:
                if parameter in facts.value(kept.value).deps:
                    return fact, kept
    return None


def _collected_by_comprehension(facts: ModuleFacts, fact: StatementFact) -> Iterator[Violation]:
    """``outputs = [model(x) for x in loader]``: the comprehension is the loop, the list the container."""
    node = fact.node
    if not isinstance(node, cst.Assign) or len(node.targets) != 1:
        return
    value = node.value
    if not isinstance(value, (cst.ListComp, cst.SetComp, cst.DictComp)):
        return
    target = dotted_name(node.targets[0].target)
    iterable = value.for_in.iter
    walks_data = (
        iterates_data(iterable, facts.imports)
        or facts.value(iterable).role is Role.LOADER
        or walks_records_of_parameter(iterable, value.for_in.target, fact.function, facts.imports)
    )
    if target is None or not walks_data:
        return
    element = value.value if isinstance(value, cst.DictComp) else value.elt
    stored = facts.value(element)
    if not stored.is_graph or target in facts.summary(fact.function).backward_consumed:
        return
    yield Violation(
        node=node,
        message=(
            f"'{facts.describe(element)}' is collected for every batch into '{target}' with its autograd graph; "
            "every batch's graph stays alive until the list goes"
        ),
        confidence=stored.confidence,
        help=_help(facts, element),
        statement=fact.line,
        fix=detach_fix(facts, element),
    )


def _help(facts: ModuleFacts, stored: cst.BaseExpression) -> str | None:
    if facts.value(stored).items is not None or facts.value(stored).fields is not None:
        return "store a .detach() of every tensor it holds (or run what computes them under torch.no_grad())"
    receiver = facts.describe_receiver(stored)
    if receiver is None:
        return None
    if facts.derived(container_usage).get(dotted_name(stored) or "") == MAPPING:
        return f"store {{k: v.detach() for k, v in {receiver}.items()}} (or the numbers, with .item())"
    if receiver.endswith(".cpu()"):
        return f"store {receiver[: -len('.cpu()')]}.detach().cpu() (or use .item() for a scalar)"
    return f"store {receiver}.detach() (add .cpu() to free device memory, or use .item() for a scalar)"


def _stores(fact: StatementFact, facts: ModuleFacts) -> Iterator[tuple[str, list[cst.BaseExpression]]]:
    """(container, stored expressions) pairs of a statement."""
    node = fact.node
    if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
        call = node.value
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _STORING_METHODS:
            if _instance_of_known_class(facts, call.func.value):
                return  # its method says what it keeps (_through_methods), not the method's name
            position = _STORING_METHODS[call.func.attr.value]
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            container = container_name(call.func.value)
            if container and len(positional) > position:
                yield container, _elements(positional[position])
    elif isinstance(node, cst.Assign):
        for target in node.targets:
            if isinstance(target.target, cst.Subscript) and not constant_key(target.target):
                container = container_name(target.target)
                if container and not overwrites(facts, fact, Store(container, node.value, "item")):
                    yield container, [node.value]
        if len(node.targets) == 1 and isinstance(node.value, cst.BinaryOperation):
            target_name = dotted_name(node.targets[0].target)
            value = node.value
            if target_name and isinstance(value.operator, cst.Add) and dotted_name(value.left) == target_name:
                if isinstance(value.right, (cst.List, cst.Tuple)):
                    yield target_name, _elements(value.right)
        if len(node.targets) == 1:
            grown = grown_tensor(node, facts.imports)
            if grown is not None:
                yield grown
    elif isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign):
        if isinstance(node.value, (cst.List, cst.Tuple)):
            container = container_name(node.target)
            if container:
                yield container, _elements(node.value)


def _instance_of_known_class(facts: ModuleFacts, receiver: cst.BaseExpression) -> bool:
    """An object built from a class of this file or of another module of the project: a
    ``history.add(loss)`` there runs that class's ``add``, whatever a set's ``add`` would do."""
    value = facts.value(receiver)
    return value.role is Role.INSTANCE and value.cls is not None


#: Calls that build a set, whose ``add`` keeps its argument.
_SET_BUILDERS = frozenset({"set", "WeakSet", "SortedSet", "OrderedSet"})


def _unknown_add(facts: ModuleFacts, fact: StatementFact) -> bool:
    """The statement is ``obj.add(...)`` on an object only ever bound to what a call other than
    ``set()`` returns: an object of a class leaklint cannot see (``d2l.Accumulator(4)``), whose
    ``add`` may keep anything (``float(b)``) or nothing; only a set's ``add`` is known to keep
    its argument."""
    node = fact.node
    if not (isinstance(node, cst.Expr) and isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Attribute)):
        return False
    if node.value.func.attr.value != "add":
        return False
    name = dotted_name(node.value.func.value)
    if name is None:
        return False
    assigned = facts.index.assigned_values(fact.function, name)
    return bool(assigned) and all(
        isinstance(value, cst.Call) and (dotted_name(value.func) or "").rsplit(".", 1)[-1] not in _SET_BUILDERS
        for value in assigned
    )


def _elements(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values a stored expression puts in: list-literal elements, or the expression itself."""
    if isinstance(expr, (cst.List, cst.Tuple)):
        return [element.value for element in expr.elements] + [expr]
    return [expr]
