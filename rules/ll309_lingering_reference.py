"""LL309 lingering-reference: a ``del`` meant to free a model that frees nothing, because another
name, container or object still refers to the model while a long loop runs."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from leaklint.analysis import percall_api
from leaklint.analysis.accelerators import is_accelerator
from leaklint.analysis.calls import local_callee
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.heavy import Built, argument_for, attributes_from_params, built_here
from leaklint.analysis.names import dotted_name
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.structure import ClassInfo, FunctionInfo
from leaklint.analysis.syntax import assignment_pairs
from leaklint.analysis.walk import children, not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import LOOPS, Syntax
from leaklint.rule import Measured, Rule, Violation


class LingeringReference(Rule):
    code = "LL309"
    name = "lingering-reference"
    severity = Severity.PEAK
    summary = (
        "A del meant to free a model frees nothing: another name, list or object the rest of the code never "
        "uses still refers to the model, so its memory stays taken through the loop that follows."
    )
    help = "delete every name that still refers to the model (or drop the object's reference to it) before the loop"
    #: Every finding is a ``del`` followed by a loop, about a model, trainer or pipeline that the
    #: function builds (``built_here``: torch.nn, a model library, or a class of the file).
    needs = percall_api.BUILDS_MODEL & Syntax(ast.Delete) & LOOPS
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(6, 0, 0), leaks=(2, 0))
    docs = """
## What it finds
A `del` statement that is meant to free a model, a pipeline or a trainer, but frees nothing,
because another reference that the rest of the code never uses still holds it while a long loop
runs (the training loop, a sampling loop):

- **the del removes a list, and the models in it keep their names**: `text_encoders =
  [text_encoder_one, text_encoder_two]`, later `del tokenizers, text_encoders`, while
  `text_encoder_one` and `text_encoder_two` are never read again;
- **the del removes a name, and a list, tuple, dict or `functools.partial` still holds the model**:
  `del text_encoder_one` while `text_encoders = [text_encoder_one, ...]` stays bound and unused;
- **an object of a class of the file still holds it**: the model was given to its constructor,
  `__init__` keeps it (`self.text_encoders = text_encoders`), and none of the methods the function
  still calls on the object reads that attribute (reported at the attribute, the reference to drop).
- **an accelerate `Accelerator` still holds it**: the model went through `accelerator.prepare(...)`
  on every path to the `del` (not inside a branch), and no `accelerator.free_memory()` (or
  `clear()`) runs before the work that follows: the Accelerator keeps every model it prepared in
  its own list (medium confidence).

The model must be built in the function itself (an `nn.Module` constructor, a class of the file
deriving from one, `from_pretrained`, a pipeline, a trainer, or a local factory returning one), and
a loop must follow the `del` in the same function, or a call of a function of the file that runs
one (a final validation helper). Confidence is high when a `gc.collect()`,
`torch.cuda.empty_cache()` or `free_memory()` call follows the `del` (the author means to give the
memory back), medium otherwise.

It stays quiet when the other reference is read again after the `del` (the model is still needed:
the `del` is then pointless but frees nothing the program could do without), when that reference
is deleted or rebound before the loop starts, when a nested function reads it (it may run at any
time), when the name was rebound between the moment the list took the model and the `del` (the
list holds another object), when a method of the holder class rebinds or deletes the attribute
itself, for parameters (their caller holds the object anyway), and for a `del` inside a loop.

## Why it matters
`del name` removes one name, not the object: CPython frees an object when its last reference
goes. A model that is still in a list, still bound to another name, or still kept on an object that
lives on, stays in memory with all its weights (on the GPU for a model moved there) for as long as
that reference lives, which is the rest of the function when it is a local. The `del` followed by
`torch.cuda.empty_cache()` looks like a cleanup, and the memory report after it shows nothing
freed: the text encoders of a diffusion fine-tuning script (several GB) stay on the GPU through
the whole training loop, and the run needs a larger card than it should, or runs out of memory.

## Example
```python
text_encoder_one = CLIPTextModel.from_pretrained(MODEL, subfolder="text_encoder").to(device)
text_encoder_two = CLIPTextModelWithProjection.from_pretrained(MODEL, subfolder="text_encoder_2").to(device)
text_encoders = [text_encoder_one, text_encoder_two]
with torch.no_grad():
    prompt_embeds = encode_prompt(text_encoders, tokenizers, prompt)
del tokenizers, text_encoders  # the encoders are still named text_encoder_one/two
gc.collect()
torch.cuda.empty_cache()
for step in range(max_train_steps):
    ...
```

