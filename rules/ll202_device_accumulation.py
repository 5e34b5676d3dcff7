"""LL202 device-accumulation: tensors on the accelerator kept for every batch of a loop, or on self without end."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence

import libcst as cst

from leaklint.analysis.arguments import is_bound_to_object, is_staticmethod, parameter_for
from leaklint.analysis.calls import call_graph, local_callee
from leaklint.analysis.containers import literal_key
from leaklint.analysis.device import (
    DEVICE_EVIDENCE,
    DEVICE_RESULT_METHODS,
    HF_EVAL_OFFLOAD_ARGUMENTS,
    HF_SEQ2SEQ_TRAINERS,
    HF_TRAINERS,
    HOST_METHODS,
    LM_HEAD_MODEL,
    callers_take_to_host,
    is_hf_trainer,
    is_lightning_predict_hook,
    lightning_step_outputs_parameter,
    on_accelerator,
    produces_model_output,
    takes_to_host,
)
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name, names_read
from leaklint.analysis.places import builds_a_model
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.steps import (
    LIGHTNING_EPOCH_OUTPUTS,
    LIGHTNING_EVALUATION_EPOCH_ENDS,
    is_per_step_hook,
    per_step_functions,
)
from leaklint.analysis.stores import Store, emptied, overwrites, stores
from leaklint.analysis.structure import FunctionInfo, LoopInfo, backward_calls, bound_names, inner_iterable, is_counter_loop
from leaklint.analysis.torch_api import (
    LOOPS_OR_FUNCTIONS,
    NO_GRAD_RESULT_METHODS,
    NON_TENSOR_ATTRIBUTES,
    TO_PYTHON_METHODS,
    TORCH_CODE,
    is_functional_loss,
)
from leaklint.analysis.syntax import is_literal
from leaklint.analysis.walk import calls_in, not_into_scopes, walk
from leaklint.analysis.values import Role
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names
from leaklint.rule import Measured, Rule, Violation


class DeviceAccumulation(Rule):
    code = "LL202"
    name = "device-accumulation"
    severity = Severity.LEAK
    summary = (
        "Tensors on the accelerator (outputs, predictions, embeddings, labels) are kept for every batch of an "
        "evaluation or prediction loop, or in a list on self that is never emptied."
    )
    help = "keep a CPU copy (.cpu()) or the numbers you need (.item(), .tolist()) instead of the device tensor"
    #: What a file must contain before this rule can fire: torch words, a loop or a function (a
    #: container kept across iterations or calls) or a trainer's compute_metrics (the trainer keeps
    #: them), and something that puts tensors on a device.
    needs = TORCH_CODE & (LOOPS_OR_FUNCTIONS | Names("compute_metrics")) & DEVICE_EVIDENCE
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(9, 0, 9), leaks=(34, 2))
    docs = """