## Use instead
```python
del tokenizers, text_encoders
del text_encoder_one, text_encoder_two  # the last references: now the weights are freed
gc.collect()
torch.cuda.empty_cache()
```
For a model an Accelerator prepared, empty the Accelerator's lists first:
`accelerator.free_memory()`, then `del unet` (or `unet = accelerator.free_memory(unet)` in recent
accelerate versions). For an object that keeps the model, drop its reference when it is done with it
(`self.text_encoders = None` at the end of the method that encodes), or pass the model only to
the method that uses it.

## Fix safety
No automatic fix: deleting the other names is right only if nothing after the loop needs them,
and leaklint sees no further read only in the function itself.

## Known false positives
A reference kept on purpose for after the loop through a path leaklint does not follow (a
`locals()` or `globals()` lookup, an `eval`), and a model that is in fact small. Of the references
libraries hold it knows only the Accelerator's: a Lightning `Trainer` that keeps the module it
fitted, or a prepare that ran in a branch, is missed.

Measured on bench/realcode (90 repositories, 1.34 million lines): six findings, all true, all the
Accelerator's: six diffusers training scripts (CogVideoX twice, CogView4 and Flux control, Flux
control LoRA, LCM distillation of SDXL) end with `del transformer` (or `unet`) and
`free_memory()` / `torch.cuda.empty_cache()`, then load a new pipeline for the final validation,
while the Accelerator still holds the trained model on the GPU. No finding on the library code of
accelerate, lightning, peft, timm, torch_geometric, torchmetrics and trl. The diffusers training
scripts there that delete their text-encoder lists either
delete the names too (the fix of the SD3 report), or read the encoders again for validation
inside the training loop, where the `del` is pointless but the models are needed. Two CogVideoX
scripts delete `transformer` while the training loop's `models_to_accumulate = [transformer]` is
still bound; the name was rebound (`unwrap_model`, `.to(dtype)`) after the list took it, so the
rule does not claim the list holds that object (the Accelerator that prepared it does: that is the
finding). Text encoders that the scripts prepare only `if args.train_text_encoder:` and delete
in the other branch are not reported: the prepare is in a branch.
On bench/leaks it finds two of the four cases of the family (the SD3 lists, the prompt cache);
the other two need a library's references (a Lightning `Trainer` that keeps the module it
fitted) or a claim about reference cycles inside transformers models.

## References
- diffusers, "Text encoders are not freed in the SD3 DreamBooth script" (the lists were deleted,
  the names kept the encoders on the GPU): https://github.com/huggingface/diffusers/issues/8511,
  fixed by deleting the names too: https://github.com/huggingface/diffusers/pull/8536
- SimpleTuner, the text-embedding cache kept the text encoders after `del` (about 10 GB of VRAM
  for the whole LoRA run): https://github.com/bghira/SimpleTuner/issues/457
- accelerate, "Fix memory leak": `accelerator.free_memory()` must run so that "lingering
  references can be wiped": https://github.com/huggingface/accelerate/pull/739; `free_memory`
  takes and returns the objects because "doing just `del` doesn't *actually* help":
  https://github.com/huggingface/accelerate/pull/2716
- lmms-eval, "release accelerator model refs during cleanup": prepared models stayed referenced by
  Accelerate after the module attributes were deleted:
  https://github.com/EvolvingLMMs-Lab/lmms-eval/pull/1321
- Python language reference, the `del` statement ("Deletion of a name removes the binding of that
  name"), and the data model: an object is freed when it becomes unreachable:
  https://docs.python.org/3/reference/simple_stmts.html#the-del-statement
- Runtime repro: `leaklint verify LL309` measures the leaky and the fixed loop body.
"""

    VALID = (
        # The names are deleted with the list: nothing holds the encoders any more.
        """
import gc

import torch
from transformers import CLIPTextModel

def train(model_id, prompt, unet, steps):
    text_encoder_one = CLIPTextModel.from_pretrained(model_id, subfolder="text_encoder").to("cuda")
    text_encoder_two = CLIPTextModel.from_pretrained(model_id, subfolder="text_encoder_2").to("cuda")
    text_encoders = [text_encoder_one, text_encoder_two]
    with torch.no_grad():
        embeds = [encoder(prompt)[0] for encoder in text_encoders]
    del text_encoders
    del text_encoder_one, text_encoder_two
    gc.collect()
    for step in range(steps):
        unet(embeds[0]).mean().backward()
""",
        # The names are still needed: validation inside the loop reads them.
        """
import torch
from transformers import CLIPTextModel

def train(model_id, prompt, unet, steps, validate):
    text_encoder_one = CLIPTextModel.from_pretrained(model_id, subfolder="text_encoder").to("cuda")
    text_encoders = [text_encoder_one]
    with torch.no_grad():
        embeds = text_encoders[0](prompt)[0]
    del text_encoders
    torch.cuda.empty_cache()
    for step in range(steps):
        unet(embeds).mean().backward()
        if step % 500 == 0:
            validate(unet, text_encoder_one)
""",
        # The holder is rebound before the loop; the name was rebound after the list took it; a
        # parameter; a del with no loop after it.
        """
import torch
from torch import nn

def fit(loader, make_model, teacher):
    model = nn.Linear(8, 8)
    models = [model]
    model = make_model()
    del model
    del teacher
    models = None
    for x in loader:
        x.sum()

def export(path):
    model = nn.Linear(8, 8)
    pair = (model, path)
    del model
    return pair
""",
        # The Accelerator's lists are emptied before the del; a prepare that ran only in a branch.
        """
import torch
from accelerate import Accelerator
from diffusers import UNet2DConditionModel

def main(args, loader, final_validation):
    accelerator = Accelerator()
    unet = UNet2DConditionModel.from_pretrained(args.model, subfolder="unet")
    text_encoder = UNet2DConditionModel.from_pretrained(args.model, subfolder="text_encoder")
    optimizer = torch.optim.AdamW(unet.parameters())
    unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)
    if args.train_text_encoder:
        text_encoder = accelerator.prepare(text_encoder)
    for batch in loader:
        accelerator.backward(unet(batch).mean())
    accelerator.free_memory()
    del unet, text_encoder
    for prompt in args.prompts:
        final_validation(prompt)

def finetune(args, unet, loader):
    accelerator = Accelerator()
    text_encoder = UNet2DConditionModel.from_pretrained(args.model, subfolder="text_encoder")
    if args.train_text_encoder:
        text_encoder = accelerator.prepare(text_encoder)
    else:
        with torch.no_grad():
            embeds = text_encoder(args.ids)
        del text_encoder
    for batch in loader:
        accelerator.backward(unet(batch, embeds).mean())
""",
        # The holder class lets the model go itself once the captions are encoded.
        """
import torch
from transformers import CLIPTextModel

class EmbeddingCache:
    def __init__(self, text_encoder):
        self.text_encoder = text_encoder
        self.items = {}

    @torch.no_grad()
    def precompute(self, captions):
        for i, caption in enumerate(captions):
            self.items[i] = self.text_encoder(caption)[0].cpu()
        self.text_encoder = None

    def load(self, i):
        return self.items[i]

def train(model_id, captions, unet, steps):
    text_encoder = CLIPTextModel.from_pretrained(model_id).to("cuda")
    cache = EmbeddingCache(text_encoder)
    cache.precompute(captions)
    del text_encoder
    for step in range(steps):
        unet(cache.load(step % len(captions)).cuda()).mean().backward()
""",
    )
    INVALID = (
        # The lists go, the names stay (diffusers' SD3 DreamBooth script before its fix).
        """
import gc

import torch
from transformers import CLIPTextModelWithProjection, T5EncoderModel

def main(model_id, prompt, transformer, steps):
    text_encoder_one = CLIPTextModelWithProjection.from_pretrained(model_id, subfolder="text_encoder").to("cuda")
    text_encoder_two = T5EncoderModel.from_pretrained(model_id, subfolder="text_encoder_3").to("cuda")
    text_encoders = [text_encoder_one, text_encoder_two]
    with torch.no_grad():
        embeds = torch.cat([encoder(prompt)[0] for encoder in text_encoders], dim=-1)
    del text_encoders  # expect: LL309
    gc.collect()
    torch.cuda.empty_cache()
    for step in range(steps):
        transformer(embeds).mean().backward()
""",
        # The name goes, a tuple and a partial still hold the models.
        """
import functools

import torch
from torch import nn

def encode(encoder, x):
    return encoder(x)

def train(data, steps):
    encoder = nn.Sequential(nn.Linear(512, 4096), nn.ReLU(), nn.Linear(4096, 512)).cuda()
    teacher = nn.Linear(512, 512).cuda()
    pair = (encoder, 0.5)
    encode_fn = functools.partial(encode, teacher)
    with torch.no_grad():
        feats = encoder(data)
        targets = encode_fn(data)
    del encoder  # expect: LL309
    del teacher  # expect: LL309
    head = nn.Linear(512, 10).cuda()
    for step in range(steps):
        head(feats).sub(targets[:, :10]).pow(2).mean().backward()
""",
        # The Accelerator still holds the trained model when the final validation loads a new one.
        """
import torch
from accelerate import Accelerator
from diffusers import DiffusionPipeline, UNet2DConditionModel

def log_validation(args, accelerator):
    pipeline = DiffusionPipeline.from_pretrained(args.output_dir).to(accelerator.device)
    for prompt in args.prompts:
        pipeline(prompt).images[0].save(f"{prompt}.png")