## What it finds
A tensor that lives on the accelerator, stored for every iteration of a loop that runs over the
data (a loader, a dataset, the files of a folder, an input walked in chunks that a model runs on,
`for i in range(0, len(texts), n)`, the steps of a sampler that feeds a model's output back into
it, `img = p_sample(img, t)`), or on every call of a
step method, into something that outlives the iteration: `preds.append(logits)`,
`outputs[key] = out`, `all_logits = torch.cat([all_logits, logits])` and its lazy start
`preds = logits if preds is None else torch.cat([preds, logits])`. The tensor has no autograd
graph (it was made under `torch.no_grad()`/`inference_mode()`, detached, or by `generate()`;
a graph kept this way is LL102's finding); what it costs is its device memory.

A tensor is known to be on the accelerator when the code shows it (the shared fact
`Value.device`, `leaklint/analysis/device.py`): moved there (`.to(device)`, `.cuda()`), made there
(`torch.zeros(n, device=device)`), returned by a model that is there or was given inputs that are,
gathered by accelerate (`gather_for_metrics`), handed over by a framework (a LightningModule's
`batch` and submodules, and the parameters of its helpers that its steps always pass the batch to,
`self._shared_step(batch)`; an HF `Trainer`'s prepared inputs and `prediction_step`), or computed
from such tensors. `.cpu()`, `.item()`, `.tolist()`, `.numpy()` and `.to("cpu")` end it; a tensor
moved only on some paths (`if args.use_cuda: feats = feats.cuda()`) is a choice the code made, not
reported.

The confidence says how far it grows:

- **high**: without end. A list on `self` filled by a per-step method (`validation_step`,
  `test_step`, a method a loop of the file calls every step) that no method ever empties (no
  `.clear()`, no re-binding outside `__init__`): it keeps every step of every epoch. Or a local
  list that an epoch loop carries across its data loops.
- **medium**: over one run of the loop (a whole evaluation), when what is kept holds a model's
  output (logits, probabilities, embeddings, generated ids, decoded images: what a model returned,
  carried through elementwise, view or pooling operations, also inside a helper of the file such
  as a masked mean pool). The batch tensors kept next to it in the same loop (the labels) are
  reported with it.
- **low** (hidden by default): a list the loop itself empties every few iterations (`if
  len(buf) >= 50: save(buf); buf.clear()`); only indices, comparisons, per-sample reductions or labels are kept
  (`logits.argmax(-1)`, `(pred == y)`, `errors.mean(dim=1)`); one number per batch (a loss, a
  mean); a store that runs on every k-th iteration only (`if i % log_every == 0:`); a function that
  returns what it collected, still on the device, to its caller (unless every caller in the file
  moves it to the host: `to_np(torch.cat(preds))`, `{k: v.cpu() for k, v in results.items()}`,
  `for p in preds: p.cpu()` — then it was kept on the device for nothing, and the confidence is
  the loop's); a list on `self` that an epoch-end hook empties (the pattern Lightning documents
  for epoch-level metrics, bounded by one epoch).

A prediction run (`trainer.predict`) is the exception to the last point: it goes over a whole
data set, and Lightning's own predict loop moves every `predict_step` result to the CPU before
keeping it (since 1.5). A list that `predict_step` or a callback's `on_predict_batch_end` fills
with device tensors (the step's `outputs`, the `batch` the Trainer moved) is reported at medium
confidence when it keeps full outputs, even if the next run empties it. A Lightning callback's
per-batch hooks get the step's `outputs` and the `batch` on the module's device.

A dict on `self` that a per-step method fills (`self.labels[device] = ...`) grows only with new
keys, which may come back (a cache per device or per shape): low confidence.

Lightning before 2.0 keeps every batch's return value of `training_step`, `validation_step` and
`test_step` until the epoch ends when the module overrides the matching `*_epoch_end(self,
outputs)` hook (the table `LIGHTNING_EPOCH_OUTPUTS`, `leaklint/analysis/steps.py`). Each device
tensor in what a step returns is reported where it is written: in the returned dict, or in the
helper of the class whose dict the step returns (`return self._shared_step(batch)`, a name bound
to a dict and filled item by item). Medium when no epoch-end hook reads it (the hooks read only
`o["loss"]`, or never look at `outputs`): it is kept for nothing. Medium when `training_epoch_end`
reads it: every training step's outputs are kept, for a metric that could be updated step by
step. When only `validation_epoch_end`/`test_epoch_end` read it, as for an evaluation loop: medium
for a model's whole output, low for labels, indices and per-sample numbers (the input of an
epoch-level metric), except when the hooks read it from one batch only (`outputs[0]["images"]`,
a few samples to log): then every other batch's is kept for nothing, medium. The `"loss"` entry,
which Lightning backpropagates, and single numbers are not reported.

An HF `Trainer` (or a subclass) built with `compute_metrics` and an `eval_dataset` keeps, at
every evaluation, the logits of every batch on the accelerator until `compute_metrics` runs. On a
model that scores every token over the vocabulary (built from a `...ForCausalLM`, `...ForMaskedLM`,
`...LMHeadModel`, `...ForSeq2SeqLM` or `...ForConditionalGeneration` class) that is `[eval size,
sequence length, vocabulary]` values: reported at `compute_metrics=` (medium), unless
`preprocess_logits_for_metrics` shrinks them first or the `TrainingArguments` set
`eval_accumulation_steps`, `batch_eval_metrics`, `prediction_loss_only` or (for a
`Seq2SeqTrainer`, which then keeps generated token ids) `predict_with_generate` (arguments it
cannot see, read from the command line, count as setting them). The same holds for any model
built with `output_attentions=True` or `output_hidden_states=True`: the Trainer keeps every
output but the loss, so each batch adds a tensor per layer (`[batch, heads, length, length]` for
attention maps); reported at the `from_pretrained` call that sets the flag (medium), with the
same exceptions. So is a module class of the file whose `forward` returns those outputs of a call
it makes with the flag (`enc = self.encoder(ids, output_hidden_states=True)`, then
`SequenceClassifierOutput(logits=logits, hidden_states=enc.hidden_states)`): reported where
`forward` returns them. A subclass that replaces the
evaluation loop (`evaluate`, `evaluation_loop`, `prediction_loop`) is judged by its own loop.

A loop over the items of something else (the frames of a video, the crops of an image, a list of
texts) that runs the model on each item counts too when the code after it moves what it kept to
the host anyway, piece by piece or all at once (`for mask in masks: mask.argmax(1).cpu()`): the
device copies were never needed together. Without that, such a loop is taken as bounded work that
means to end on the device (chunks of one input concatenated for the caller).

A helper that keeps the tensor in a container its caller hands it (`log_step(logs, codes)`, which
appends to `logs`) counts as the caller's loop keeping it, when every call of the file passes a
container bound before a loop over the data and neither rebound nor emptied in it (medium).

Not reported: a store in `__init__`; writes into slots that exist already (`d[k] = d[k].to(device)`,
`for k in d: d[k] = ...`, `buf[i] = out` into a preallocated tensor); a tensor a generation loop
grows and feeds back to its model (`ids = torch.cat([ids, next_id])`); loops over a few layers,
heads or boxes; a `range` loop whose counter only slices what a loop around it binds afresh
every iteration (`for i in range(0, batch_size, mini_batch_size): batch[i : i + mini_batch_size]`,
with `batch` drawn by the step loop): it walks the mini-batches of one batch, and what it keeps is
bounded by that batch (when the list outlives the outer loop, that loop is the one reported).

## Why it matters
Each stored tensor stays on the accelerator until the container goes. Collecting an evaluation's
logits keeps `dataset size x classes` floats on the GPU (a token-level task: `tokens x vocabulary`),
on top of the model and the activations of the current batch, so memory grows with every batch
and the evaluation dies with an out-of-memory error partway through, on a validation set that
fits in host memory a hundred times over. Moving each batch to the host as it comes costs one
copy that the code makes anyway at the end (`torch.cat(preds).cpu().numpy()`). A list on `self`
that is never emptied is worse: it keeps growing epoch after epoch (Lightning 2.0 stopped passing
`outputs` to epoch-end hooks for exactly this reason, and leaves the list to the module).

## Example
```python
@torch.no_grad()
def evaluate(model, loader, device):
    all_logits, all_labels = [], []
    for x, y in loader:
        logits = model(x.to(device))
        all_logits.append(logits)
        all_labels.append(y.to(device))
    return accuracy(torch.cat(all_logits).cpu(), torch.cat(all_labels).cpu())
```

## Use instead
```python
@torch.no_grad()
def evaluate(model, loader, device):
    all_logits, all_labels = [], []
    for x, y in loader:
        logits = model(x.to(device))
        all_logits.append(logits.cpu())
        all_labels.append(y)
    return accuracy(torch.cat(all_logits), torch.cat(all_labels))
```
Keep only what the metric needs (`logits.argmax(-1).cpu()`), or update a running metric per batch;
for a list on `self`, empty it where it is consumed (`self.validation_step_outputs.clear()` in
`on_validation_epoch_end`).

## Fix safety
No automatic fix. Moving the stored tensors to the host changes where the code after the loop
computes: a `torch.cat(preds) == labels` that mixes them with device tensors would then raise, and
a metric computed on the GPU on purpose would run on the CPU. Where to move what, and whether to
keep whole outputs at all, is the user's call; the finding's help names the tensor to move.

## Known false positives
On bench/realcode the findings at the default confidence, each checked by hand, are true or
debatable. True: diffusion samplers that keep every timestep's image in a list used only with
`return_all_timesteps=True`, off by default; FID code that keeps 50k Inception feature vectors on
the GPU before `.cpu().numpy()`; a sampling script that keeps every prompt's decoded images for a
final grid; tutorials that keep a whole dataset's features or per-sample accuracies on the GPU.
Debatable: the same grid over `--n_iter` batches (1 by default), and evaluation loops that keep
one number or one row of logits per example on the device (a few thousand floats) to reduce them
right after the loop. The false positives at first (k-NN and retrieval banks searched or
multiplied as a whole after the loop, a list of Python ints, a store under `if t == 0:`, one
detached loss per task of a meta-batch, a PPO rollout's rewards that the update step takes as
input) are fixed. At low confidence it adds more (periodic snapshots of a sampler, per-image
detection statistics of yolov5's `val.py`, collectors that return their tensors), which the
default hides.

Whole-run accumulations that are meant to stay on the device (outputs fitted together) are
reported when nothing in the code says so. A feature bank that a later loop of the same function
reads on every iteration (a k-NN evaluation searching it for each query batch) is the working set
of the algorithm and is not reported; a device chosen by a
flag (`if use_cuda: feats = feats.cuda()`), a collector that returns its tensors still on the
device, and periodic snapshots count as deliberate (the `measured` line gives the current
bench/leaks figures). One finding was in the fixed version of a federated MRI test script, which added
`torch.no_grad()` but still kept every reconstruction on the device until the test set ended: a
true device accumulation, so the fixed version was corrected (bench/leaks/HELDOUT.md).
A bank multiplied as a whole after the loop (`sims = image_embeds @ text_embeds.t()`, all-pairs
retrieval scores) is a working set too, and a store under `if t == 0:` (a `range` or `enumerate`
counter compared with a literal) keeps one value per run of that loop, not one per iteration (one per
model of a sweep that builds a model per iteration is shown with low confidence).

On the library code of accelerate, lightning, peft, trl, torchmetrics, torch_geometric and timm,
3 of its 4 default findings were false until two causes were fixed: a collector that hands what it
kept to its caller through another name (`out = torch.cat(embs); return out`, or a loop that
collects the pairs again before returning them) counted only when it wrote `return embs`; and
`.to(embedding_device)` counted as a move to the accelerator when the parameter defaults to `"cpu"`
(or `torch.device("cpu")`) and no call in the file passes anything else. A caller that passes
another device for it (`embedding_device="cuda"`) is still reported.

It misses what it cannot see: tensors moved to the device inside a helper of another module, a
model held in a container, and evaluation outputs that Lightning 1.4 and earlier kept without a
`validation_epoch_end`/`test_epoch_end` hook (1.5 and later keep them only for that hook; nothing
in the code says which version runs it). A `predict_step` return value is not a device
accumulation: `trainer.predict` keeps every batch's predictions (with `return_predictions`), but
Lightning moves each to the CPU first (since 1.5). Lists on `self` emptied once per epoch are taken
as Lightning's documented pattern (low confidence, whatever they hold), except those a prediction
run fills (medium, see above) unless the hook itself flushes them.

## References
- Keeping each batch's predictions on the GPU runs inference out of memory; moving them to the host
  (`.tolist()`, `.cpu()`) fixes it: https://github.com/MarvinLvn/voice-type-classifier/issues/12
- "GPU memory fills during prediction/evaluation": outputs, predictions and labels moved to the CPU:
  https://github.com/SPOClab-ca/dn3/issues/38
- HF Trainer: evaluation keeps the predictions' logits on the GPU until compute_metrics, OOM with
  large generative models: https://github.com/huggingface/transformers/pull/27458
- HF Trainer keeps `[eval size, length, vocabulary]` logits for `compute_metrics`; an LLM
  fine-tuning script adds `preprocess_logits_for_metrics` to keep only the argmax:
  https://github.com/MeetKai/functionary/pull/38 (and https://github.com/huggingface/transformers/issues/8476)
- Lightning keeps every step's returned GPU tensors (an input image among them) until the epoch
  ends: https://github.com/microsoft/hi-ml/pull/293
- Lightning 2.0 removes the epoch-end hooks that retained every step's outputs:
  https://github.com/Lightning-AI/pytorch-lightning/pull/16520
- Runtime repro: `leaklint verify LL202` measures the leaky and the fixed loop body.
"""

    VALID = (
        # the same helper, but the caller's dict is made afresh for every batch
        """
from collections import defaultdict
import torch

def log_step(logs, codes):
    logs["codes"].append(codes.detach()[::8])

def train(model, loader, writer):
    for step, x in enumerate(loader):
        logs = defaultdict(list)
        codes, recon = model(x.cuda())
        log_step(logs, codes)
        writer.add_histogram("codes", torch.cat(logs["codes"]).cpu(), step)
""",
        # the same flag with the outputs cut to the logits before they are kept, and with the
        # evaluation outputs moved to the host every few batches
        """
from transformers import AutoModelForTokenClassification, Trainer, TrainingArguments


def tag_accuracy(pred):
    return {"acc": float((pred.predictions == pred.label_ids).mean())}


def finetune(train_ds, eval_ds):
    tagger = AutoModelForTokenClassification.from_pretrained("roberta-base", num_labels=9, output_hidden_states=True)
    args = TrainingArguments("ner-out", eval_strategy="epoch")
    Trainer(model=tagger, args=args, train_dataset=train_ds, eval_dataset=eval_ds, compute_metrics=tag_accuracy,
            preprocess_logits_for_metrics=lambda outputs, labels: outputs[0].argmax(-1)).train()
    offloaded = TrainingArguments("ner-out", eval_strategy="epoch", eval_accumulation_steps=4)
    Trainer(model=tagger, args=offloaded, train_dataset=train_ds, eval_dataset=eval_ds, compute_metrics=tag_accuracy).train()
""",
        # a chunked attention inside a module's forward: the chunks are parts of one pass, and
        # one image per detected box, re-tokenised and moved to the device every box (moving a
        # fresh input is not a state the loop steps), saved with the image it belongs to
        """
import torch
import torch.nn as nn


class ChunkedScorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(64, 64)

    def forward(self, x, width=256):
        parts = []
        for first in range(0, x.shape[0], width):
            parts.append(self.proj(x[first:first + width]))
        return torch.cat(parts)


@torch.no_grad()
def describe(image, boxes, captioner, embed, save):
    record = {"boxes": []}
    for box in boxes:
        inputs = captioner.prepare(image.crop(box))
        inputs = {k: v.cuda() for k, v in inputs.items()}
        record["boxes"].append(embed(**inputs))
    save(record)
""",
        # a helper that turns the output into class ids before returning it (the parameter is
        # reassigned: what comes back is not the output), and a prediction callback that writes
        # its buffer to disk every 100 batches
        """
import lightning.pytorch as pl
import torch

class Tagger:
    def __init__(self, model):
        self.model = model.cuda().eval()

    def _decode(self, logits, mask):
        logits = logits.argmax(-1)
        return logits * mask

    @torch.no_grad()
    def tag(self, batches):
        tags = []
        for ids, mask in batches:
            tags.append(self._decode(self.model(ids.cuda()), mask.cuda()))
        return tags

class FlushEvery(pl.Callback):
    def __init__(self):
        self.buffer, self.part = [], 0

    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        self.buffer.append(outputs)
        if len(self.buffer) == 100:
            torch.save(torch.cat(self.buffer).cpu(), f"part{self.part}.pt")
            self.buffer.clear()
            self.part += 1
""",
        # outputs gathered on the device and flushed to disk every 50 batches: a window of a few
        # batches, not the whole run (low confidence only)
        """
import torch

@torch.no_grad()
def predict(model, loader, out_dir, every=50):
    model = model.cuda().eval()
    buf, part = [], 0
    for x in loader:
        buf.append(model(x.cuda()))
        if len(buf) >= every:
            torch.save(torch.cat(buf).cpu(), f"{out_dir}/part{part}.pt")
            buf.clear()
            part += 1

@torch.no_grad()
def embed(model, loader, out_dir, every=50):
    model = model.cuda().eval()
    pending = []
    for i, x in enumerate(loader):
        pending.append(model(x.cuda()))
        if len(pending) == every:
            torch.save(torch.cat(pending).cpu(), f"{out_dir}/emb{i:06d}.pt")
            del pending[:]
""",
        # the same prediction callback, keeping host copies
        """
import lightning.pytorch as pl
import torch

class KeepPredictions(pl.Callback):
    def on_predict_epoch_start(self, trainer, pl_module):
        self.preds, self.inputs = [], []

    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        features, _ = batch
        self.preds.append(outputs.cpu())
        self.inputs.append(features.cpu())
""",
        # a validation callback that keeps each batch's outputs until the epoch's end, where it
        # computes an epoch-level metric and empties the list: bounded by one validation epoch
        # (low confidence only)
        """
import lightning.pytorch as pl
import torch

class EpochAUROC(pl.Callback):
    def __init__(self):
        self.scores = []

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        self.scores.append(outputs["scores"])

    def on_validation_epoch_end(self, trainer, pl_module):
        pl_module.log("auroc", auroc(torch.cat(self.scores)))
        self.scores.clear()
""",
        # retrieval evaluation: the image embeddings stay on the device because the next line
        # scores every image against every text at once (a matrix product over the whole bank)
        """
import torch
import torch.nn.functional as F
@torch.no_grad()
def evaluate(model, image_loader, text_embeds, device):
    image_embeds = []
    for images in image_loader:
        image_embeds.append(F.normalize(model.encode_image(images.to(device)), dim=-1))
    image_embeds = torch.cat(image_embeds)
    sims = image_embeds @ text_embeds.t()
    return sims.topk(5, dim=1).indices.cpu()
""",
        # the output before training starts, kept once per network of a sweep (`if t == 0:`):
        # one per model, shown with low confidence only
        """
import torch
import torch.nn as nn
untrained = []
for width in widths:
    model = nn.Sequential(nn.Linear(2, width), nn.ReLU(), nn.Linear(width, 1)).to("cuda")
    optimizer = torch.optim.Adam(model.parameters())
    for t in range(1000):
        y_pred = model(X)
        if t == 0:
            untrained.append(y_pred.detach())
        loss = ((y_pred - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        # the output before training starts, kept once (`if t == 0:`), not every step
        """
import torch
import torch.nn as nn
snapshots = []
model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 1)).to("cuda")
optimizer = torch.optim.Adam(model.parameters())
for t in range(1000):
    y_pred = model(X)
    if t == 0:
        snapshots.append(y_pred.detach())
    loss = ((y_pred - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        # one loss per task of a meta-batch: backward() on it says it is a single number
        """
import torch

def outer_loop(model, adapt, tasks, device, optimizer):
    losses = []
    for support, query in tasks:
        local_model = adapt(model, support)
        loss, preds = local_model.evaluate(query[0].to(device), query[1].to(device))
        loss.backward()
        losses.append(loss.detach())
    optimizer.step()
    return sum(losses) / len(losses)
""",
        # a k-NN feature bank: stacked once, then searched on the device for every query batch
        """
import torch

@torch.no_grad()
def knn_accuracy(encoder, bank_loader, query_loader, device, k=5):
    embeddings, labels = [], []
    for x, y in bank_loader:
        embeddings.append(encoder(x.to(device)))
        labels.append(y.to(device))
    bank = torch.cat(embeddings)
    bank_labels = torch.cat(labels)
    correct = 0
    for qx, qy in query_loader:
        scores = encoder(qx.to(device)) @ bank.T
        nearest = bank_labels[scores.topk(k, dim=1).indices]
        correct += (nearest.mode(dim=1).values == qy.to(device)).sum().item()
    return correct / len(query_loader.dataset)
""",
        # Every list of the dict is emptied at the epoch's end, reached through items().
        """
import pytorch_lightning as pl
class Regressor(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.errors = {"abs": [], "sq": []}
    def validation_step(self, batch, batch_idx):
        x, y = batch
        out = self.net(x)
        self.errors["abs"].append((out - y).abs().flatten(1).mean(1))
        self.errors["sq"].append((out - y).pow(2).flatten(1).mean(1))
    def on_validation_epoch_end(self):
        for name, values in self.errors.items():
            self.log(name, torch.cat(values).mean())
            values.clear()
""",
        """
import torch

@torch.no_grad()
def evaluate(model, loader, device):
    preds, labels = [], []
    for x, y in loader:
        logits = model(x.to(device))
        preds.append(logits.cpu())
        labels.append(y)
    return torch.cat(preds), torch.cat(labels)
""",
        """
import torch

@torch.no_grad()
def evaluate(model, loader, device):
    preds_host = None
    for x, y in loader:
        logits = model(x.to(device)).cpu()
        preds_host = logits if preds_host is None else torch.cat([preds_host, logits])
    correct = []
    for x, y in loader:
        correct.append((model(x.to(device)).argmax(-1) == y.to(device)).sum().item())
    return preds_host, sum(correct)
""",
        """
import lightning.pytorch as pl
import torch

class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(32, 4)
        self.validation_step_outputs = []

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.validation_step_outputs.append({"preds": logits.argmax(-1), "labels": y})

    def on_validation_epoch_end(self):
        preds = torch.cat([o["preds"] for o in self.validation_step_outputs])
        self.validation_step_outputs.clear()
""",
        """
import lightning.pytorch as pl
import torch

class Denoiser(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(16, 16)
        self.samples = []

    def validation_step(self, batch, batch_idx):
        self.samples.append(self.net(batch))

class SampleLogger(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        trainer.logger.log_image("samples", torch.cat(pl_module.samples[:4]).cpu())
        pl_module.samples.clear()
""",
        """
import torch

def extract_features(model, loader, use_cuda):
    features = None
    for x, index in loader:
        feats = model(x.cuda()).cpu()
        if features is None:
            features = torch.zeros(len(loader.dataset), feats.shape[-1])
            if use_cuda:
                features = features.cuda()
        features[index] = feats if not use_cuda else feats.cuda()
    return features

@torch.no_grad()
def bank(model, loader):
    kept = []
    for x, _ in loader:
        feats = extract_features(model, [(x, None)], True)
        kept.append(feats)
    return kept
""",
        """
import torch
import torch.nn.functional as F

class ContrastiveLoss(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.labels = {}

    def forward(self, logits):
        device = logits.device
        if device not in self.labels:
            self.labels[device] = torch.arange(logits.shape[0], device=device)
        return F.cross_entropy(logits, self.labels[device])
""",
        """
import torch

@torch.no_grad()
def generate(model, ids, steps):
    for step in range(steps):
        next_id = model(ids)[:, -1].argmax(-1, keepdim=True)
        ids = torch.cat([ids, next_id], dim=1)
    return ids

def to_device(batch, device):
    for key in batch:
        batch[key] = batch[key].to(device)
    return batch
""",
        """
import torch

@torch.no_grad()
def sample(model, shape, device, num_timesteps, log_every=100):
    img = torch.randn(shape, device=device)
    intermediates = [img]
    for step in range(num_timesteps):
        img = model(img, step)
        if step % log_every == 0:
            intermediates.append(img)
    return img, intermediates
""",
        # a trainer subclass that replaces the evaluation loop with its own, which keeps only
        # host copies of the predicted ids: the Trainer's loop that would keep logits never runs
        """
import torch
from transformers import AutoModelForSeq2SeqLM, Seq2SeqTrainer, Seq2SeqTrainingArguments

class IdTrainer(Seq2SeqTrainer):
    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
        preds, labels = [], []
        for inputs in self.get_eval_dataloader(eval_dataset):
            _, logits, target = self.prediction_step(self.model, self._prepare_inputs(inputs), prediction_loss_only=False)
            preds.append(logits.argmax(-1).cpu())
            labels.append(target.cpu())
        return self.compute_metrics((torch.cat(preds).numpy(), torch.cat(labels).numpy()))

def main(eval_ds, accuracy):
    model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
    args = Seq2SeqTrainingArguments("out", per_device_eval_batch_size=64)
    print(IdTrainer(model=model, args=args, eval_dataset=eval_ds, compute_metrics=accuracy).evaluate())
""",
        # a Seq2SeqTrainer that generates for its metrics: it keeps token ids, not logits
        """
from transformers import AutoModelForSeq2SeqLM, Seq2SeqTrainer, Seq2SeqTrainingArguments

def main(train_ds, eval_ds, bleu):
    model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
    args = Seq2SeqTrainingArguments("out", eval_strategy="steps", predict_with_generate=True)
    Seq2SeqTrainer(model=model, args=args, train_dataset=train_ds, eval_dataset=eval_ds, compute_metrics=bleu).train()
""",
        # compute_metrics on an LM with the logits reduced first, or moved to the host every few
        # steps; on a classifier, whose logits are [batch, classes].
        """
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, Trainer, TrainingArguments

def accuracy(eval_pred):
    preds, labels = eval_pred
    return {"accuracy": float((preds == labels).mean())}

def main(train_ds, eval_ds):
    lm = AutoModelForCausalLM.from_pretrained("gpt2")
    args = TrainingArguments("out", eval_strategy="steps")
    Trainer(model=lm, args=args, eval_dataset=eval_ds, compute_metrics=accuracy,
            preprocess_logits_for_metrics=lambda logits, labels: logits.argmax(-1)).train()
    offloaded = TrainingArguments("out", eval_strategy="steps", eval_accumulation_steps=8)
    Trainer(model=lm, args=offloaded, eval_dataset=eval_ds, compute_metrics=accuracy).train()
    classifier = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
    Trainer(model=classifier, args=args, eval_dataset=eval_ds, compute_metrics=accuracy).train()
""",
        # A collector handed to a caller that fits on the device; a model run over the chunks of
        # one input, whose outputs end on the device together.
        """
import torch

@torch.no_grad()
def collect_logits(model, loader, device):
    logits, labels = [], []
    for x, y in loader:
        logits.append(model(x.to(device)))
        labels.append(y.to(device))
    return torch.cat(logits), torch.cat(labels)

def calibrate(model, loader, device):
    logits, labels = collect_logits(model, loader, device)
    temperature = torch.ones(1, device=device, requires_grad=True)
    optimizer = torch.optim.LBFGS([temperature])
    def closure():
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(logits / temperature, labels)
        loss.backward()
        return loss
    optimizer.step(closure)
    print("mean confidence", logits.softmax(1).amax(1).mean().item())
    return temperature

@torch.no_grad()
def embed_long(model, tokens, device):
    pieces = []
    for chunk in tokens.split(512, dim=1):
        pieces.append(model(chunk.to(device)))
    return torch.cat(pieces, dim=1)
""",
        # The collected embeddings are the function's result, returned through another name;
        # pairs collected again before they are returned (torch_geometric, accelerate's tests).
        """
import torch

@torch.no_grad()
def encode(model, loader, device):
    embs = []
    for batch in loader:
        emb = model(batch.to(device))
        embs.append(emb)
    out = torch.cat(embs, dim=0)
    return out

def generate_predictions(model, dataloader, device):
    logits_and_targets = []
    for x, y in dataloader:
        with torch.no_grad():
            logits_and_targets.append((model(x.to(device)), y.to(device)))
    logits, targs = [], []
    for logit, targ in logits_and_targets:
        logits.append(logit)
        targs.append(targ)
    logits, targs = torch.cat(logits), torch.cat(targs)
    return logits, targs
""",
        # Moved to a device parameter that defaults to the host, and no call passes another one
        # (torch_geometric's layer-wise inference, embedding_device="cpu").
        """
import torch

@torch.no_grad()
def layerwise(model, loader, device=None, embedding_device="cpu"):
    xs = []
    for batch in loader:
        x = model(batch.to(device))
        xs.append(x.to(embedding_device))
    torch.save(torch.cat(xs, dim=0), "emb.pt")
""",
        # Lightning before 2.0 keeps what the steps return for the evaluation epoch-end hooks, which
        # read the predicted classes and the labels: the epoch-level metric's own input (low).
        """
import pytorch_lightning as pl
import torch
import torch.nn.functional as F

class Tagger(pl.LightningModule):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.head = torch.nn.Linear(256, 5)

    def _common(self, batch):
        x, y = batch
        logits = self.head(self.backbone(x))
        out = {"loss": F.cross_entropy(logits, y)}
        out["pred"] = logits.argmax(-1)
        out["target"] = y
        return out

    def training_step(self, batch, batch_idx):
        return self._common(batch)

    def validation_step(self, batch, batch_idx):
        return self._common(batch)

    def validation_epoch_end(self, outputs):
        preds = torch.cat([o["pred"] for o in outputs])
        targets = torch.cat([o["target"] for o in outputs])
        self.log("val_acc", (preds == targets).float().mean())

    def test_step(self, batch, batch_idx):
        x, y = batch
        return {"pred": self.head(self.backbone(x)).argmax(-1), "target": y}

    def test_epoch_end(self, outputs):
        self.log("test_acc", torch.stack([(o["pred"] == o["target"]).float().mean() for o in outputs]).mean())
""",
        # An RL agent the module keeps returns Python ints (sampled actions), not device tensors
        """
from rl.agents import ActorCriticAgent
import pytorch_lightning as pl
import torch
import torch.nn as nn


class A2C(pl.LightningModule):
    def __init__(self, env):
        super().__init__()
        self.env = env
        self.net = nn.Linear(4, 2)
        self.agent = ActorCriticAgent(self.net)
        self.state = env.reset()
        self.batch_actions = []

    def train_batch(self):
        for _ in range(32):
            action = self.agent(self.state, self.device)[0]
            self.state, reward, done, _ = self.env.step(action)
            self.batch_actions.append(action)
        actions, self.batch_actions = self.batch_actions, []
        return actions
""",
        # Item embeddings gathered into a search index that every user batch queries: a bank kept on purpose
        """
import torch


class KNNIndex:
    def __init__(self, bank):
        self.bank = bank

    def search(self, queries, k):
        return (queries @ self.bank.t()).topk(k, dim=-1).indices


@torch.no_grad()
def test(model, item_loader, user_loader, device, k=20):
    model.eval()
    item_embs = []
    for batch in item_loader:
        item_embs.append(model.encode_items(batch.to(device)))
    index = KNNIndex(torch.cat(item_embs, dim=0))
    hits = 0
    for users, targets in user_loader:
        top = index.search(model.encode_users(users.to(device)), k)
        hits += (top == targets.to(device)[:, None]).any(-1).sum().item()
    return hits
""",
        # The rewards of one batch scored chunk by chunk: the inner loop walks the slices of the
        # batch the update loop draws afresh, and the list is rebuilt every update, so it holds
        # one batch's scores at most, which the update consumes right after
        """
import torch


def collect_and_update(agent, reward_model, batches, num_updates, batch_size, chunk_size):
    reward_model = reward_model.cuda().eval()
    for update in range(num_updates):
        batch = next(batches).cuda()
        rewards = []
        for start in range(0, batch_size, chunk_size):
            with torch.no_grad():
                rewards.append(reward_model(batch[start : start + chunk_size]))
        agent.update(batch, torch.cat(rewards))
""",
    )
    INVALID = (
        # a classifier of the file returns its encoder's hidden states next to the logits, and a
        # Trainer with compute_metrics keeps every evaluation batch's outputs on the device
        """
import torch.nn as nn
from transformers import AutoModel, Trainer, TrainingArguments
from transformers.modeling_outputs import SequenceClassifierOutput

class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = AutoModel.from_pretrained("bert-base-uncased")
        self.head = nn.Linear(768, 4)

    def forward(self, input_ids, attention_mask, labels=None):
        enc = self.encoder(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        logits = self.head(enc.last_hidden_state[:, 0])
        loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return SequenceClassifierOutput(loss=loss, logits=logits, hidden_states=enc.hidden_states)  # expect: LL202

def main(train_ds, eval_ds, accuracy):
    trainer = Trainer(model=Classifier(), args=TrainingArguments("out"), train_dataset=train_ds, eval_dataset=eval_ds, compute_metrics=accuracy)
    trainer.train()
""",
        # a logging helper keeps a slice of every step's codes in the dict its caller hands it,
        # made before the training loop and never emptied
        """
from collections import defaultdict
import torch

def log_step(logs, codes, loss):
    logs["loss"].append(loss.item())
    logs["codes"].append(codes.detach()[::8])  # expect: LL202

def train(model, loader, optimizer, epochs=10):
    logs = defaultdict(list)
    for epoch in range(epochs):
        for x in loader:
            codes, recon = model(x.cuda())
            loss = (recon - x.cuda()).square().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            log_step(logs, codes, loss)
    return logs
""",
        # Lightning before 2.0 keeps every validation batch's returned images for the epoch-end
        # hook, which logs a few from the first batch only
        """
import pytorch_lightning as pl
import torch
import torch.nn.functional as F

class Denoiser(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def validation_step(self, batch, batch_idx):
        noisy, clean = batch
        restored = self.net(noisy)
        return {"val_loss": F.mse_loss(restored, clean), "noisy": noisy}  # expect: LL202

    def validation_epoch_end(self, outputs):
        self.log("val/loss", torch.stack([o["val_loss"] for o in outputs]).mean())
        self.logger.experiment.add_images("val/noisy", outputs[0]["noisy"][:4].cpu(), self.current_epoch)
""",
        # a token classifier built to return every layer's hidden states, evaluated by a Trainer
        # with compute_metrics: each evaluation batch keeps all of them on the device
        """
from transformers import AutoModelForTokenClassification, Trainer, TrainingArguments


def tag_accuracy(pred):
    logits = pred.predictions[0] if isinstance(pred.predictions, tuple) else pred.predictions
    return {"acc": float((logits.argmax(-1) == pred.label_ids).mean())}


def finetune(train_ds, eval_ds):
    tagger = AutoModelForTokenClassification.from_pretrained("roberta-base", num_labels=9, output_hidden_states=True)  # expect: LL202
    args = TrainingArguments("ner-out", eval_strategy="epoch", per_device_eval_batch_size=32)
    Trainer(model=tagger, args=args, train_dataset=train_ds, eval_dataset=eval_ds, compute_metrics=tag_accuracy).train()
""",
        # a retrieval index built by walking the passages in chunks (no DataLoader, no loop name
        # that says "batch"): each chunk's vectors stay on the device until the whole corpus is done
        """
import torch


class PassageIndex:
    def __init__(self, encoder, device="cuda"):
        self.encoder = encoder.to(device)
        self.encoder.eval()
        self.device = device

    @torch.no_grad()
    def build(self, token_ids, path, width=512):
        rows = []
        for first in range(0, token_ids.shape[0], width):
            part = token_ids[first:first + width].to(self.device)
            rows.append(self.encoder(part).mean(dim=1))  # expect: LL202
        torch.save(torch.cat(rows).cpu(), path)
""",
        # a sampler that feeds the model's output back into it keeps every intermediate image on
        # the device (a denoising trajectory for a figure)
        """
import torch


@torch.no_grad()
def trajectory(denoiser, shape, timesteps, device="cuda"):
    denoiser.eval()
    x = torch.randn(shape, device=device)
    frames = []
    for t in reversed(timesteps):
        x = x - 0.1 * denoiser(x, torch.full((shape[0],), t, device=device))
        frames.append(x)  # expect: LL202
    torch.save(torch.stack(frames).cpu(), "trajectory.pt")
""",
        # an evaluate override that logs around the Trainer's own loop (super().evaluate): the
        # logits are still kept; predict_with_generate means nothing to a plain Trainer
        """
from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, Seq2SeqTrainingArguments, Trainer, TrainingArguments

class LoggingTrainer(Trainer):
    def evaluate(self, *args, **kwargs):
        metrics = super().evaluate(*args, **kwargs)
        print(metrics)
        return metrics

def main(train_ds, eval_ds, accuracy):
    lm = AutoModelForCausalLM.from_pretrained("gpt2")
    LoggingTrainer(model=lm, args=TrainingArguments("out"), eval_dataset=eval_ds, compute_metrics=accuracy).train()  # expect: LL202
    t5 = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
    args = Seq2SeqTrainingArguments("out", predict_with_generate=True)
    Trainer(model=t5, args=args, train_dataset=train_ds, eval_dataset=eval_ds, compute_metrics=accuracy).train()  # expect: LL202
""",
        # the pooling helper called with keywords: still the model's output
        """
import torch

class Encoder:
    def __init__(self, model):
        self.model = model.cuda().eval()

    def _pool(self, hidden, mask):
        return (hidden * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)

    @torch.no_grad()
    def encode(self, batches):
        vectors = []
        for ids, mask in batches:
            hidden = self.model(ids.cuda(), mask.cuda()).last_hidden_state
            vectors.append(self._pool(hidden=hidden, mask=mask.cuda()))  # expect: LL202
        return torch.cat(vectors).cpu()
""",
        # every batch's pooled embeddings kept on the device; the pooling is a helper of the
        # class (a masked mean over the tokens: one vector per text, a model output's size class)
        """
import torch

class TextEncoder:
    def __init__(self, model, device):
        self.model, self.device = model.to(device).eval(), device

    def _pool(self, hidden, mask):
        weights = mask.unsqueeze(-1).float()
        return (hidden * weights).sum(1) / weights.sum(1)

    @torch.no_grad()
    def encode(self, batches):
        vectors = []
        for ids, mask in batches:
            hidden = self.model(ids.to(self.device), mask.to(self.device)).last_hidden_state
            vectors.append(self._pool(hidden, mask.to(self.device)))  # expect: LL202
        return torch.cat(vectors).cpu()
""",
        # an embedder object whose __call__ gathers every batch's output on the device, called
        # by a script that only ever moves the result to the host: kept there for nothing
        """
import torch

class Embedder:
    def __init__(self, model, device):
        self.model, self.device = model.to(device).eval(), device

    @torch.no_grad()
    def __call__(self, batches):
        kept = []
        for batch in batches:
            kept.append(self.model(batch.to(self.device)))  # expect: LL202
        return torch.cat(kept)

embed = Embedder(torch.nn.Linear(8, 256), "cuda")
vectors = embed([torch.randn(4, 8) for _ in range(1000)])
torch.save(vectors.cpu(), "vectors.pt")
""",
        # a prediction callback keeps every batch's outputs and inputs on the device for the whole
        # prediction run (emptied only when the next run starts): Lightning's own predict loop
        # moves each result to the CPU for that reason
        """
import lightning.pytorch as pl
import torch

class KeepPredictions(pl.Callback):
    def on_predict_epoch_start(self, trainer, pl_module):
        self.preds, self.inputs = [], []

    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        features, _ = batch
        self.preds.append(outputs)  # expect: LL202
        self.inputs.append(features)  # expect: LL202

    def merged(self):
        return torch.cat(self.preds), torch.cat(self.inputs)
""",
        # a bank multiplied whole every epoch but never emptied: it grows for the whole run
        """
import torch
import torch.nn.functional as F

@torch.no_grad()
def monitor(model, loader, queries, epochs, device):
    bank = []
    for epoch in range(epochs):
        for images in loader:
            bank.append(F.normalize(model(images.to(device)), dim=-1))  # expect: LL202
        sims = torch.cat(bank) @ queries.t()
        print(epoch, sims.max().item())
""",
        # Every frame's prediction kept on the device, then written out one by one: the later
        # loop walks the collection once (unlike a bank searched for each query batch)
        """
import torch

@torch.no_grad()
def segment_sequence(model, frames, out_dir):
    preds = []
    for frame in frames:
        preds.append(model(frame.cuda()).softmax(1))  # expect: LL202
    for i, prob in enumerate(preds):
        save_mask(prob.argmax(1)[0].cpu().numpy(), f"{out_dir}/{i:05d}.png")
""",
        # Every timestep's image kept, but handed back only when a flag asks for it: by default
        # the caller gets the last image and the list piled up for nothing.
        """
import torch

@torch.inference_mode()
def sample_loop(model, shape, steps, device, return_all_timesteps=False):
    img = torch.randn(shape, device=device)
    imgs = [img]
    for t in reversed(range(steps)):
        img = model(img, t)
        imgs.append(img)  # expect: LL202
    ret = img if not return_all_timesteps else torch.stack(imgs, dim=1)
    return ret
""",
        # The same function, but a caller asks for the embeddings on the GPU.
        """
import torch

@torch.no_grad()
def layerwise(model, loader, device=None, embedding_device="cpu"):
    xs = []
    for batch in loader:
        x = model(batch.to(device))
        xs.append(x.to(embedding_device))  # expect: LL202
    torch.save(torch.cat(xs, dim=0), "emb.pt")

def main(model, loader):
    layerwise(model, loader, "cuda", embedding_device="cuda")
""",
        """
import torch

def train(model, loader, optimizer, device, epochs):
    seen_outputs, history = [], []
    for epoch in range(epochs):
        for x, y in loader:
            out = model(x.to(device))
            out.sum().backward()
            optimizer.step()
            seen_outputs.append(out.detach())  # expect: LL202
        history.append(torch.stack(seen_outputs[-10:]).mean())
    return history
""",
        """
import torch

@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    all_logits, all_labels = [], []
    for x, y in loader:
        logits = model(x.to(device))
        all_logits.append(logits.softmax(-1))  # expect: LL202
        all_labels.append(y.to(device))  # expect: LL202
    probs = torch.cat(all_logits).cpu().numpy()
    return probs, torch.cat(all_labels).cpu().numpy()
""",
        """
import torch

def predict(model, loader, device):
    preds = None
    with torch.inference_mode():
        for batch in loader:
            out = model(batch["input_ids"].to(device)).logits
            preds = out if preds is None else torch.cat([preds, out])  # expect: LL202
    return preds.argmax(-1).tolist()
""",
        """
import lightning.pytorch as pl
import torch

class Tagger(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(32, 4)
        self.test_outputs = []

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.test_outputs.append({"preds": self.net(x).argmax(-1), "labels": y})  # expect: LL202

    def on_test_epoch_end(self):
        preds = torch.cat([o["preds"] for o in self.test_outputs])
        self.log("acc", (preds == torch.cat([o["labels"] for o in self.test_outputs])).float().mean())
""",
        """
import pytorch_lightning as pl
import torch.nn.functional as F

class Mnist(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        return {"loss": loss, "preds": logits.argmax(-1).detach(), "targets": y}  # expect: LL202

    def training_epoch_end(self, outputs):
        pass
""",
        """
import torch
from transformers import Trainer

class EvalTrainer(Trainer):
    def evaluate_all(self, dataset):
        logits_list = []
        for inputs in self.get_eval_dataloader(dataset):
            _, logits, _ = self.prediction_step(self.model, self._prepare_inputs(inputs), prediction_loss_only=False)
            logits_list.append(logits)  # expect: LL202
        return torch.cat(logits_list).float().cpu().numpy()
""",
        # compute_metrics on an encoder-decoder LM scored from its logits (no generation)
        """
from transformers import AutoModelForSeq2SeqLM, Seq2SeqTrainer, Seq2SeqTrainingArguments

def bleu(eval_pred):
    logits, labels = eval_pred
    return {"bleu": corpus_bleu(logits[0].argmax(-1), labels)}

def main(train_ds, eval_ds):
    model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
    args = Seq2SeqTrainingArguments("out", eval_strategy="steps", eval_steps=1000)
    Seq2SeqTrainer(model=model, args=args, train_dataset=train_ds, eval_dataset=eval_ds, compute_metrics=bleu).train()  # expect: LL202
""",
        # compute_metrics on a causal LM, nothing shrinking the logits.
        """
import numpy as np
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

def accuracy(eval_pred):
    logits, labels = eval_pred
    return {"accuracy": float((logits.argmax(-1)[:, :-1] == labels[:, 1:]).mean())}

def main(train_ds, eval_ds):
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    args = TrainingArguments("out", eval_strategy="steps", eval_steps=500)
    trainer = Trainer(model=model, args=args, train_dataset=train_ds, eval_dataset=eval_ds, compute_metrics=accuracy)  # expect: LL202
    trainer.train()
""",
        # A collector whose only caller moves what it returns to the host; the frames of a video
        # run one by one, all kept on the device, then written out one by one from the host.
        """
import torch

@torch.no_grad()
def embed_all(model, loader, device):
    embeddings = []
    for x, _ in loader:
        embeddings.append(model(x.to(device)))  # expect: LL202
    return embeddings

def export(model, loader, device, path):
    embeddings = embed_all(model, loader, device)
    torch.save(torch.cat(embeddings).cpu(), path)

@torch.no_grad()
def segment_video(model, frames, device):
    masks = []
    for frame in frames:
        masks.append(model(frame.to(device)).softmax(1))  # expect: LL202
    return [mask.argmax(1).cpu().numpy() for mask in masks]
""",
        # A helper given the batch's items builds the dict test_step returns; test_epoch_end reads
        # only "mse", so every batch's noisy inputs stay on the device until the epoch ends.
        """
import pytorch_lightning as pl
import torch

class Restorer(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def _evaluate(self, noisy, clean):
        restored = self.net(noisy)
        result = {"mse": ((restored - clean) ** 2).flatten(1).mean(1)}
        result["noisy"] = noisy  # expect: LL202
        return result

    def test_step(self, batch, batch_idx):
        return self._evaluate(*batch)

    def test_epoch_end(self, outputs):
        self.log("test_mse", torch.cat([o["mse"] for o in outputs]).mean())
""",
        # The step returns what a helper computed from the batch's images: the embeddings, a model's
        # whole output, which validation_epoch_end reads after every batch's have piled up.
        """
import pytorch_lightning as pl
import torch
import torch.nn.functional as F

class Embedder(pl.LightningModule):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def _embed(self, images, labels):
        return {"emb": F.normalize(self.encoder(images), dim=1), "label": labels}  # expect: LL202

    def validation_step(self, batch, batch_idx):
        images, labels = batch
        out = self._embed(images, labels)
        return out

    def validation_epoch_end(self, outputs):
        emb = torch.cat([o["emb"] for o in outputs])
        labels = torch.cat([o["label"] for o in outputs])
        self.log("recall_at_1", recall_at_1(emb, labels))
""",
        # Chunks of a whole data set bound before the loop (not of one batch of an outer loop):
        # every chunk's embeddings pile up on the device until the loop ends
        """
import torch


@torch.no_grad()
def embed_corpus(encoder, token_ids, batch_size=64):
    encoder = encoder.cuda().eval()
    vectors = []
    for start in range(0, token_ids.shape[0], batch_size):
        vectors.append(encoder(token_ids[start : start + batch_size].cuda()))  # expect: LL202
    return torch.cat(vectors).cpu().numpy()
""",
        # chunks of one batch, but the list outlives the batch (every update's chunks are kept),
        # and chunks of a whole corpus that the loop around loads from each file
        """
import torch


@torch.no_grad()
def collect_all(reward_model, batches, num_updates, batch_size, chunk_size):
    rewards = []
    for update in range(num_updates):
        batch = next(batches).cuda()
        for start in range(0, batch_size, chunk_size):
            rewards.append(reward_model(batch[start : start + chunk_size]))  # expect: LL202
    return torch.cat(rewards).cpu()


@torch.no_grad()
def embed_files(encoder, paths, batch_size=64):
    encoder = encoder.cuda().eval()
    for path in paths:
        token_ids = torch.load(path)
        vectors = []
        for start in range(0, token_ids.shape[0], batch_size):
            vectors.append(encoder(token_ids[start : start + batch_size].cuda()))  # expect: LL202
        torch.save(torch.cat(vectors).cpu(), path + ".vec")
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """An evaluation loop under no_grad that keeps every batch's logits (on the device) for an
        accuracy at the end, vs one that keeps the predicted classes as Python numbers."""

        def setup(self, ctx):
            import torch
            torch.manual_seed(0)
            ctx.model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1000)).to(ctx.device)
            ctx.x = torch.randn(64, 64, device=ctx.device)
            ctx.kept = []

        def leaky(self, ctx):
            import torch
            with torch.no_grad():
                ctx.kept.append(ctx.model(ctx.x))

        def fixed(self, ctx):
            import torch
            with torch.no_grad():
                ctx.kept.extend(ctx.model(ctx.x).argmax(-1).tolist())


# --- detection ------------------------------------------------------------------------------------
#: Tensor methods that reduce a tensor to one number when called without a dimension.
_REDUCTIONS = frozenset({"mean", "sum", "norm", "std", "var", "prod", "max", "min", "amax", "amin", "logsumexp", "nansum", "nanmean", "item"})
#: Methods that keep the size class of their receiver (a copy, a view, a cast, a move).
_SAME_SIZE_METHODS = frozenset(
    {"float", "double", "half", "bfloat16", "detach", "clone", "to", "cuda", "contiguous", "view", "reshape",
     "squeeze", "unsqueeze", "flatten", "permute", "transpose", "type", "type_as", "view_as", "expand"}
)
#: Elementwise tensor methods and torch functions: the result is as big as the input.
_ELEMENTWISE = frozenset(
    {"softmax", "log_softmax", "sigmoid", "tanh", "relu", "gelu", "exp", "log", "abs", "neg", "clamp", "clip",
     "normalize", "round", "sqrt", "square", "pow", "mul", "add", "sub", "div", "float", "half", "t", "flip", "roll",
     "interpolate", "pad", "nan_to_num", "masked_fill", "where"}
)
_CONCATENATING = frozenset({"cat", "concat", "concatenate", "stack", "vstack", "hstack"})
#: Calls that list files on disk: a loop over them runs over a data set.
_FILE_LISTINGS = frozenset({"glob.glob", "glob.iglob", "os.listdir", "os.scandir", "os.walk"})
_FILE_LISTING_METHODS = frozenset({"glob", "rglob", "iterdir"})

#: How big what a store keeps is, per batch: one number; a small tensor per sample (an index, a
#: comparison, a reduction over a dimension); or more (outputs, features, the batch's tensors).
SCALAR, INDEX, FULL = 0, 1, 2


@dataclass
class _Candidate:
    """A statement that keeps device tensors, before its confidence is settled."""

    fact: StatementFact
    store: Store
    #: The loop (or, for a list on ``self``, the list) whose run the tensors pile up over.
    group: object
    size: int
    #: It keeps what a model returned (through elementwise, view or pooling operations), not only
    #: the batch's own tensors, indices or numbers.
    from_model: bool
    #: Decided already (HIGH: grows for the whole run); None: settled by the group.
    confidence: Confidence | None
    message: str
    help: str
    #: Low confidence whatever is kept: a periodic store (``if step % k == 0``), a sample of the
    #: run; or a collector that returns what it kept on the device, where its caller wants it.
    sampled: bool = False


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    resets = facts.derived(_reset_attributes)
    candidates: list[_Candidate] = []
    for fact in facts.statements():
        if fact.function.name == "__init__":
            continue  # builds one object's contents, once
        for store in stores(fact.node, facts.imports):
            candidate = _candidate(facts, fact, store, resets)
            if candidate is not None:
                candidates.append(candidate)
                break
    # A run that keeps a model's full outputs keeps the batch tensors stored next to them (the
    # labels) for as long: they are reported with it. Alone, indices and labels are small.
    big = {c.group for c in candidates if c.from_model}
    for candidate in candidates:
        confidence = candidate.confidence
        if confidence is None:
            confidence = Confidence.MEDIUM if candidate.group in big and candidate.size is not SCALAR else Confidence.LOW
            if candidate.sampled:
                confidence = Confidence.LOW
        yield Violation(
            node=candidate.fact.node,
            message=candidate.message,
            confidence=confidence,
            help=candidate.help,
            statement=candidate.fact.line,
        )
    yield from _lightning_returns(facts)
    yield from _trainer_keeps_logits(facts)


def _candidate(facts: ModuleFacts, fact: StatementFact, store: Store, resets: frozenset[str]) -> _Candidate | None:
    value = facts.value(store.value)
    if not on_accelerator(value):
        return None
    if value.is_graph and value.confidence is not Confidence.LOW:
        return None  # a graph kept: LL102's finding, which frees more than the device copy
    if overwrites(facts, fact, store):
        return None
    what = facts.describe(store.value)
    size = _size(facts, fact, store.value)
    from_model = any(_model_output(facts, fact.function, part) for part in _parts(facts, store.value))
    moved = _moved(facts, store.value)
    lifetime = facts.lifetime(fact, store.container)
    if lifetime.outlives_call and store.container.startswith("self."):
        if not _runs_per_step(facts, fact):
            return None
        if _leaf(store.container) not in resets:
            # A list grows with every call; a dict only with every new key, which may come back
            # (a cache per device or per shape, the cache-growth family): low confidence.
            return _Candidate(
                fact, store, fact.function.node or fact.node, size, from_model,
                Confidence.LOW if store.kind == "item" else Confidence.HIGH,
                f"'{what}' is a tensor on the accelerator, kept in '{store.container}' on every call of "
                f"'{fact.function.name}', and nothing ever empties '{store.container}': device memory grows for the whole run",
                f"keep {moved} instead, and empty '{store.container}' where it is used (e.g. .clear() at the epoch's end)",
            )
        if is_lightning_predict_hook(fact.function, facts.imports) and not _emptied_in(fact.function, store.container):
            # Emptied once per prediction run: the run goes over a whole data set, whose outputs
            # Lightning's own predict loop moves to the CPU (PR 9085). Full outputs (and the
            # batch tensors kept beside them in the same hook) are reported.
            return _Candidate(
                fact, store, fact.function.node or fact.node, size, from_model, None,
                f"'{what}' is a tensor on the accelerator, kept in '{store.container}' on every call of "
                f"'{fact.function.name}' for the whole prediction run: device memory grows with every batch of the data set",
                f"keep {moved} instead (Lightning's own predict loop moves every result to the CPU)",
            )
        # Emptied once per epoch (``on_validation_epoch_end``): Lightning's own pattern for
        # epoch-level metrics, bounded by one epoch, kept for a reason. Shown at low confidence.
        return _Candidate(
            fact, store, _group_of_attribute(store.container, fact), size, from_model, Confidence.LOW,
            f"'{what}' is a tensor on the accelerator, kept in '{store.container}' on every call of "
            f"'{fact.function.name}' until '{store.container}' is emptied: device memory grows with every step until then",
            f"keep {moved} instead (or only the numbers the epoch's end needs)",
        )
    if lifetime.consumed_by_backward:
        return None
    kept_by_caller = _callers_keep_across_steps(facts, fact.function, store.container)
    if kept_by_caller is not None:
        call, loop = kept_by_caller
        return _Candidate(
            fact, store, loop.node, size, from_model, Confidence.LOW if size is SCALAR else Confidence.MEDIUM,
            f"'{what}' is a tensor on the accelerator, kept in '{store.container}' on every call of "
            f"'{fact.function.name}', and the call at line {facts.line_of(call)} hands it a container that outlives every "
            f"iteration of the loop at line {facts.line_of(loop.node)}: device memory grows with every iteration",
            f"keep {moved} (or the numbers you need, with .item() / .tolist())",
        )
    once = _once_per_loop(facts, fact)
    loops = [
        loop for loop in lifetime.carried_by
        if _runs_over_inputs(loop, facts, fact.function) and loop.node not in once and not _walks_parts_of_item(fact, loop, lifetime.carried_by)
    ]
    if not loops:
        # A loop over items the model runs on one by one (the frames of a video, the crops of an
        # image, the texts of a list): bounded, often meant to end on the device together, unless
        # the code after it moves them to the host piece by piece anyway.
        loops = [
            loop for loop in lifetime.carried_by
            if loop.runs_model_on_items and takes_to_host(facts, fact.function, frozenset({store.container}), outside=loop.node)
        ]
    if not loops or (store.kind == "concat" and _fed_back(facts, loops[0], store.container)):
        return None
    if _searched_later(facts, fact, store.container, loops[-1], whole_products=len(lifetime.carried_by) == 1):
        return None
    if _empties(loops[0].node.body, store.container):  # type: ignore[attr-defined]
        # flushed inside the loop (`if len(buf) >= 50: save(buf); buf.clear()`): a window of a
        # few iterations, not the whole run
        return _Candidate(
            fact, store, loops[0].node, size, from_model, Confidence.LOW,
            f"'{what}' is a tensor on the accelerator, kept in '{store.container}' until the loop at line "
            f"{facts.line_of(loops[0].node)} empties it: device memory holds every iteration's tensors in between",
            f"keep {moved} (or the numbers you need, with .item() / .tolist())",
        )
    if once and all(builds_a_model(facts, loop) for loop in loops):
        # `if t == 0:` inside the training loop of a sweep that builds a model per iteration:
        # one value per trained model, a handful, kept for the comparison after the sweep.
        return _Candidate(
            fact, store, loops[-1].node, size, from_model, Confidence.LOW,
            f"'{what}' is a tensor on the accelerator, kept in '{store.container}' once per model the loop at line "
            f"{facts.line_of(loops[-1].node)} builds: device memory grows by one per model",
            f"keep {moved} (or the numbers you need, with .item() / .tolist())",
        )
    line = facts.line_of(loops[-1].node)
    where = f"the loop at line {line}" if line is not None else "the loop"
    help = f"keep {moved} (or the numbers you need, with .item() / .tolist())"
    epochs = [loop for loop in lifetime.carried_by if _repeats_data_loop(loop)]
    if loops[0].iterates_data and epochs:
        # Kept for every batch, and the list outlives the epoch loop around the data loop.
        batch_line, epoch_line = facts.line_of(loops[0].node), facts.line_of(epochs[-1].node)
        return _Candidate(
            fact, store, loops[-1].node, size, from_model, Confidence.HIGH,
            f"'{what}' is a tensor on the accelerator, kept in '{store.container}' for every batch of the loop at "
            f"line {batch_line}, and '{store.container}' is never emptied between the epochs of the loop at line "
            f"{epoch_line}: device memory grows for the whole run",
            help,
        )
    return _Candidate(
        fact, store, loops[-1].node, size, from_model, None,
        f"'{what}' is a tensor on the accelerator, kept in '{store.container}' for every iteration of {where}: "
        "device memory grows with every iteration until the loop ends",
        help,
        sampled=_periodic(facts, fact) or _handed_to_caller(facts, fact, store.container),
    )


def _searched_later(facts: ModuleFacts, fact: StatementFact, container: str, loop: LoopInfo, *, whole_products: bool = True) -> bool:
    """The collected tensors, stacked after the loop, are read whole on every iteration of a
    later loop of the same function: a feature bank searched for each query batch (k-NN
    evaluation), the working set of an algorithm that needs it on the device, not results piling
    up for the host. A later loop that walks the collection item by item consumes it instead."""
    start = facts.line_of(loop.node) or 0
    around = {outer.node for outer in fact.loops}  # the collecting loop and the loops around it
    after = [other for other in facts.index.statements_of(fact.function) if (facts.line_of(other.node) or 0) > start]
    kept = {container}
    for other in after:  # bank = torch.cat(embeddings), in the order the function runs
        node = other.node
        if isinstance(node, cst.Assign) and not other.loops[len(fact.loops) - 1 :] and (
            _keeps(node.value, kept, facts) or _built_over(node.value, kept, facts)
        ):
            kept.update(name for target in node.targets for name in bound_names(target.target))
    if whole_products and any(_multiplies_whole(other.node, kept, facts) for other in after if not other.loops[len(fact.loops) - 1 :]):
        # `sims = bank @ text_bank.t()`: all-pairs scores over the whole bank, on the device (not
        # when an outer loop carries the bank too: then it grows epoch after epoch)
        return True
    for other in after:
        if not other.loops or other.loops[-1].node in around:
            continue  # not in a loop of its own after the collecting one (an epoch loop around both is not)
        later = other.loops[-1].node
        if isinstance(later, cst.For) and kept & names_read(later.iter):
            continue  # ``for prob in all_preds:``: walks the collection itself, once (writing it out)
        if _reads_whole(other.node, kept):
            return True
    return False


def _built_over(expr: cst.BaseExpression, kept: set[str], facts: ModuleFacts) -> bool:
    """``MIPSKNNIndex(bank)``, ``faiss_index(bank)``: an object built over the kept tensors (a
    search index), which holds them on the device for the searches that follow."""
    return isinstance(expr, cst.Call) and any(arg.keyword is None and _keeps(arg.value, kept, facts) for arg in expr.args)


#: torch functions that multiply whole matrices (or compare every pair of rows).
_MATRIX_PRODUCTS = frozenset({"torch.mm", "torch.matmul", "torch.bmm", "torch.einsum", "torch.cdist", "torch.cosine_similarity"})


def _multiplies_whole(node: cst.CSTNode, kept: set[str], facts: ModuleFacts) -> bool:
    """``node`` takes a matrix product of a kept bank as a whole with something else
    (``bank @ other.t()``, ``torch.mm(bank, other)``): a computation over all of it at once."""
    for current in walk(node, into=not_into_scopes):
        if isinstance(current, cst.BinaryOperation) and isinstance(current.operator, cst.MatrixMultiply):
            if _reads_whole(current.left, kept) or _reads_whole(current.right, kept):
                return True
        elif isinstance(current, cst.Call) and facts.imports.resolve(current.func) in _MATRIX_PRODUCTS:
            if any(_reads_whole(arg.value, kept) for arg in current.args):
                return True
    return False


def _reads_whole(node: cst.CSTNode, names: set[str]) -> bool:
    """``node`` reads one of ``names`` as a whole (``scores @ bank.T``, ``knn(query, bank)``), not
    only one item of it (``bank[i]``: a walk over the collection, item by item)."""
    indexed: set[int] = set()
    for current in walk(node, into=not_into_scopes):
        if isinstance(current, cst.Subscript):
            indexed.add(id(current.value))
        elif isinstance(current, (cst.Name, cst.Attribute)) and id(current) not in indexed and dotted_name(current) in names:
            return True
    return False


def _emptied_in(function: FunctionInfo, container: str) -> bool:
    """The function itself empties or re-binds ``container`` (a flush every few batches)."""
    return function.node is not None and _empties(function.node.body, container)


def _empties(body: cst.CSTNode, container: str) -> bool:
    """Something in ``body`` (not in nested defs) empties or re-binds ``container``."""
    return any(
        isinstance(node, cst.BaseSmallStatement) and container in emptied(node) for node in walk(body, into=not_into_scopes)
    )


def _group_of_attribute(container: str, fact: StatementFact) -> object:
    """What fills one list on ``self`` piles up over the same epoch."""
    cls = fact.function.cls
    return (cls.node if cls is not None else fact.node, container)


def _fed_back(facts: ModuleFacts, loop: LoopInfo, container: str) -> bool:
    """A tensor grown by concatenation that the loop's model reads: the sequence a generation
    loop extends token by token (``ids = torch.cat([ids, next_id])``), its working state."""
    for other in facts.index.statements_in_loop(loop.node):
        for call in calls_in(other.node):
            if produces_model_output(facts, call, other.function) and any(container in names_read(arg.value) for arg in call.args):
                return True
    return False


def _runs_over_inputs(loop: LoopInfo, facts: ModuleFacts, function: FunctionInfo) -> bool:
    """A loop over a data source (a loader, a dataset, the files of a folder), over training
    steps or epochs, or over the steps of a sampler (a state stepped through a model, outside a
    module's forward): one iteration per input or per step."""
    return (
        loop.iterates_data or loop.contains_data_loop or loop.has_backward or loop.has_optimizer_step
        or loop.walks_input_in_chunks or (loop.steps_state and not function.runs_one_forward) or _iterates_files(loop, facts)
    )


def _walks_parts_of_item(fact: StatementFact, loop: LoopInfo, carried_by: Sequence[LoopInfo]) -> bool:
    """``for i in range(0, batch_size, mini_batch_size):`` whose counter only indexes the item a
    loop around it draws afresh every iteration (its own target, or ``batch = next(it)`` in the
    step loop: ``batch["ids"][i : i + mini_batch_size]``): it walks the parts of one outer
    iteration's item (the mini-batches of one batch), so what it keeps is bounded by that item,
    not by the data, as long as the list does not outlive the outer iteration too
    (``carried_by``: the loops the list lives across). Not a loop over a data source itself, nor
    one whose counter is read anywhere else (``model(x, t)``, ``data[i : i + n]`` over a whole data
    set bound before the loops), nor one over a whole data set the outer loop loads
    (``tokens = torch.load(path)``)."""
    node = loop.node
    if loop.iterates_data or loop.contains_data_loop or not isinstance(node, cst.For) or not isinstance(node.target, cst.Name):
        return False
    if not (isinstance(node.iter, cst.Call) and isinstance(node.iter.func, cst.Name) and node.iter.func.value == "range"):
        return False
    outer = fact.loops[: next((i for i, around in enumerate(fact.loops) if around is loop), 0)]
    if any(around in carried_by for around in outer):
        return False  # the list outlives the item: it gathers every outer iteration's parts
    items = set().union(*(_drawn_items(around) for around in outer)) - loop.rebound
    counter = node.target.value
    reads = {id(name) for name in walk(node.body, into=not_into_scopes) if isinstance(name, cst.Name) and name.value == counter}
    indexing: set[int] = set()
    for subscript in walk(node.body, into=not_into_scopes):
        if not isinstance(subscript, cst.Subscript):
            continue
        indexed = subscript.value
        while isinstance(indexed, cst.Subscript):
            indexed = indexed.value
        if dotted_name(indexed) in items:
            indexing.update(id(name) for element in subscript.slice for name in walk(element) if isinstance(name, cst.Name) and name.value == counter)
    return bool(reads) and reads <= indexing


def _drawn_items(loop: LoopInfo) -> set[str]:
    """The names ``loop`` draws a new item into each iteration: its target (``for batch in
    loader``) and names bound from ``next(...)`` in its body (``batch = next(data_iter)``, also
    moved: ``next(data_iter).cuda()``)."""
    header = loop.node
    names = set(bound_names(header.target)) if isinstance(header, cst.For) else set()
    for node in walk(header.body, into=not_into_scopes):
        if not isinstance(node, cst.Assign):
            continue
        value = node.value
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            value = value.func.value  # next(it).cuda().float()
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "next":
            names |= {name for target in node.targets for name in bound_names(target.target)}
    return names


def _iterates_files(loop: LoopInfo, facts: ModuleFacts) -> bool:
    header = loop.node
    if not isinstance(header, cst.For):
        return False
    for call in calls_in(header.iter):
        if facts.imports.resolve(call.func) in _FILE_LISTINGS:
            return True
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _FILE_LISTING_METHODS:
            return True
    return False


def _repeats_data_loop(loop: LoopInfo) -> bool:
    """An epoch loop: it counts (``range(epochs)``, ``while``) and runs a data loop inside each iteration."""
    return loop.contains_data_loop and not loop.iterates_data and is_counter_loop(loop.node)


def _callers_keep_across_steps(facts: ModuleFacts, function: FunctionInfo, container: str) -> tuple[cst.Call, LoopInfo] | None:
    """``log_metrics(logs, z)`` in a training loop, where ``log_metrics`` appends to its parameter
    ``logs``: the caller's container is bound before a loop over the data that makes the call and
    is neither rebound nor emptied in it, so what the helper keeps there outlives every step. A
    call and that loop, when every call of the file is such a call (and there is one)."""
    if function.node is None or container not in function.params or function.may_be_called_by_base:
        return None
    sites = call_graph(facts).sites_of(function)
    skip = 1 if function.is_method and is_bound_to_object(function.node) else 0
    found = None
    for call, fact in sites:
        passed = [arg.value for arg in call.args if parameter_for(function.node, call, arg, skip) == container]
        if len(passed) != 1 or type(passed[0]) is not cst.Name:
            return None
        name = passed[0].value  # type: ignore[attr-defined]
        loops = [
            loop for loop in fact.loops
            if loop.iterates_data and name not in loop.rebound and not _empties(loop.node.body, name)  # type: ignore[attr-defined]
        ]
        if not loops:
            return None
        found = found or (call, loops[-1])
    return found


def _runs_per_step(facts: ModuleFacts, fact: StatementFact) -> bool:
    """The function runs once per batch: a framework's step hook, or called per step here."""
    function = fact.function
    return function.runs_per_step or is_per_step_hook(function) or function in per_step_functions(facts)


def _handed_to_caller(facts: ModuleFacts, fact: StatementFact, container: str) -> bool:
    """Every ``return`` that reads ``container`` hands it (or its concatenation) to the caller
    still on the device: the function collects outputs for its caller, who decides where they
    live (a temperature fit may need them all on the device). A return that moves them to the host
    (``torch.cat(preds).cpu().numpy()``) shows they did not have to pile up on the device."""
    carried = _carried_names(facts, fact.function, container)
    returns = [
        other.node.value
        for other in facts.index.statements_of(fact.function)
        if isinstance(other.node, cst.Return) and other.node.value is not None
        and (container in names_read(other.node.value) or _keeps(other.node.value, carried, facts))
    ]
    return bool(returns) and not any(_to_host(value) for value in returns) and not callers_take_to_host(facts, fact.function)


def _carried_names(facts: ModuleFacts, function: FunctionInfo, container: str) -> set[str]:
    """``container`` and the names of ``function`` that hold its tensors themselves: bound to it
    or its concatenation (``out = torch.cat(embs)``, ``out = out[:0] if empty else out``), the
    targets of a loop over it (``for logit, y in pairs``) and the containers those are collected
    into again (``logits.append(logit)``). Not what is computed from them (a metric, an argmax)."""
    carried = {container}
    statements = facts.index.statements_of(function)
    headers = {loop.node for other in statements for loop in other.loops if isinstance(loop.node, cst.For)}
    changed = True
    while changed:
        changed = False
        found: set[str] = set()
        for other in statements:
            node = other.node
            if isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None:
                targets = [target.target for target in node.targets] if isinstance(node, cst.Assign) else [node.target]
                for target in targets:
                    found.update(_bound_to_kept(target, node.value, carried, facts))
            found.update(store.container for store in stores(node, facts.imports) if _keeps(store.value, carried, facts))
        for header in headers:
            iterated = inner_iterable(header.iter)  # type: ignore[attr-defined]
            while isinstance(iterated, cst.Call) and dotted_name(iterated.func) == "zip" and iterated.args:
                iterated = inner_iterable(iterated.args[0].value)  # zip(kept, labels): the first one's items
            if _keeps(iterated, carried, facts):
                found.update(bound_names(header.target))  # type: ignore[attr-defined]
        if found - carried:
            carried |= found
            changed = True
    return carried


def _bound_to_kept(target: cst.BaseExpression, value: cst.BaseExpression, carried: set[str], facts: ModuleFacts) -> set[str]:
    """The names ``target = value`` binds to kept tensors (element by element for ``a, b = x, y``)."""
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) and len(target.elements) == len(value.elements):
        found: set[str] = set()
        for left, right in zip(target.elements, value.elements):
            found |= _bound_to_kept(left.value, right.value, carried, facts)
        return found
    return set(bound_names(target)) if _keeps(value, carried, facts) else set()


def _keeps(expr: cst.BaseExpression, carried: set[str], facts: ModuleFacts) -> bool:
    """``expr`` is (or holds) the kept tensors themselves, still on the device: a carried name,
    their concatenation, a slice, a tuple or list of them, a conditional whose both choices are."""
    if isinstance(expr, (cst.Name, cst.Attribute)):
        return dotted_name(expr) in carried
    if isinstance(expr, (cst.Tuple, cst.List)):
        return any(_keeps(element.value, carried, facts) for element in expr.elements)
    if isinstance(expr, cst.IfExp):
        # both ways: ``img if not return_all_timesteps else torch.stack(imgs)`` hands the caller
        # the last image by default, and the list piled up for nothing
        return _keeps(expr.body, carried, facts) and _keeps(expr.orelse, carried, facts)
    if isinstance(expr, cst.Subscript):
        return _keeps(expr.value, carried, facts)
    if isinstance(expr, cst.Call):
        func = expr.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if name in _CONCATENATING:
            return any(_keeps(arg.value, carried, facts) for arg in expr.args if arg.keyword is None)
        if isinstance(func, cst.Attribute) and name in _SAME_SIZE_METHODS and name not in ("to", "cuda"):
            return _keeps(func.value, carried, facts)
    return False


def _to_host(expr: cst.BaseExpression) -> bool:
    for call in calls_in(expr):
        func = call.func
        if isinstance(func, cst.Attribute) and (func.attr.value in HOST_METHODS or func.attr.value in TO_PYTHON_METHODS):
            return True
    return False


def _periodic(facts: ModuleFacts, fact: StatementFact) -> bool:
    """The store runs on every k-th iteration only (``if i % log_every == 0:``)."""
    place = facts.index.place_of(fact)
    if place is None:
        return False
    for guard in place.guards():
        for node in _binary_operations(guard):
            if isinstance(node.operator, cst.Modulo):
                return True
    return False


def _once_per_loop(facts: ModuleFacts, fact: StatementFact) -> set[cst.CSTNode]:
    """The loops whose one iteration alone runs the store: it sits under ``if t == 0:`` (the
    loop's own counter compared with a literal), so it keeps one value per run of them."""
    place = facts.index.place_of(fact)
    if place is None:
        return set()
    tested: set[str] = set()
    for guard, held in place.branch_guards():
        if held and isinstance(guard, cst.Comparison) and len(guard.comparisons) == 1:
            target = guard.comparisons[0]
            if isinstance(target.operator, cst.Equal) and isinstance(guard.left, cst.Name) and isinstance(
                target.comparator, (cst.Integer, cst.SimpleString)
            ):
                tested.add(guard.left.value)
    return {loop.node for loop in fact.loops if tested & _counters(loop.node)}


def _counters(loop: cst.CSTNode) -> set[str]:
    """The names a ``for`` loop binds to a count: ``t`` in ``for t in range(n)`` or in
    ``for t, batch in enumerate(loader)`` (a data item compared with a literal repeats)."""
    if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call) or not isinstance(loop.iter.func, cst.Name):
        return set()
    if loop.iter.func.value == "range" and isinstance(loop.target, cst.Name):
        return {loop.target.value}
    if loop.iter.func.value == "enumerate" and isinstance(loop.target, cst.Tuple) and loop.target.elements:
        first = loop.target.elements[0].value
        return {first.value} if isinstance(first, cst.Name) else set()
    return set()


def _binary_operations(expr: cst.BaseExpression) -> Iterator[cst.BinaryOperation]:
    from leaklint.analysis.walk import walk

    for node in walk(expr):
        if isinstance(node, cst.BinaryOperation):
            yield node


def _moved(facts: ModuleFacts, expr: cst.BaseExpression) -> str:
    """What to keep instead: the tensor moved to the host, or (for ``y.to(device)``) ``y`` itself."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("to", "cuda"):
        source = facts.describe_receiver(expr.func.value)
        if source is not None:
            return f"{source}, on the host, instead of moving it to the device"
    receiver = facts.describe_receiver(expr)
    if receiver is None or isinstance(expr, (cst.Dict, cst.List, cst.Tuple)):
        return "its tensors moved to the CPU (.cpu())"
    return f"{receiver}.cpu()"


def _parts(facts: ModuleFacts, expr: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The device tensors a kept value holds: the elements of a literal, else the value itself."""
    if isinstance(expr, cst.Dict):
        for element in expr.elements:
            if isinstance(element, cst.DictElement):
                yield from _parts(facts, element.value)
    elif isinstance(expr, (cst.List, cst.Tuple)):
        for element in expr.elements:
            yield from _parts(facts, element.value)
    elif on_accelerator(facts.value(expr)):
        yield expr


def _model_output(
    facts: ModuleFacts, function: FunctionInfo, expr: cst.BaseExpression, depth: int = 0, seeds: frozenset[str] = frozenset()
) -> bool:
    """``expr`` is what a model returned, or that output carried through operations that keep
    its size in the main: elementwise functions (softmax, normalize, clamp), views and casts,
    fields (``outputs.logits``), pooling over a dimension, a gather across processes, a helper of
    the file that does such operations on an output it is given (``self._mean_pool(hidden,
    mask)``). Not argmax or other indices, comparisons, scalar reductions, or what another
    function (a metric, NMS) computed from it. ``seeds``: parameters of ``function`` that hold a
    model's output (the helper's, as its caller passes them)."""
    if depth > 4:  # name hops
        return False
    if isinstance(expr, cst.Call):
        if produces_model_output(facts, expr, function):
            return True
        func = expr.func
        qualified = facts.imports.resolve(func) or ""
        positional = [arg.value for arg in expr.args if arg.keyword is None and not arg.star]
        if isinstance(func, cst.Attribute) and not qualified:
            method = func.attr.value
            if method in _SAME_SIZE_METHODS or method in _ELEMENTWISE or (method in _REDUCTIONS and _has_dim(expr)):
                return _model_output(facts, function, func.value, depth, seeds)
            if method in DEVICE_RESULT_METHODS:
                return any(_model_output(facts, function, part, depth, seeds) for arg in positional for part in _elements(arg))
            return _helper_keeps_output(facts, function, expr, depth, seeds)
        name = qualified.rsplit(".", 1)[-1]
        if qualified.startswith("torch.") and (name in _ELEMENTWISE or name in _CONCATENATING or (name in _REDUCTIONS and _has_dim(expr, functional=True))):
            return any(_model_output(facts, function, part, depth, seeds) for arg in positional[:1] for part in _elements(arg))
        return not qualified and _helper_keeps_output(facts, function, expr, depth, seeds)
    if isinstance(expr, cst.Attribute):
        return expr.attr.value not in NON_TENSOR_ATTRIBUTES and _model_output_name(facts, function, expr, depth, seeds) if dotted_name(expr) else _model_output(facts, function, expr.value, depth, seeds)
    if isinstance(expr, cst.Subscript):
        return _model_output(facts, function, expr.value, depth, seeds)
    if isinstance(expr, cst.BinaryOperation):
        return _model_output(facts, function, expr.left, depth, seeds) or _model_output(facts, function, expr.right, depth, seeds)
    if isinstance(expr, cst.Name):
        if (expr.value in seeds or expr.value == lightning_step_outputs_parameter(function, facts.imports)) and not facts.index.assigned_values(function, expr.value):
            return True  # a helper's parameter given an output; a Lightning callback's `outputs`
        return _model_output_name(facts, function, expr, depth, seeds)
    return False


def _helper_keeps_output(facts: ModuleFacts, function: FunctionInfo, call: cst.Call, depth: int, seeds: frozenset[str]) -> bool:
    """``call`` runs a function of the file that returns, through size-keeping operations, a
    model's output its caller passes it (``emb = self._mean_pool(hidden, mask)``)."""
    callee = local_callee(call, function, facts)
    if callee is None or callee is function or callee.node is None:
        return False
    bound = callee.is_method and isinstance(call.func, cst.Attribute) and not is_staticmethod(callee.node)
    given = frozenset(
        parameter
        for arg in call.args
        if not arg.star and _model_output(facts, function, arg.value, depth + 1, seeds)
        for parameter in [parameter_for(callee.node, call, arg, skip=1 if bound else 0)]
        if parameter is not None
    )
    if not given:
        return False
    returns = [fact.node.value for fact in facts.index.statements_of(callee) if isinstance(fact.node, cst.Return) and fact.node.value is not None]
    return bool(returns) and all(_model_output(facts, callee, value, depth + 1, given) for value in returns)


def _model_output_name(facts: ModuleFacts, function: FunctionInfo, expr: cst.BaseExpression, depth: int, seeds: frozenset[str] = frozenset()) -> bool:
    """A name (or ``a.b``) bound, somewhere in the function, to a model's output."""
    name = dotted_name(expr)
    if name is None:
        return False
    if isinstance(expr, cst.Attribute) and _model_output(facts, function, expr.value, depth, seeds):
        return True  # outputs.logits
    memo = facts.derived(_name_memo)
    key = (function, name, seeds)
    if key not in memo:
        memo[key] = False  # while it is being worked out (`x = f(x)` reads itself)
        memo[key] = any(_model_output(facts, function, value, depth + 1, seeds) for value in facts.index.assigned_values(function, name))
    return memo[key]


def _name_memo(facts: ModuleFacts) -> dict[tuple[FunctionInfo, str, frozenset[str]], bool]:
    """Per file: whether a name of a function holds a model's output (:func:`_model_output_name`)."""
    return {}


def _elements(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, (cst.List, cst.Tuple)):
        return [element.value for element in expr.elements]
    return [expr]


def _has_dim(call: cst.Call, functional: bool = False) -> bool:
    positional = [a for a in call.args if a.keyword is None]
    return len(positional) > (1 if functional else 0) or any(a.keyword is not None and a.keyword.value in ("dim", "axis") for a in call.args)


def _size(facts: ModuleFacts, fact: StatementFact, expr: cst.BaseExpression, depth: int = 0) -> int:
    """How much of a batch the kept value is: SCALAR (a loss, a mean), INDEX (argmax, a
    comparison: one small integer per sample) or FULL (anything else: outputs, features, inputs)."""
    if isinstance(expr, cst.Call):
        func = expr.func
        positional = [a for a in expr.args if a.keyword is None]
        has_dim = bool(positional) or any(a.keyword is not None and a.keyword.value in ("dim", "axis") for a in expr.args)
        qualified = facts.imports.resolve(func) or ""
        name = func.attr.value if isinstance(func, cst.Attribute) else qualified.rsplit(".", 1)[-1]
        if isinstance(func, cst.Attribute) and not qualified:
            if name in _REDUCTIONS:
                return INDEX if has_dim else SCALAR  # errors.mean(dim=1): one number per sample
            if name in NO_GRAD_RESULT_METHODS:
                return INDEX
            if name in _SAME_SIZE_METHODS:
                return _size(facts, fact, func.value, depth)
        if qualified.startswith("torch.") and name in NO_GRAD_RESULT_METHODS:
            return INDEX
        if is_functional_loss(qualified) or facts.value(func).role is Role.LOSS_FN:
            reduced = not any(a.keyword is not None and a.keyword.value == "reduction" for a in expr.args)
            return SCALAR if reduced else FULL
        return FULL
    if isinstance(expr, cst.Comparison):
        return INDEX
    if isinstance(expr, (cst.Integer, cst.Float)):
        return SCALAR
    if isinstance(expr, cst.BinaryOperation):  # data_loss + 0.1 * adv_loss: as large as its largest side
        return max(_size(facts, fact, expr.left, depth), _size(facts, fact, expr.right, depth))
    if isinstance(expr, cst.UnaryOperation):
        return _size(facts, fact, expr.expression, depth)
    if isinstance(expr, cst.Attribute):
        if expr.attr.value == "loss":
            return SCALAR
        if expr.attr.value == "indices":
            return INDEX
        if dotted_name(expr) is None:
            return FULL
    if isinstance(expr, cst.Subscript):
        if _loss_key(expr):
            return SCALAR  # outputs["loss"], as the provenance pass reads it
        base = _size(facts, fact, expr.value, depth)
        return INDEX if base is INDEX else FULL
    if isinstance(expr, cst.Dict):
        parts = [e.value for e in expr.elements if isinstance(e, cst.DictElement)]
        return max((_size(facts, fact, p, depth) for p in parts if on_accelerator(facts.value(p))), default=SCALAR)
    if isinstance(expr, (cst.List, cst.Tuple)):
        parts = [e.value for e in expr.elements]
        return max((_size(facts, fact, p, depth) for p in parts if on_accelerator(facts.value(p))), default=SCALAR)
    name = dotted_name(expr)
    if name is not None and name in _scalar_backward_targets(facts, fact.function):
        return SCALAR  # loss.backward() with no gradient: torch only allows it on one number
    if name is not None and depth < 3:
        assigned = facts.index.assigned_values(fact.function, name)
        if assigned:
            return max(_size(facts, fact, value, depth + 1) for value in assigned)
    return FULL


def _scalar_backward_targets(facts: ModuleFacts, function: FunctionInfo) -> frozenset[str]:
    """Names ``function`` calls ``.backward()`` on without a gradient argument: each holds a
    single number (autograd raises "grad can be implicitly created only for scalar outputs"
    otherwise)."""
    if not function.backward_names or function.node is None:
        return frozenset()
    found = set()
    for call in backward_calls(function.node.body, facts.imports):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "backward" and not call.args:
            name = dotted_name(func.value)
            if name is not None:
                found.add(name)
    return frozenset(found)


def _loss_key(expr: cst.Subscript) -> bool:
    return any(
        isinstance(element.slice, cst.Index)
        and isinstance(element.slice.value, cst.SimpleString)
        and str(element.slice.value.evaluated_value).endswith("loss")
        for element in expr.slice
    )


def _reset_attributes(facts: ModuleFacts) -> frozenset[str]:
    """The attribute names (``outputs`` for ``self.outputs``) that some code other than an
    ``__init__`` empties or re-binds (:func:`~leaklint.analysis.stores.emptied`):
    ``self.outputs.clear()``, ``self.outputs = []``, ``del self.outputs``, ``self.outputs[:] =
    []``, also through another name (``pl_module.outputs.clear()`` in a callback, ``for key,
    values in self.logs.items(): values.clear()``). A growing re-binding empties nothing."""
    reset: set[str] = set()
    for fact in facts.statements():
        if fact.function.name == "__init__":
            continue
        for name in emptied(fact.node):
            if "." not in name and isinstance(fact.node, cst.Expr):
                name = _iterated_container(fact, name) or name
            if "." in name:
                reset.add(_leaf(name))
    return frozenset(reset)


def _iterated_container(fact: StatementFact, name: str) -> str | None:
    """``self.logs`` when ``name`` is bound by an enclosing ``for`` over ``self.logs``,
    ``self.logs.values()`` or ``self.logs.items()`` (the value of each pair): emptying ``name``
    empties one of the container's lists."""
    for loop in reversed(fact.loops):
        node = loop.node
        if not isinstance(node, cst.For):
            continue
        target, iterated = node.target, node.iter
        if isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Attribute) and not iterated.args:
            method = iterated.func.attr.value
            if method == "items" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
                target, iterated = target.elements[1].value, iterated.func.value
            elif method == "values":
                iterated = iterated.func.value
            else:
                continue
        if isinstance(target, cst.Name) and target.value == name:
            return dotted_name(iterated)
    return None


def _leaf(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _lightning_returns(facts: ModuleFacts) -> Iterator[Violation]:
    """Device tensors a step returns to a ``*_epoch_end(self, outputs)`` hook: Lightning before 2.0
    keeps every batch's return value for it, on the device, until the epoch ends. Reported where
    each is written (in the step, or in the helper that builds what the step returns):

    - medium when no epoch-end hook reads it (``outputs`` never looked at, or only ``o["loss"]``):
      kept for nothing;
    - medium when ``training_epoch_end`` reads it: every training step's outputs are kept, for a
      metric that could be updated step by step;
    - when only evaluation hooks read it (epoch-level metrics that need every prediction), as for an
      evaluation loop: medium for a model's full output, low for labels, indices, per-sample values.
    """
    receivers: dict[int, tuple[_Returned, list[tuple[str, str, cst.FunctionDef]]]] = {}
    for cls in facts.structure.classes.values():
        if not cls.is_lightning:
            continue
        for step, epoch_end in LIGHTNING_EPOCH_OUTPUTS.items():
            step_node, end_node = cls.find_method(step), cls.find_method(epoch_end)
            if step_node is None or end_node is None:
                continue
            for part in _returned_parts(facts, facts.structure.functions[step_node]):
                entry = receivers.setdefault(id(part.expr), (part, []))
                if (step, epoch_end, end_node) not in entry[1]:
                    entry[1].append((step, epoch_end, end_node))
    keys_read: dict[cst.FunctionDef, frozenset[str] | None] = {}
    found: dict[int, Violation] = {}  # one finding per line, the surest
    for part, hooks in receivers.values():
        violation = _kept_for_epoch_end(facts, part, hooks, keys_read)
        line = facts.line_of(part.expr) or 0
        if violation is not None and (line not in found or violation.confidence.rank > found[line].confidence.rank):
            found[line] = violation
    yield from found.values()


def _kept_for_epoch_end(
    facts: ModuleFacts,
    part: _Returned,
    hooks: list[tuple[str, str, cst.FunctionDef]],
    keys_read: dict[cst.FunctionDef, frozenset[str] | None],
) -> Violation | None:
    """The finding for one returned part that the epoch-end ``hooks`` (step, hook, its node) receive."""
    if part.key == "loss":
        return None  # the loss Lightning backpropagates, one number
    value = facts.value(part.expr)
    if not on_accelerator(value) or value.is_graph:
        return None
    size = _size(facts, part.fact, part.expr)
    if size is SCALAR:
        return None
    readers = []
    for step, epoch_end, node in hooks:
        if node not in keys_read:
            keys_read[node] = _keys_read(node)
        if _reads(keys_read[node], part.key):
            readers.append(epoch_end)
    what = facts.describe(part.expr)
    steps = [step for step, epoch_end, _ in hooks if not readers or epoch_end in readers]
    source = f"{' and '.join(f'{step!r}' for step in steps)} return{'s' if len(steps) == 1 else ''} '{what}'"
    if part.fact.function.name not in steps:
        source += f" (built in '{part.fact.function.name}')"
    if not readers:
        names = " or ".join(sorted({f"'{hook}'" for _, hook, _ in hooks}))
        return Violation(
            node=part.expr,
            message=(
                f"{source}, a tensor on the accelerator that Lightning (before 2.0) keeps for every batch until {names} "
                "runs, and no epoch-end hook reads it: device memory grows with every batch for nothing"
            ),
            confidence=Confidence.MEDIUM,
            help="leave it out of what the step returns (or return it moved to the CPU: .cpu())",
            statement=part.fact.line or part.fact.node,
        )
    one_batch = part.key is not None and all(
        part.key in _keys_read_from_one_batch(node) for _, epoch_end, node in hooks if epoch_end in readers
    )
    if one_batch:
        confidence = Confidence.MEDIUM  # every batch's kept, one batch's read (`outputs[0]["images"]`)
    elif all(reader in LIGHTNING_EVALUATION_EPOCH_ENDS for reader in readers):
        big = size is FULL and _model_output(facts, part.fact.function, part.expr)
        confidence = Confidence.MEDIUM if big else Confidence.LOW
    else:
        confidence = Confidence.MEDIUM
    reader = readers[0]
    return Violation(
        node=part.expr,
        message=(
            f"{source}, a tensor on the accelerator, and '{reader}' makes Lightning (before 2.0) keep every "
            "batch's return value on the device until the epoch ends: device memory grows with every batch"
            + (f", though '{reader}' reads it from one batch only" if one_batch else "")
        ),
        confidence=confidence,
        help="return tensors moved to the CPU (.cpu()), or only the numbers the epoch's end needs",
        statement=part.fact.line or part.fact.node,
    )


@dataclass(frozen=True)
class _Returned:
    """One part of what a step returns: a value of the dict it returns (``key``), an element of a
    returned tuple, or the whole value; ``fact`` is the statement that writes it (in the step, or
    in a helper of the class whose result the step returns)."""

    key: str | None
    expr: cst.BaseExpression
    fact: StatementFact


#: How many helper calls and names a step's return value is followed through.
_RETURN_DEPTH = 3


def _returned_parts(facts: ModuleFacts, function: FunctionInfo, depth: int = 0) -> Iterator[_Returned]:
    """What ``function`` returns, part by part (:class:`_Returned`)."""
    for fact in facts.index.statements_of(function):
        node = fact.node
        if isinstance(node, cst.Return) and node.value is not None:
            yield from _parts_of(facts, fact, node.value, depth)


def _parts_of(facts: ModuleFacts, fact: StatementFact, expr: cst.BaseExpression, depth: int) -> Iterator[_Returned]:
    """The parts of ``expr``, returned by ``fact``: a dict literal's values, a tuple's elements,
    what a method of the class returns (``self._shared_step(batch)``), the dict a name is bound to
    (``results = {...}``, then ``results["x"] = ...``); else ``expr`` itself."""
    if isinstance(expr, cst.Dict):
        for element in expr.elements:
            if isinstance(element, cst.DictElement):
                key = element.key.evaluated_value if isinstance(element.key, cst.SimpleString) else None
                yield _Returned(key if isinstance(key, str) else None, element.value, fact)
        return
    if isinstance(expr, (cst.Tuple, cst.List)):
        for element in expr.elements:
            yield _Returned(None, element.value, fact)
        return
    if depth < _RETURN_DEPTH:
        callee = _own_method(facts, fact.function, expr)
        if callee is not None:
            yield from _returned_parts(facts, callee, depth + 1)
            return
        bindings = _dict_bindings(facts, fact.function, expr)
        if bindings:
            for binding, value in bindings:
                yield from _parts_of(facts, binding, value, depth + 1)
            return
    yield _Returned(None, expr, fact)


def _own_method(facts: ModuleFacts, function: FunctionInfo, expr: cst.BaseExpression) -> FunctionInfo | None:
    """The method of ``function``'s class that ``expr`` (``self.method(...)``) calls."""
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Attribute) or dotted_name(expr.func.value) != "self":
        return None
    return local_callee(expr, function, facts)


def _dict_bindings(facts: ModuleFacts, function: FunctionInfo, expr: cst.BaseExpression) -> list[tuple[StatementFact, cst.BaseExpression]]:
    """For a name that ``function`` binds only to dict literals or to results of the class's
    methods: each binding (statement, value) and each item set on it (``results["x"] = v``, as a
    one-item dict). Empty for any other name."""
    if not isinstance(expr, cst.Name):
        return []
    name = expr.value
    bindings: list[tuple[StatementFact, cst.BaseExpression]] = []
    items: list[tuple[StatementFact, cst.BaseExpression]] = []
    for fact in facts.index.statements_of(function):
        node = fact.node
        if not isinstance(node, cst.Assign):
            continue
        for target in node.targets:
            if isinstance(target.target, cst.Name) and target.target.value == name:
                if not isinstance(node.value, cst.Dict) and _own_method(facts, function, node.value) is None:
                    return []
                bindings.append((fact, node.value))
            elif (
                isinstance(target.target, cst.Subscript) and dotted_name(target.target.value) == name
                and len(target.target.slice) == 1 and isinstance(target.target.slice[0].slice, cst.Index)
            ):
                items.append((fact, cst.Dict([cst.DictElement(target.target.slice[0].slice.value, node.value)])))
    if not bindings or len(bindings) != len(facts.index.assigned_values(function, name)):
        return []  # bound otherwise too (unpacked, a parameter): not only dicts
    return bindings + items


def _reads(keys: frozenset[str] | None, key: str | None) -> bool:
    """An epoch-end hook that reads ``keys`` of the outputs (None: any) reads the part ``key``
    (None: a part without a key, which it reads if it reads the outputs at all)."""
    if keys is None:
        return True
    return bool(keys) if key is None else key in keys


def _keys_read_from_one_batch(hook: cst.FunctionDef) -> frozenset[str]:
    """The keys an epoch-end hook reads only from one batch's outputs (``outputs[0]["images"]``,
    to log a few samples) and nowhere else: what every other batch kept under them is never read."""
    params = [param.name.value for param in hook.params.params]
    if len(params) < 2:
        return frozenset()
    one: set[str] = set()
    other: set[str] = set()
    for node in walk(hook.body):
        key = _string_key(node) if isinstance(node, cst.Subscript) else None
        if key is None:
            continue
        element = node.value  # type: ignore[attr-defined]
        if (
            isinstance(element, cst.Subscript)
            and isinstance(element.value, cst.Name)
            and element.value.value == params[1]
            and len(element.slice) == 1
            and isinstance(element.slice[0].slice, cst.Index)
            and isinstance(element.slice[0].slice.value, (cst.Integer, cst.UnaryOperation))
        ):
            one.add(key)
        else:
            other.add(key)
    return frozenset(one - other)


def _keys_read(hook: cst.FunctionDef) -> frozenset[str] | None:
    """The keys an epoch-end hook reads from the step outputs it receives (``o["preds"] for o in
    outputs``, ``out.get("x")``, ``outputs[0]["y"]``); None when it uses them in other ways too
    (hands them to a function, concatenates them): then it may read anything."""
    params = [param.name.value for param in hook.params.params]
    if len(params) < 2:
        return None
    derived = {params[1]}
    binders: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
    for node in walk(hook.body):
        if isinstance(node, (cst.For, cst.CompFor)):
            binders.append((node.target, node.iter))
        elif isinstance(node, cst.Assign):
            binders.extend((target.target, node.value) for target in node.targets)
    changed = True
    while changed:
        changed = False
        for target, source in binders:
            names = {name.value for name in _target_names(_item_target(target, source))}
            if _output_of(source, derived) is not None and names - derived:
                derived |= names
                changed = True
    keys: set[str] = set()
    used: set[int] = set()  # the names read in those ways
    bound = {id(name) for target, _ in binders for name in _target_names(target)}
    for node in walk(hook.body):
        base: cst.Name | None = None
        if isinstance(node, cst.Subscript) and _string_key(node) is not None:
            base = _output_of(node.value, derived)
            if base is not None:
                keys.add(_string_key(node))  # type: ignore[arg-type]
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "get":
            first = node.args[0].value if node.args else None
            base = _output_of(node.func.value, derived)
            if base is not None and isinstance(first, cst.SimpleString) and isinstance(first.evaluated_value, str):
                keys.add(first.evaluated_value)
            else:
                base = None
        elif isinstance(node, cst.Call) and dotted_name(node.func) == "len" and len(node.args) == 1:
            base = _output_of(node.args[0].value, derived)
        if base is not None:
            used.add(id(base))
    for _, source in binders:
        base = _output_of(source, derived)
        if base is not None:
            used.add(id(base))
    for node in walk(hook.body):
        if isinstance(node, cst.Name) and node.value in derived and id(node) not in used and id(node) not in bound:
            return None
    return frozenset(keys)


def _target_names(target: cst.BaseExpression) -> Iterator[cst.Name]:
    """The names a ``for`` or assignment target binds (``o``, ``i, o``), not those it reads (``d[o]``)."""
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)


def _item_target(target: cst.BaseExpression, source: cst.BaseExpression) -> cst.BaseExpression:
    """The part of ``target`` bound to the items: ``o`` in ``for i, o in enumerate(outputs)``."""
    if (
        isinstance(source, cst.Call) and dotted_name(source.func) == "enumerate"
        and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2
    ):
        return target.elements[1].value
    return target


#: Calls that wrap an iterable of step outputs and yield its items (with an index, reversed).
_OUTPUT_WRAPPERS = frozenset({"enumerate", "reversed", "list", "tuple", "sorted", "iter"})


def _output_of(expr: cst.BaseExpression, derived: set[str]) -> cst.Name | None:
    """The name among ``derived`` (the outputs, the names bound to items of them) that ``expr`` is,
    or indexes by position (``outputs[0]``, ``outputs[-10:]``), or wraps (``enumerate(outputs)``)."""
    while True:
        if isinstance(expr, cst.Subscript) and _string_key(expr) is None:
            expr = expr.value
        elif isinstance(expr, cst.Call) and dotted_name(expr.func) in _OUTPUT_WRAPPERS and len(expr.args) == 1:
            expr = expr.args[0].value
        else:
            break
    return expr if isinstance(expr, cst.Name) and expr.value in derived else None


def _string_key(expr: cst.Subscript) -> str | None:
    """``"preds"`` for ``o["preds"]``."""
    if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
        return None
    key = literal_key(expr.slice[0].slice.value)
    return key if isinstance(key, str) else None


def _trainer_keeps_logits(facts: ModuleFacts) -> Iterator[Violation]:
    """An HF ``Trainer`` built with ``compute_metrics`` (and an ``eval_dataset``) on a model whose
    output scores every token over the vocabulary, with nothing that shrinks or offloads the logits
    (``preprocess_logits_for_metrics``, ``eval_accumulation_steps``, ``batch_eval_metrics``): each
    evaluation keeps every batch's ``[batch, length, vocabulary]`` logits on the device until
    ``compute_metrics`` runs."""
    for call, fact in facts.index.statement_calls:
        if not _builds_hf_trainer(call, facts):
            continue
        keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
        metrics = keywords.get("compute_metrics")
        if metrics is None or is_literal(metrics, "None") or any(arg.star for arg in call.args):
            continue
        if "eval_dataset" not in keywords or is_literal(keywords["eval_dataset"], "None"):
            continue
        preprocess = keywords.get("preprocess_logits_for_metrics")
        if preprocess is not None and not is_literal(preprocess, "None"):
            continue
        if _offloads(keywords.get("args"), fact.function, facts, seq2seq=_seq2seq_trainer(call, facts)):
            continue
        every_layer = _every_layer_output(keywords.get("model"), fact.function, facts)
        if every_layer is not None:
            built, flag, source = every_layer
            yield Violation(
                node=built,
                message=(
                    f"{source} every layer's {flag.split('_', 1)[1].replace('_', ' ')} with its "
                    f"logits, and the Trainer built with '{facts.describe(metrics)}' keeps every evaluation batch's outputs on "
                    "the accelerator until it runs: device memory grows with every batch by a tensor per layer"
                ),
                confidence=Confidence.MEDIUM,
                help=(
                    f"drop {flag}=True (compute_metrics needs the logits), or pass preprocess_logits_for_metrics that keeps "
                    "only the logits, or set eval_accumulation_steps"
                ),
                statement=built,
            )
            continue
        model = _lm_head_model(keywords.get("model"), fact.function, facts)
        if model is None:
            continue
        yield Violation(
            node=metrics,
            message=(
                f"'{facts.describe(metrics)}' makes the Trainer keep the logits of every evaluation batch on the accelerator "
                f"until it runs, and '{model}' scores every token over the whole vocabulary: device memory grows with "
                "every batch by [batch, sequence length, vocabulary] values"
            ),
            confidence=Confidence.MEDIUM,
            help=(
                "pass preprocess_logits_for_metrics=lambda logits, labels: logits.argmax(-1) (what the metric needs), "
                "or set eval_accumulation_steps to move them to the host every few steps"
            ),
            statement=fact.line or fact.node,
        )


#: Trainer methods that run the evaluation loop: a subclass that overrides one runs its own loop,
#: judged where it keeps what it collects.
_HF_EVALUATION_LOOPS = frozenset({"evaluate", "evaluation_loop", "prediction_loop"})


def _builds_hf_trainer(call: cst.Call, facts: ModuleFacts) -> bool:
    """``call`` builds an HF trainer that keeps logits for ``compute_metrics`` in its own
    evaluation loop: the library's class, or a subclass of it in this file that does not replace
    that loop."""
    if facts.imports.resolve(call.func) in HF_TRAINERS:
        return True
    name = dotted_name(call.func)
    cls = facts.structure.classes_by_name.get(name) if name is not None else None
    if cls is None or not is_hf_trainer(cls, facts.imports):
        return False
    overrides = [cls.find_method(method) for method in _HF_EVALUATION_LOOPS]
    return not any(node is not None and not _runs_trainer_loop(node) for node in overrides)


def _runs_trainer_loop(method: cst.FunctionDef) -> bool:
    """An override that still runs the Trainer's loop: ``super().evaluate(...)``,
    ``self.evaluation_loop(...)`` (logging around it, say)."""
    for call in calls_in(method.body):
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in _HF_EVALUATION_LOOPS:
            continue
        receiver = func.value
        if dotted_name(receiver) == "self" or (isinstance(receiver, cst.Call) and dotted_name(receiver.func) == "super"):
            return True
    return False


def _lm_head_model(expr: cst.BaseExpression | None, function: FunctionInfo, facts: ModuleFacts) -> str | None:
    """The class ``expr`` (a trainer's ``model=``) is built from, when it is a language-model head
    (``AutoModelForCausalLM.from_pretrained(...)``, directly or through the name it is bound to)."""
    if expr is None:
        return None
    name = dotted_name(expr)
    values = [expr] if name is None else facts.index.visible_values(function, name)
    for value in values:
        if not isinstance(value, cst.Call):
            continue
        qualified = facts.imports.resolve(value.func)
        if qualified is None:
            continue
        parts = qualified.split(".")
        if parts[-1] in ("from_pretrained", "from_config"):
            parts = parts[:-1]
        if parts and LM_HEAD_MODEL.search(parts[-1]):
            return parts[-1]
    return None


#: Model arguments that add every layer's tensors to the output (HF ``from_pretrained``/config).
_EVERY_LAYER_OUTPUTS = ("output_attentions", "output_hidden_states")


def _every_layer_output(expr: cst.BaseExpression | None, function: FunctionInfo, facts: ModuleFacts) -> tuple[cst.CSTNode, str, str] | None:
    """Where the trainer's ``model=`` (directly or through the name it is bound to) is made to
    return every layer's attention maps or hidden states next to the logits, the flag, and how to
    say so: the ``from_pretrained(..., output_attentions=True)`` call that built it, or, for a
    module class of the file, what its ``forward`` returns of a call it makes with the flag
    (``enc = self.encoder(ids, output_hidden_states=True)`` ... ``hidden_states=enc.hidden_states``)."""
    if expr is None:
        return None
    name = dotted_name(expr)
    values = [expr] if name is None else facts.index.visible_values(function, name)
    for value in values:
        if not isinstance(value, cst.Call):
            continue
        if (facts.imports.resolve(value.func) or "").rsplit(".", 1)[-1] in ("from_pretrained", "from_config"):
            flag = _every_layer_flag(value)
            if flag is not None:
                return value, flag, f"'{flag}=True' makes the model return"
            continue
        cls = facts.structure.classes_by_name.get(dotted_name(value.func) or "")
        forward = cls.find_method("forward") if cls is not None and cls.is_module else None
        returned = _returns_every_layer(forward) if forward is not None else None
        if returned is not None:
            part, flag = returned
            return part, flag, f"'{cls.name}.forward' returns (asked for with '{flag}=True')"  # type: ignore[union-attr]
    return None


def _every_layer_flag(call: cst.Call) -> str | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in _EVERY_LAYER_OUTPUTS and is_literal(arg.value, "True"):
            return arg.keyword.value
    return None


def _returns_every_layer(forward: cst.FunctionDef) -> tuple[cst.BaseExpression, str] | None:
    """The part of what ``forward`` returns that reads the per-layer outputs of a call it makes
    with an ``output_*=True`` flag (``enc.hidden_states`` of ``enc = self.encoder(...,
    output_hidden_states=True)``), and that flag."""
    flagged: dict[str, str] = {}
    for node in walk(forward.body, into=not_into_scopes):
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and len(node.targets) == 1:
            flag = _every_layer_flag(node.value)
            target = dotted_name(node.targets[0].target)
            if flag is not None and target is not None:
                flagged[target] = flag
    if not flagged:
        return None
    for node in walk(forward.body, into=not_into_scopes):
        if not (isinstance(node, cst.Return) and node.value is not None):
            continue
        for part in walk(node.value):
            if isinstance(part, cst.Attribute) and part.attr.value in ("hidden_states", "attentions"):
                owner = dotted_name(part.value)
                if owner in flagged:
                    return part, flagged[owner]
    return None


def _seq2seq_trainer(call: cst.Call, facts: ModuleFacts) -> bool:
    """The trainer built is a ``Seq2SeqTrainer`` (or a subclass of one in this file)."""
    if facts.imports.resolve(call.func) in HF_SEQ2SEQ_TRAINERS:
        return True
    name = dotted_name(call.func)
    cls = facts.structure.classes_by_name.get(name) if name is not None else None
    return cls is not None and is_hf_trainer(cls, facts.imports, HF_SEQ2SEQ_TRAINERS)


def _offloads(expr: cst.BaseExpression | None, function: FunctionInfo, facts: ModuleFacts, *, seq2seq: bool = True) -> bool:
    """The trainer's ``args=`` (a ``TrainingArguments(...)`` call, or the name bound to one) sets an
    argument that keeps the logits off the device or unkept (:data:`HF_EVAL_OFFLOAD_ARGUMENTS`);
    arguments it cannot see (read from the command line, ``**kwargs``) count as offloading."""
    if expr is None:
        return False
    name = dotted_name(expr)
    values = [expr] if name is None else facts.index.visible_values(function, name)
    if not values:
        return True
    for value in values:
        if not isinstance(value, cst.Call):
            return True
        for arg in value.args:
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword == "predict_with_generate" and not seq2seq:
                continue  # only a Seq2SeqTrainer generates for its metrics
            if arg.star or (keyword in HF_EVAL_OFFLOAD_ARGUMENTS and not is_literal(arg.value, "None", "False")):
                return True
    return False