def main(args, loader):
    accelerator = Accelerator(mixed_precision="bf16")
    unet = UNet2DConditionModel.from_pretrained(args.model, subfolder="unet")
    optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-5)
    unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)
    for batch in loader:
        accelerator.backward(unet(batch).mean())
        optimizer.step()
    if accelerator.is_main_process:
        unet = accelerator.unwrap_model(unet)
        unet.save_pretrained(args.output_dir)
        del unet  # expect: LL309
        torch.cuda.empty_cache()
        log_validation(args, accelerator)
""",
        # An object of the file keeps the encoders; the methods still called never read them.
        """
import torch
from transformers import CLIPTextModel

class PromptCache:
    def __init__(self, text_encoders, cache_dir):
        self.text_encoders = text_encoders  # expect: LL309
        self.cache_dir = cache_dir
        self.items = {}

    @torch.no_grad()
    def precompute(self, captions):
        for i, caption in enumerate(captions):
            self.items[i] = torch.cat([e(caption)[0] for e in self.text_encoders], -1).cpu()

    def load(self, i):
        return self.items[i]

def train(model_id, captions, unet, steps):
    encoder_a = CLIPTextModel.from_pretrained(model_id, subfolder="text_encoder").to("cuda")
    encoder_b = CLIPTextModel.from_pretrained(model_id, subfolder="text_encoder_2").to("cuda")
    cache = PromptCache([encoder_a, encoder_b], "cache")
    cache.precompute(captions)
    del encoder_a, encoder_b
    torch.cuda.empty_cache()
    for step in range(steps):
        unet(cache.load(step % len(captions)).cuda()).mean().backward()
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """Each step builds an encoder, hands it to the cache object the program keeps (for the
        encoded item) in place of the previous one, encodes, and deletes its own name for the
        encoder. Leaky: the cache keeps ``self.encoder``, so the encoder's weights stay taken
        between steps. Fixed: the cache drops it once it has encoded (``self.encoder = None``)."""

        def setup(self, ctx):
            import torch

            class Cache:
                def __init__(self, encoder, release):
                    self.encoder = encoder
                    self.release = release

                def precompute(self, x):
                    with torch.no_grad():
                        self.item = self.encoder(x).sum().item()
                    if self.release:
                        self.encoder = None

            ctx.Cache = Cache
            ctx.x = torch.randn(4, 256, device=ctx.device)
            ctx.cache = None

        def _step(self, ctx, release):
            import torch

            encoder = torch.nn.Linear(256, 4096).to(ctx.device)
            cache = ctx.Cache(encoder, release)
            cache.precompute(ctx.x)
            del encoder
            ctx.cache = cache

        def leaky(self, ctx):
            self._step(ctx, release=False)

        def fixed(self, ctx):
            self._step(ctx, release=True)


# --- detection ------------------------------------------------------------------------------------
#: Calls that show the author means to give memory back right after a ``del``.
FREEING_CALLS = frozenset({"collect", "empty_cache", "free_memory", "release_memory", "flush"})
#: Callables whose result keeps the arguments it is given (``functools.partial``).
KEEPING_CALLS = frozenset({"functools.partial"})


@dataclass(frozen=True, eq=False)
class _Event:
    """One thing a function's code does to a name, in the order it runs: ``load`` (a read),
    ``store`` (a new value: ``value`` is what is assigned, when known), ``del``, ``member``
    (``name.attr`` read, ``attr`` in ``value``'s place), or a ``loop`` / ``free`` marker."""

    kind: str
    name: str
    node: cst.CSTNode
    #: Inside a nested def, lambda or class: it runs at some later time, not where it is written.
    nested: bool = False
    value: cst.BaseExpression | None = None
    attribute: str = ""
    #: Inside an ``if`` (or a ``try`` handler): it may not run.
    guarded: bool = False


class _Timeline:
    """Every read and write of a plain name in one function (or the module's top level), in
    source order, with the loops and memory-freeing calls between them."""

    def __init__(self, facts: ModuleFacts, function: FunctionInfo) -> None:
        self.events: list[_Event] = []
        self._guards = 0
        root = function.node.body if function.node is not None else facts.module
        self._visit(root, nested=False)
        self.position = {event.node: index for index, event in enumerate(self.events) if event.kind in ("del", "loop")}

    # --- what happens to a name after a point ---------------------------------------------------
    def first_after(self, index: int, name: str) -> _Event | None:
        """The first thing done to ``name`` after event ``index`` at this level (not in a nested def)."""
        for event in self.events[index + 1 :]:
            if event.name == name and not event.nested and event.kind in ("load", "store", "del", "member"):
                return event
        return None

    def read_later_by_closure(self, name: str) -> bool:
        """A nested def or lambda reads ``name``: it may run at any time."""
        return any(event.nested and event.name == name and event.kind in ("load", "member") for event in self.events)

    def next_loop(self, index: int, facts: ModuleFacts, function: FunctionInfo) -> _Event | None:
        """The first long-running thing after event ``index``: a loop, or a call of a function of
        the file that runs one (a final validation helper)."""
        for event in self.events[index + 1 :]:
            if event.nested:
                continue
            if event.kind == "loop":
                return event
            if event.kind == "call" and _runs_a_loop(facts, event.node, function):  # type: ignore[arg-type]
                return event
        return None

    def frees_after(self, index: int) -> bool:
        """A memory-freeing call (``gc.collect()``, ``torch.cuda.empty_cache()``) follows before the next loop."""
        for event in self.events[index + 1 :]:
            if event.nested:
                continue
            if event.kind == "loop":
                return False
            if event.kind == "free":
                return True
        return False

    def last_value_before(self, index: int, name: str) -> cst.BaseExpression | None:
        """What ``name`` was last assigned before event ``index`` (None: unknown or deleted)."""
        for event in reversed(self.events[:index]):
            if event.name == name and not event.nested and event.kind in ("store", "del"):
                return event.value
        return None

    def rebound_between(self, store: _Event, index: int, name: str) -> bool:
        """``name`` gets a new value after ``store`` and before event ``index``: what ``store``
        kept is not what ``name`` refers to at ``index``."""
        start = self.events.index(store)
        return any(e.name == name and not e.nested and e.kind == "store" for e in self.events[start + 1 : index])

    def prepares_before(self, index: int) -> list[_Event]:
        """The ``prepare`` calls that run on every path to event ``index`` (not in a branch)."""
        return [e for e in self.events[:index] if e.kind == "prepare" and not e.nested and not e.guarded]

    def releases_between(self, start: int, end: int) -> list[cst.Call]:
        """The ``x.free_memory()`` / ``x.clear()`` calls between events ``start`` and ``end``."""
        return [e.node for e in self.events[start + 1 : end] if e.kind == "release"]  # type: ignore[misc]

    def stores_before(self, index: int) -> list[_Event]:
        return [event for event in self.events[:index] if event.kind == "store" and not event.nested and event.value is not None]

    def members_after(self, index: int, name: str) -> set[str] | None:
        """The attributes read from ``name`` after event ``index`` (``cache.load`` → ``load``), or
        None when ``name`` itself is read whole (handed on: anything may use it)."""
        found: set[str] = set()
        for event in self.events[index + 1 :]:
            if event.name != name or event.kind not in ("load", "member"):
                continue
            if event.kind == "load":
                return None
            found.add(event.attribute)
        return found

    # --- building -------------------------------------------------------------------------------
    def _visit(self, node: cst.CSTNode, nested: bool) -> None:
        node_type = type(node)
        if node_type is cst.Name:
            self.events.append(_Event("load", node.value, node, nested))
        elif node_type is cst.Attribute:
            if type(node.value) is cst.Name:
                self.events.append(_Event("member", node.value.value, node, nested, attribute=node.attr.value))
            else:
                self._visit(node.value, nested)
        elif node_type is cst.Subscript and type(node.value) is cst.Name:
            # ``cache[i]`` calls the holder's ``__getitem__``
            self.events.append(_Event("member", node.value.value, node, nested, attribute="__getitem__"))
            for element in node.slice:
                self._visit(element, nested)
        elif node_type is cst.Arg:
            self._visit(node.value, nested)
        elif node_type in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            for child in children(node):
                if child is not getattr(node, "name", None):
                    self._visit(child, True)
        elif node_type is cst.Param:
            if node.default is not None:
                self._visit(node.default, nested)
        elif node_type is cst.Assign:
            self._visit(node.value, nested)
            for target in node.targets:
                self._store(target.target, node.value, nested)
        elif node_type is cst.AnnAssign:
            if node.value is not None:
                self._visit(node.value, nested)
                self._store(node.target, node.value, nested)
        elif node_type is cst.NamedExpr:
            self._visit(node.value, nested)
            self._store(node.target, node.value, nested)
        elif node_type is cst.For:
            self._visit(node.iter, nested)
            self._store(node.target, None, nested)
            self.events.append(_Event("loop", "", node, nested))
            self._visit(node.body, nested)
            if node.orelse is not None:
                self._visit(node.orelse, nested)
        elif node_type is cst.While:
            self.events.append(_Event("loop", "", node, nested))
            for child in children(node):
                self._visit(child, nested)
        elif node_type is cst.Del:
            self.events.append(_Event("del", "", node, nested))
            for target in _deleted_names(node):
                self.events.append(_Event("del", target, node, nested))
        elif node_type is cst.WithItem:
            self._visit(node.item, nested)
            if node.asname is not None:
                self._store(node.asname.name, None, nested)
        elif node_type in (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal):
            return
        elif node_type in (cst.If, cst.ExceptHandler, cst.IfExp):
            self._guards += 1
            for child in children(node):
                self._visit(child, nested)
            self._guards -= 1
        else:
            if node_type is cst.Call:
                if type(node.func) is cst.Name:
                    self.events.append(_Event("call", node.func.value, node, nested))
                called = _callee_last_name(node)
                if called in FREEING_CALLS:
                    self.events.append(_Event("free", "", node, nested))
                if type(node.func) is cst.Attribute and (called in percall_api.PREPARE_METHODS or called in percall_api.ACCELERATOR_RELEASE_METHODS):
                    kind = "prepare" if called in percall_api.PREPARE_METHODS else "release"
                    self.events.append(_Event(kind, "", node, nested, guarded=self._guards > 0))
            for child in children(node):
                self._visit(child, nested)

    def _store(self, target: cst.BaseExpression, value: cst.BaseExpression | None, nested: bool) -> None:
        pairs = list(assignment_pairs(target, value)) if value is not None else []
        if not pairs:
            pairs = [(target, None)]  # unknown, or unpacked from a call: ``a, b = load()``
        for part, part_value in pairs:
            if isinstance(part, cst.Name):
                self.events.append(_Event("store", part.value, part, nested, value=part_value))
            elif isinstance(part, (cst.Tuple, cst.List)):
                for element in part.elements:
                    self._store(element.value, None, nested)
            elif isinstance(part, cst.StarredElement):
                self._store(part.value, None, nested)
            else:
                self._visit(part, nested)


def _timelines(facts: ModuleFacts) -> dict[FunctionInfo, _Timeline]:
    return {}


def _timeline(facts: ModuleFacts, function: FunctionInfo) -> _Timeline:
    built = facts.derived(_timelines)
    if function not in built:
        built[function] = _Timeline(facts, function)
    return built[function]


def _runs_a_loop(facts: ModuleFacts, call: cst.Call, function: FunctionInfo) -> bool:
    """``call`` calls a function of the file whose own body has a loop."""
    callee = local_callee(call, function, facts)
    if callee is None or callee.node is None:
        return False
    return any(type(node) in (cst.For, cst.While) for node in walk(callee.node.body, into=not_into_scopes))


def _long_work(facts: ModuleFacts, event: _Event) -> str:
    """How a message names what runs after the ``del``: the loop, or the call that loops."""
    if event.kind == "loop":
        return f"the loop at line {facts.line_of(event.node)}"
    return f"'{event.name}()' at line {facts.line_of(event.node)}, which loops"


def _deleted_names(node: cst.Del) -> list[str]:
    return [element.value for element in _del_targets(node) if isinstance(element, cst.Name)]


def _callee_last_name(call: cst.Call) -> str | None:
    func = call.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """One violation per ``del`` that frees no model because another name or object still holds it."""
    for fact in facts.statements():
        node = fact.node
        if not isinstance(node, cst.Del) or fact.loops:
            continue
        function = fact.function
        timeline = _timeline(facts, function)
        index = timeline.position.get(node)
        if index is None:
            continue
        loop = timeline.next_loop(index, facts, function)
        if loop is None:
            continue  # nothing long runs after the del: the names go with the function
        deleted = set(_deleted_names(node))
        confidence = Confidence.HIGH if timeline.frees_after(index) else Confidence.MEDIUM
        lingering = _names_left_holding(facts, function, timeline, index, deleted, loop)
        if lingering:
            yield _name_violation(facts, fact, function, node, lingering, loop, confidence)
        prepared = _prepared(facts, function, timeline, index, deleted, loop)
        if prepared is not None and not lingering:
            yield _prepared_violation(facts, fact, function, node, prepared, loop)
        yield from _objects_left_holding(facts, function, timeline, index, deleted, loop, fact)


@dataclass(frozen=True)
class _Holding:
    """``holder`` (a name the ``del`` leaves) still refers to ``what`` (a model the ``del`` meant to free)."""

    holder: str
    model: str
    built: Built


def _names_left_holding(
    facts: ModuleFacts, function: FunctionInfo, timeline: _Timeline, index: int, deleted: set[str], loop: _Event
) -> list[_Holding]:
    """Names that still hold a model the ``del`` meant to free, that nothing reads again and that
    stay bound through the loop that follows: the elements of a deleted list (``del text_encoders``
    leaves ``text_encoder_one``), or a list, tuple, dict or ``functools.partial`` that holds a
    deleted model (``del text_encoder_one`` leaves ``text_encoders``)."""
    found: list[_Holding] = []
    for name in sorted(deleted):
        value = timeline.last_value_before(index, name)
        for element in _held_names(facts, value):
            if element in deleted:
                continue
            built = _model(facts, function, element)
            if built is not None and _idle_through(timeline, index, element, loop, function):
                found.append(_Holding(element, element, built))
        built = _model(facts, function, name)
        if built is None:
            continue
        for store in timeline.stores_before(index):
            holder = store.name
            if holder in deleted or holder == name or name not in _held_names(facts, store.value):
                continue
            if (
                timeline.last_value_before(index, holder) is store.value
                and not timeline.rebound_between(store, index, name)
                and _idle_through(timeline, index, holder, loop, function)
            ):
                found.append(_Holding(holder, name, built))
    return found


@dataclass(frozen=True)
class _Prepared:
    """``model`` (deleted) was handed to ``call`` (``accelerator.prepare(...)``), whose Accelerator
    keeps it until ``free_memory()``."""

    model: str
    built: Built
    call: cst.Call


def _prepared(
    facts: ModuleFacts, function: FunctionInfo, timeline: _Timeline, index: int, deleted: set[str], loop: _Event
) -> _Prepared | None:
    """A deleted model that an Accelerator prepared on every path to the ``del`` (a prepare in a
    branch may not be the one that ran), with no ``free_memory()`` / ``clear()`` after it before
    the loop: the Accelerator still holds the model (its ``_models`` list)."""
    for event in timeline.prepares_before(index):
        call = event.node
        assert isinstance(call, cst.Call)
        if not isinstance(call.func, cst.Attribute) or not is_accelerator(call.func.value, function, facts):
            continue
        handed = {arg.value.value for arg in call.args if isinstance(arg.value, cst.Name) and arg.keyword is None}
        for name in sorted(handed & deleted):
            built = _model(facts, function, name)
            releases = timeline.releases_between(timeline.events.index(event), timeline.events.index(loop))
            if built is None or any(is_accelerator(release.func.value, function, facts) for release in releases):  # type: ignore[attr-defined]
                continue
            return _Prepared(name, built, call)
    return None


def _prepared_violation(
    facts: ModuleFacts, fact: StatementFact, function: FunctionInfo, node: cst.Del, prepared: _Prepared, loop: _Event
) -> Violation:
    accelerator = facts.describe(prepared.call.func.value)  # type: ignore[attr-defined]
    return Violation(
        node=node,
        message=(
            f"'{facts.describe(node)}' frees nothing: '{prepared.model}' ({prepared.built.what}) went through "
            f"'{facts.describe(prepared.call)}' at line {facts.line_of(prepared.call)}, and the Accelerator keeps every "
            f"model it prepared until '{accelerator}.free_memory()': the memory stays taken through {_long_work(facts, loop)}"
        ),
        confidence=Confidence.MEDIUM,
        help=f"call '{accelerator}.free_memory()' (it empties the Accelerator's lists) before deleting the model",
        statement=fact.line,
    )


def _held_names(facts: ModuleFacts, value: cst.BaseExpression | None) -> list[str]:
    """The plain names a value keeps: the items of a list, tuple, set or dict literal, the
    arguments of ``functools.partial``."""
    if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
        items = [element.value for element in value.elements]
    elif isinstance(value, cst.Dict):
        items = [element.value for element in value.elements if isinstance(element, cst.DictElement)]
    elif isinstance(value, cst.Call) and facts.imports.resolve(value.func) in KEEPING_CALLS:
        items = [arg.value for arg in value.args[1:]]
        items += [v for arg in value.args[1:] if isinstance(arg.value, (cst.List, cst.Tuple)) for v in (e.value for e in arg.value.elements)]
    else:
        return []
    return [item.value for item in items if isinstance(item, cst.Name)]


def _model(facts: ModuleFacts, function: FunctionInfo, name: str) -> Built | None:
    """The model, pipeline or trainer ``name`` holds, when ``function`` builds it itself."""
    if name in function.params:
        return None
    return built_here(cst.Name(name), function, facts)


def _idle_through(timeline: _Timeline, index: int, name: str, loop: _Event, function: FunctionInfo) -> bool:
    """``name`` is never read again after event ``index``, and still bound when ``loop`` starts."""
    if name in function.params or timeline.read_later_by_closure(name):
        return False
    first = timeline.first_after(index, name)
    if first is None:
        return True
    if first.kind in ("load", "member"):
        return False
    return timeline.events.index(first) > timeline.events.index(loop)


def _objects_left_holding(
    facts: ModuleFacts,
    function: FunctionInfo,
    timeline: _Timeline,
    index: int,
    deleted: set[str],
    loop: _Event,
    fact: StatementFact,
) -> Iterator[Violation]:
    """An object of a class of the file, given the deleted model at construction, keeps it in an
    attribute (``self.text_encoders = text_encoders``) that none of its methods the function still
    calls reads: reported at that attribute, the reference to drop when it is no longer needed."""
    kept_params = attributes_from_params(facts)
    for store in timeline.stores_before(index):
        call = store.value
        if store.name in deleted or not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name):
            continue
        cls = facts.structure.classes_by_name.get(call.func.value)
        if cls is None or cls not in kept_params or timeline.last_value_before(index, store.name) is not call:
            continue
        first = timeline.first_after(index, store.name)
        if first is not None and first.kind in ("store", "del") and timeline.events.index(first) < timeline.events.index(loop):
            continue  # the holder goes before the loop
        used = timeline.members_after(index, store.name)
        if used is None or timeline.read_later_by_closure(store.name):
            continue
        for param, attribute in sorted(kept_params[cls].items()):
            argument = argument_for(call, cls, param, facts)
            passed = [argument.value] if isinstance(argument, cst.Name) else _held_names(facts, argument)
            models = [(name, built) for name in passed if name in deleted and (built := _model(facts, function, name)) is not None]
            if not models or attribute in _attributes_read(facts, cls, used) or _released_by_a_method(facts, cls, attribute):
                continue
            kept = _init_store(facts, cls, attribute)
            if kept is None:
                continue
            names = ", ".join(name for name, _ in models)
            yield Violation(
                node=kept.node,
                message=(
                    f"'{attribute}' keeps {models[0][1].what} that {function.name}() deletes at line "
                    f"{facts.line_of(fact.node)} ('del {names}'): the '{cls.name}' object '{store.name}' stays alive "
                    f"and none of the methods still called on it reads '{attribute}', so the model stays in memory "
                    f"through {_long_work(facts, loop)}"
                ),
                confidence=Confidence.MEDIUM,
                help=f"set '{attribute} = None' once the object no longer needs it (or pass the model only to the method that uses it)",
                statement=kept.line,
            )


def _attributes_read(facts: ModuleFacts, cls: ClassInfo, methods: set[str]) -> set[str]:
    """``self.x`` attributes read by ``methods`` of ``cls`` and the methods they call on ``self``."""
    read: set[str] = set()
    todo, seen = list(methods), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        method = cls.find_method(name)
        if method is None:
            read.add(f"self.{name}")  # an attribute read directly, or a method of a base class: anything
            continue
        for inner in walk(method.body):
            if isinstance(inner, cst.Attribute) and isinstance(inner.value, cst.Name) and inner.value.value == "self":
                read.add(f"self.{inner.attr.value}")
                todo.append(inner.attr.value)
    return read


def _released_by_a_method(facts: ModuleFacts, cls: ClassInfo, attribute: str) -> bool:
    """A method other than ``__init__`` rebinds or deletes ``attribute`` (``self.text_encoders =
    None`` once the captions are encoded): the class lets the model go itself."""
    for name, method in cls.methods.items():
        if name == "__init__":
            continue
        for inner in walk(method.body):
            if isinstance(inner, cst.Assign) and any(dotted_name(t.target) == attribute for t in inner.targets):
                return True
            if isinstance(inner, cst.Del) and attribute in {dotted_name(t) for t in _del_targets(inner)}:
                return True
    return False


def _del_targets(node: cst.Del) -> list[cst.BaseExpression]:
    target = node.target
    return [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]


def _init_store(facts: ModuleFacts, cls: ClassInfo, attribute: str) -> StatementFact | None:
    """The statement of ``cls.__init__`` that assigns ``attribute`` (``self.text_encoders = ...``)."""
    init = cls.find_method("__init__")
    info = facts.structure.functions.get(init) if init is not None else None
    if info is None:
        return None
    for statement in facts.index.statements_of(info):
        node = statement.node
        if isinstance(node, cst.Assign) and any(dotted_name(t.target) == attribute for t in node.targets):
            return statement
    return None


def _name_violation(
    facts: ModuleFacts,
    fact: StatementFact,
    function: FunctionInfo,
    node: cst.Del,
    lingering: list[_Holding],
    loop: _Event,
    confidence: Confidence,
) -> Violation:
    deleted = facts.describe(node)
    first = lingering[0]
    holders = ", ".join(dict.fromkeys(f"'{h.holder}'" for h in lingering))
    if first.holder == first.model:
        what = f"the list holds {first.built.what}, but {holders} still name the models"
        help = f"delete the names too: 'del {', '.join(dict.fromkeys(h.holder for h in lingering))}'"
    else:
        what = f"{holders} still hold {first.built.what} ('{first.model}')"
        help = f"delete {holders} too, or build it only where it is needed"
    where = "the function returns" if function.node is not None else "the script ends"
    return Violation(
        node=node,
        message=(
            f"'{deleted}' frees nothing: {what} and are never read again, so the memory stays taken until "
            f"{where}, through {_long_work(facts, loop)}"
        ),
        confidence=confidence,
        help=help,
        statement=fact.line,
    )
