"""LL309 lingering-reference: a ``del`` meant to free a model that frees nothing, because another
name, container or object still refers to the model while a long loop runs."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from leaklint.analysis import percall_api
from leaklint.analysis.accelerators import is_accelerator
from leaklint.analysis.calls import callee_name, local_callee
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.heavy import Built, argument_for, attributes_from_params, built_here
from leaklint.analysis.names import dotted_name
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.structure import ClassInfo, FunctionInfo
from leaklint.analysis.timeline import EMPTYING_METHODS, FREEING_CALLS, Event, Timeline, del_targets, timeline
from leaklint.analysis.torch_api import MODULE_RETURNS_SELF
from leaklint.analysis.walk import not_into_scopes, walk
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
- **the del removes a name, and another name, a list, tuple, dict or `functools.partial` still
  holds the model**: `del text_encoder_one` while `text_encoders = [text_encoder_one, ...]` (or
  `frozen = text_encoder_one`) stays bound and unused;
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

The work that follows must be able to run after the `del`: not behind a `return` or `raise`
in between, not in the other branch of the `if` that holds the `del`. It stays quiet when the
other reference is read again after the `del` (the model is still needed: the `del` is then
pointless but frees nothing the program could do without); when that reference was handed,
before the `del`, to something that may keep it and still be in use (a `DataLoader` the loop
reads, a function of the file that makes a closure or stores its argument, an item of another
container, an alias, a bound method taken as a hook); when a nested function reads it, or it is a
`global` (it may be read at any time); when it is deleted, rebound or emptied (`.clear()`,
`.pop()`, `del holder[:]`) before the work starts; when the name got another object between the
moment the list took the model and the `del` (`model.to(...)` and `unwrap_model(model)` give
back the same one and do not count); when a method of the holder class rebinds or deletes the
attribute itself, or the holder's methods still called include one inherited from another module
(`model(x)` on a module: its `forward` may read anything); for an Accelerator deleted or rebound
too, or told to `free_memory()`; for parameters (their caller holds the object anyway); and for
a `del` inside a loop.

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
        # A del whose function returns before the loop; a del in one branch of an if, the loop in
        # the other; a list emptied before its models are deleted.
        """
import gc

import torch
from transformers import CLIPTextModel

def cache_or_train(args, unet, optimizer, loader):
    encoder = CLIPTextModel.from_pretrained(args.model).to("cuda")
    encoders = [encoder]
    if args.cache_only:
        torch.save([e(args.ids)[0].cpu() for e in encoders], args.cache_path)
        del encoders
        gc.collect()
        return
    for batch in loader:
        unet(batch).mean().backward()

def precompute_or_train(args, unet, loader):
    encoder = CLIPTextModel.from_pretrained(args.model).to("cuda")
    encoders = [encoder]
    if args.precompute_only:
        torch.save([e(args.ids)[0].cpu() for e in encoders], args.out)
        del encoders
    else:
        for batch in loader:
            unet(batch, encoders[0](batch)).mean().backward()

def encode_then_train(args, unet, loader):
    clip = CLIPTextModel.from_pretrained(args.model).to("cuda")
    encoders = [clip]
    with torch.no_grad():
        embeds = [e(args.ids)[0] for e in encoders]
    encoders.clear()
    del clip
    for batch in loader:
        unet(batch, embeds[0]).mean().backward()
""",
        # The holder is still in use: handed to a DataLoader, a method taken as a hook, a closure
        # made by a helper of the file, a global read by a helper; a holder that is a module
        # itself (its submodule is part of the model being trained).
        """
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
from transformers import CLIPTextModel

class PromptDataset(Dataset):
    def __init__(self, captions, text_encoder):
        self.captions = captions
        self.text_encoder = text_encoder

    def __len__(self):
        return len(self.captions)

    def __getitem__(self, i):
        with torch.no_grad():
            return self.text_encoder(self.captions[i])[0]

class Validator:
    def __init__(self, text_encoder):
        self.text_encoder = text_encoder

    def run(self, unet):
        return unet(self.text_encoder(0)[0])

def make_validation_fn(encoders):
    def validate(unet):
        return unet(encoders[0](0)[0])
    return validate

class Classifier(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(512, 10)

    def forward(self, x):
        return self.head(self.backbone(x))

def train(args, unet, captions):
    text_encoder = CLIPTextModel.from_pretrained(args.model).to("cuda")
    loader = DataLoader(PromptDataset(captions, text_encoder), batch_size=8)
    hooks = {"on_epoch_end": Validator(text_encoder).run}
    encoders = [text_encoder]
    validate = make_validation_fn(encoders)
    backbone = nn.Sequential(nn.Linear(64, 512), nn.ReLU())
    model = Classifier(backbone)
    del text_encoder, backbone
    for epoch in range(args.epochs):
        for cond in loader:
            unet(cond).mean().backward()
            model(cond).sum().backward()
        hooks["on_epoch_end"](unet)
        validate(unet)

def train_with_a_registry(args, unet, loader):
    text_encoder = CLIPTextModel.from_pretrained(args.model).to("cuda")
    encoders = [text_encoder]
    registry = {"encoders": encoders}
    del text_encoder
    for batch in loader:
        unet(batch, registry["encoders"][0](batch)[0]).mean().backward()

def train_with_global(args, unet, loader, check):
    global cached_encoders
    text_encoder = CLIPTextModel.from_pretrained(args.model).to("cuda")
    cached_encoders = [text_encoder]
    del text_encoder
    for step, batch in enumerate(loader):
        unet(batch).mean().backward()
        check(step)
""",
        # An Accelerator's model replaced by another one before the del (the del frees that one), and
        # an Accelerator deleted together with its model.
        """
import gc

import torch
from accelerate import Accelerator
from diffusers import DiffusionPipeline, UNet2DConditionModel

def score_ema(args, loader):
    accelerator = Accelerator()
    unet = UNet2DConditionModel.from_pretrained(args.model, subfolder="unet")
    unet, loader = accelerator.prepare(unet, loader)
    for batch in loader:
        accelerator.backward(unet(batch).sample.mean())
    unet = UNet2DConditionModel.from_pretrained(args.ema_dir, subfolder="unet").to("cuda")
    score = unet(args.probe).sample.mean().item()
    del unet
    for prompt in args.prompts:
        print(prompt, score)

def train_then_sample(args, loader):
    accelerator = Accelerator()
    unet = UNet2DConditionModel.from_pretrained(args.model, subfolder="unet")
    unet, loader = accelerator.prepare(unet, loader)
    for batch in loader:
        accelerator.backward(unet(batch).sample.mean())
    accelerator.end_training()
    del unet, loader, accelerator
    gc.collect()
    pipeline = DiffusionPipeline.from_pretrained(args.output_dir).to("cuda")
    for prompt in args.prompts:
        pipeline(prompt).images[0].save(f"{prompt}.png")
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
        # An alias, a list grown with +=, a list that took the model before '.to()' rebound the
        # name (the same module), and a notebook-style script at the top level.
        """
import gc

import torch
from torch import nn
from transformers import CLIPTextModel

def distill(args, student, loader):
    teacher = CLIPTextModel.from_pretrained(args.teacher).to("cuda")
    frozen_teacher = teacher
    with torch.no_grad():
        targets = [teacher(batch)[0].cpu() for batch in args.probe]
    del teacher  # expect: LL309
    gc.collect()
    for batch, target in zip(loader, targets):
        (student(batch) - target.cuda()).pow(2).mean().backward()

def train(args, transformer, loader):
    clip = CLIPTextModel.from_pretrained(args.model, subfolder="text_encoder").to("cuda")
    t5 = CLIPTextModel.from_pretrained(args.model, subfolder="text_encoder_2").to("cuda")
    encoders = [clip]
    if args.use_t5:
        encoders += [t5]
    with torch.no_grad():
        embeds = [e(args.ids)[0] for e in encoders]
    del clip, t5  # expect: LL309
    for batch in loader:
        transformer(batch, embeds[0]).mean().backward()

def finetune(args, loader):
    transformer = nn.Transformer(d_model=512).cuda()
    models_to_save = [transformer]
    transformer = transformer.to(dtype=torch.bfloat16)
    torch.save(models_to_save[0].state_dict(), args.out)
    del transformer  # expect: LL309
    for batch in loader:
        print(batch)

encoder = CLIPTextModel.from_pretrained("openai/clip-vit-base-patch32").to("cuda")
encoders = [encoder]
with torch.no_grad():
    prompt_embeds = encoders[0](torch.tensor([[1, 2, 3]]))[0]
del encoders  # expect: LL309
for step in range(1000):
    print(prompt_embeds.sum())
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
#: Callables whose result keeps the arguments it is given (``functools.partial``).
KEEPING_CALLS = frozenset({"functools.partial"})
#: Builtins that read their argument and keep no reference to it.
KEEPS_NOTHING = frozenset({"len", "isinstance", "print", "str", "repr", "id", "type", "hasattr", "bool", "int", "float"})
#: Calls that give back the very model they are handed (or one that the handed object wraps):
#: ``model = model.to(device)``, ``unet = accelerator.unwrap_model(unet)`` rebind a name to it.
SAME_MODEL_CALLS = frozenset({"unwrap_model"})


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """One violation per ``del`` that frees no model because another name or object still holds it."""
    for fact in facts.statements():
        node = fact.node
        if not isinstance(node, cst.Del) or fact.loops:
            continue
        function = fact.function
        line = timeline(facts, function)
        marker = line.statement_event(node)
        if marker is None:
            continue
        index = line.index(marker)
        work = _long_work_after(facts, function, line, index, node)
        if work is None:
            continue  # nothing long runs after the del: the names go with the function
        deleted = {target.value for target in del_targets(node) if isinstance(target, cst.Name)}
        confidence = Confidence.HIGH if _frees_after(line, index, work) else Confidence.MEDIUM
        context = _Context(facts, function, line, index, deleted, work)
        lingering = _names_left_holding(context)
        prepared = _prepared(context)
        if lingering:
            yield _name_violation(context, fact, node, lingering, confidence, prepared)
        elif prepared is not None:
            yield _prepared_violation(context, fact, node, prepared)
        yield from _objects_left_holding(context, fact)


@dataclass(frozen=True)
class _Context:
    """One ``del`` statement: where it is, what it deletes, and the long work that follows it."""

    facts: ModuleFacts
    function: FunctionInfo
    line: Timeline
    index: int
    deleted: set[str]
    work: Event

    @property
    def work_index(self) -> int:
        return self.line.index(self.work)


def _long_work_after(facts: ModuleFacts, function: FunctionInfo, line: Timeline, index: int, node: cst.Del) -> Event | None:
    """The first long-running thing that can run after the ``del``: a loop, or a call of a
    function of the file that runs one (a final validation helper)."""
    for event in line.between(index, len(line.events)):
        if event.kind == "loop" or (event.kind == "call" and event.name and _runs_a_loop(facts, event.node, function)):  # type: ignore[arg-type]
            if line.reachable(node, event.node):
                return event
    return None


def _frees_after(line: Timeline, index: int, work: Event) -> bool:
    """A memory-freeing call (``gc.collect()``, ``torch.cuda.empty_cache()``) follows the ``del``
    before the long work: the author means to give the memory back."""
    return any(
        event.kind == "call" and callee_name(event.node.func) in FREEING_CALLS  # type: ignore[arg-type]
        for event in line.between(index, line.index(work))
    )


def _runs_a_loop(facts: ModuleFacts, call: cst.Call, function: FunctionInfo) -> bool:
    """``call`` calls a function of the file whose own body has a loop."""
    callee = local_callee(call, function, facts)
    if callee is None or callee.node is None:
        return False
    return any(type(node) in (cst.For, cst.While) for node in walk(callee.node.body, into=not_into_scopes))


def _describe_work(facts: ModuleFacts, event: Event) -> str:
    """How a message names what runs after the ``del``: the loop, or the call that loops."""
    if event.kind == "loop":
        return f"the loop at line {facts.line_of(event.node)}"
    return f"'{event.name}()' at line {facts.line_of(event.node)}, which loops"


# --- names and containers that still hold the model -------------------------------------------------
@dataclass(frozen=True)
class _Holding:
    """``holder`` (a name the ``del`` leaves) still refers to ``model`` (one the ``del`` meant to free)."""

    holder: str
    model: str
    built: Built


def _names_left_holding(context: _Context) -> list[_Holding]:
    """Names that still hold a model the ``del`` meant to free, that nothing reads again, that
    nothing was handed that could keep them, and that stay bound through the work that follows:
    the elements of a deleted list (``del text_encoders`` leaves ``text_encoder_one``), or a list,
    tuple, dict, alias or ``functools.partial`` that holds a deleted model (``del text_encoder_one``
    leaves ``text_encoders``)."""
    facts, line, index = context.facts, context.line, context.index
    found: list[_Holding] = []
    for name in sorted(context.deleted):
        store = line.last_store_before(index, name)
        value = store.value if store is not None else None
        for element in _held_names(facts, value):
            if element in context.deleted:
                continue
            built = _model(facts, context.function, element)
            if built is not None and _idle(context, element, 0, inside=value) and not _emptied(context, name, store):
                found.append(_Holding(element, element, built))
        built = _model(facts, context.function, name)
        if built is None:
            continue
        for holder_store in [e for e in line.events[:index] if e.kind == "store" and not e.nested and e.value is not None]:
            holder = holder_store.name
            if holder in context.deleted or holder == name or name not in _held_names(facts, holder_store.value):
                continue
            if (
                line.last_store_before(index, holder) is holder_store
                and not _rebound_to_another(context, name, line.index(holder_store))
                and not _emptied(context, holder, holder_store)
                and _idle(context, holder, line.index(holder_store))
            ):
                found.append(_Holding(holder, name, built))
    return found


def _held_names(facts: ModuleFacts, value: cst.BaseExpression | None) -> list[str]:
    """The plain names a value keeps: itself (an alias), the items of a list, tuple, set or dict
    literal, the arguments of ``functools.partial``."""
    if isinstance(value, cst.Name):
        return [value.value]
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
    """The model, pipeline or trainer ``name`` holds, when ``function`` (or the script, at the
    top level) builds it itself."""
    if name in function.params:
        return None
    if function.node is not None:
        return built_here(cst.Name(name), function, facts)
    for value in facts.index.module_values(name):
        found = built_here(value, function, facts)
        if found is not None:
            return found
    return None


def _idle(context: _Context, name: str, since: int, inside: cst.CSTNode | None = None) -> bool:
    """``name`` is kept for nothing: a local never read after the ``del``, still bound when the
    long work starts, and not handed, since event ``since``, to anything that could keep it
    (``inside``: the deleted list's own literal, where it is an item)."""
    line = context.line
    if name in context.function.params or name in line.outer_names or line.read_by_closure(name):
        return False
    first = line.first_after(context.index, name)
    if first is not None and (first.kind != "store" and first.kind != "del" or line.index(first) < context.work_index):
        return False  # read again (still needed), or released before the work
    return not _escaped(context, name, since, inside)


def _escaped(context: _Context, name: str, since: int, inside: cst.CSTNode | None) -> bool:
    """Between event ``since`` and the ``del``, ``name`` was handed to something that may keep it:
    a function of the file that can capture its argument (it defines a nested function, or stores
    into an attribute, an item or a global), a call of another package whose result the code reads
    after the ``del`` (``DataLoader(dataset)``), or any other place (an alias, a container literal,
    a return value): the model may still be in use."""
    facts, line = context.facts, context.line
    for event in line.between(since - 1 if since else -1, context.index):
        if event.name != name or event.kind != "load":
            continue
        if inside is not None and any(node is event.node for node in walk(inside)):
            continue
        call = event.argument_of
        if call is None:
            if line.kept_by_its_place(event):
                return True
            continue
        if callee_name(call.func) in KEEPS_NOTHING and isinstance(call.func, cst.Name):
            continue
        callee = local_callee(call, context.function, facts)
        if callee is not None and callee.node is not None:
            if _can_keep_arguments(callee.node):
                return True
            continue
        call_event = next((e for e in line.events if e.node is call and e.kind == "call"), None)
        targets = call_event.targets if call_event is not None else ()
        if any(line.read_after(context.index, target) for target in targets):
            return True
    return False


def _can_keep_arguments(function: cst.FunctionDef) -> bool:
    """The function defines a nested function or lambda (a closure over its arguments), or stores
    into an attribute or an item, or declares a global."""
    for node in walk(function.body):
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Global, cst.Nonlocal)):
            return True
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            if any(isinstance(target, (cst.Attribute, cst.Subscript)) for target in targets):
                return True
    return False


def _emptied(context: _Context, holder: str, store: Event | None) -> bool:
    """``holder`` had its items taken out after ``store`` and before the work (``.clear()``,
    ``.pop()``, ``del holder[:]``)."""
    start = context.line.index(store) if store is not None else -1
    return any(
        event.kind == "method" and event.name == holder and event.attribute in EMPTYING_METHODS
        for event in context.line.between(start, context.work_index)
    )


def _rebound_to_another(context: _Context, name: str, since: int) -> bool:
    """``name`` gets another object after event ``since`` and before the ``del``: what was kept
    then is not what the ``del`` deletes. ``name.to(device)``, ``unwrap_model(name)`` and the like
    give back the same model (or the one it wraps) and do not count."""
    for event in context.line.between(since, context.index):
        if event.kind == "store" and event.name == name and not _same_model(event.value, name):
            return True
    return False


def _same_model(value: cst.BaseExpression | None, name: str) -> bool:
    """``name.to(device).eval()``, ``accelerator.unwrap_model(name)``: the model ``name`` held."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in MODULE_RETURNS_SELF:
        value = value.func.value
    if isinstance(value, cst.Name):
        return value.value == name
    if isinstance(value, cst.Call) and callee_name(value.func) in SAME_MODEL_CALLS and value.args:
        return isinstance(value.args[0].value, cst.Name) and value.args[0].value.value == name
    return False


def _name_violation(
    context: _Context, fact: StatementFact, node: cst.Del, lingering: list[_Holding], confidence: Confidence, prepared: _Prepared | None
) -> Violation:
    facts = context.facts
    first = lingering[0]
    holders = ", ".join(dict.fromkeys(f"'{h.holder}'" for h in lingering))
    if first.holder == first.model:
        what = f"the list holds {first.built.what}, but {holders} still name the models"
        help = f"delete the names too: 'del {', '.join(dict.fromkeys(h.holder for h in lingering))}'"
    else:
        what = f"{holders} still hold {first.built.what} ('{first.model}')"
        help = f"delete {holders} too, or build it only where it is needed"
    where = "the function returns" if context.function.node is not None else "the script ends"
    also = ""
    if prepared is not None:
        accelerator = facts.describe(prepared.call.func.value)  # type: ignore[attr-defined]
        also = (
            f"; the Accelerator that prepared '{prepared.model}' (line {facts.line_of(prepared.call)}) keeps it too, "
            f"until '{accelerator}.free_memory()'"
        )
        help += f", and call '{accelerator}.free_memory()'"
    return Violation(
        node=node,
        message=(
            f"'{facts.describe(node)}' frees nothing: {what} and are never read again, so the memory stays taken until "
            f"{where}, through {_describe_work(facts, context.work)}{also}"
        ),
        confidence=confidence,
        help=help,
        statement=fact.line,
    )


# --- an Accelerator that prepared the model -------------------------------------------------------
@dataclass(frozen=True)
class _Prepared:
    """``model`` (deleted) was handed to ``call`` (``accelerator.prepare(...)``), whose Accelerator
    keeps it until ``free_memory()``."""

    model: str
    built: Built
    call: cst.Call


def _prepared(context: _Context) -> _Prepared | None:
    """A deleted model that an Accelerator prepared on every path to the ``del`` (a prepare in a
    branch may not be the one that ran), still that model at the ``del``, with the Accelerator
    still alive and no ``free_memory()`` / ``clear()`` on it before the work that follows: the
    Accelerator still holds the model (its ``_models`` list)."""
    facts, line, function = context.facts, context.line, context.function
    for event in line.between(-1, context.index):
        call = event.node
        if event.kind != "call" or event.guarded or not isinstance(call, cst.Call) or callee_name(call.func) not in percall_api.PREPARE_METHODS:
            continue
        if not isinstance(call.func, cst.Attribute) or not is_accelerator(call.func.value, function, facts):
            continue
        accelerator = dotted_name(call.func.value)
        if accelerator is None or accelerator in context.deleted or _released(context, accelerator, line.index(event)):
            continue
        handed = {arg.value.value for arg in call.args if isinstance(arg.value, cst.Name) and arg.keyword is None}
        since = _after_own_assignment(line, event)
        for name in sorted(handed & context.deleted):
            built = _model(facts, function, name)
            if built is not None and not _rebound_to_another(context, name, since):
                return _Prepared(name, built, call)
    return None


def _after_own_assignment(line: Timeline, call: Event) -> int:
    """The last event of the statement that assigns ``call``'s result (``unet, opt =
    accelerator.prepare(unet, opt)``): its own stores are the prepared objects, not new ones."""
    position = line.index(call)
    pending = set(call.targets)
    for event in line.events[position + 1 :]:
        if not pending:
            break
        if event.kind == "store" and event.name in pending:
            pending.discard(event.name)
            position = line.index(event)
    return position


def _released(context: _Context, accelerator: str, since: int) -> bool:
    """``accelerator.free_memory()`` (or ``clear()``) runs after event ``since`` and before the
    work, or the Accelerator's name is deleted or rebound before the work."""
    for event in context.line.between(since, context.work_index):
        if event.kind == "method" and event.name == accelerator and event.attribute in percall_api.ACCELERATOR_RELEASE_METHODS:
            return True
        if event.name == accelerator and event.kind in ("del", "store"):
            return True
    return False


def _prepared_violation(context: _Context, fact: StatementFact, node: cst.Del, prepared: _Prepared) -> Violation:
    facts = context.facts
    accelerator = facts.describe(prepared.call.func.value)  # type: ignore[attr-defined]
    return Violation(
        node=node,
        message=(
            f"'{facts.describe(node)}' frees nothing: '{prepared.model}' ({prepared.built.what}) went through "
            f"'{facts.describe(prepared.call)}' at line {facts.line_of(prepared.call)}, and the Accelerator keeps every "
            f"model it prepared until '{accelerator}.free_memory()': the memory stays taken through "
            f"{_describe_work(facts, context.work)}"
        ),
        confidence=Confidence.MEDIUM,
        help=f"call '{accelerator}.free_memory()' (it empties the Accelerator's lists) before deleting the model",
        statement=fact.line,
    )


# --- an object of the file that keeps the model ---------------------------------------------------
def _objects_left_holding(context: _Context, fact: StatementFact) -> Iterator[Violation]:
    """An object of a class of the file, given the deleted model at construction, keeps it in an attribute (``self.text_encoders =
    text_encoders``) that none of the methods the function still calls on it reads, and the object
    was handed nowhere else: reported at that attribute, the reference to drop when it is no
    longer needed."""
    facts, line, function = context.facts, context.line, context.function
    kept_params = attributes_from_params(facts)
    for store in [e for e in line.events[: context.index] if e.kind == "store" and not e.nested]:
        call = store.value
        if store.name in context.deleted or not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name):
            continue
        cls = facts.structure.classes_by_name.get(call.func.value)
        if cls is None or cls not in kept_params or line.last_store_before(context.index, store.name) is not store:
            continue
        first = line.first_after(context.index, store.name)
        if first is not None and first.kind in ("store", "del") and line.index(first) < context.work_index:
            continue  # the holder goes before the work
        used = _methods_called(context, store.name, line.index(store), cls)
        if used is None or store.name in line.outer_names or line.read_by_closure(store.name):
            continue
        read = _attributes_read(cls, used)
        for param, attribute in sorted(kept_params[cls].items()):
            argument = argument_for(call, cls, param, facts)
            passed = [argument.value] if isinstance(argument, cst.Name) else _held_names(facts, argument)
            models = [(name, built) for name in passed if name in context.deleted and (built := _model(facts, function, name)) is not None]
            if not models or read is None or attribute in read or _released_by_a_method(cls, attribute):
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
                    f"through {_describe_work(facts, context.work)}"
                ),
                confidence=Confidence.MEDIUM,
                help=f"set '{attribute} = None' once the object no longer needs it (or pass the model only to the method that uses it)",
                statement=kept.line,
            )


def _methods_called(context: _Context, holder: str, since: int, cls: ClassInfo) -> set[str] | None:
    """The methods called on ``holder`` after the ``del`` (``cache.load(i)`` → ``load``;
    ``cache[i]`` → ``__getitem__``), or None when the object was handed on, or a method of it
    taken as a value (``hooks = {"end": validator.run}``), after event ``since``: anything may
    use it then."""
    line = context.line
    if _escaped(context, holder, since + 1, None):
        return None
    methods: set[str] = set()
    for event in line.between(since, len(line.events)):
        if event.name != holder:
            continue
        if event.kind == "load":
            if line.index(event) > context.index:
                return None
        elif event.kind == "member" and event.attribute in cls.methods:
            return None  # a bound method handed on
        elif event.kind in ("method", "member") and line.index(event) > context.index:
            methods.add(event.attribute)
    return methods


def _attributes_read(cls: ClassInfo, methods: set[str]) -> set[str] | None:
    """``self.x`` attributes read by ``methods`` of ``cls`` and the methods they call on ``self``
    (``self(...)`` runs ``__call__``/``forward``), or None when one of them is inherited from a
    class of another module (it may read anything)."""
    read: set[str] = set()
    todo, seen = list(methods), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        method = cls.find_method(name)
        if method is None:
            if cls.has_unknown_bases or cls.qualified_bases:
                return None
            read.add(f"self.{name}")  # an attribute read directly
            continue
        for inner in walk(method.body):
            if isinstance(inner, cst.Attribute) and isinstance(inner.value, cst.Name) and inner.value.value == "self":
                read.add(f"self.{inner.attr.value}")
                todo.append(inner.attr.value)
            elif isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "self":
                todo.extend(("__call__", "forward"))
    return read


def _released_by_a_method(cls: ClassInfo, attribute: str) -> bool:
    """A method other than ``__init__`` rebinds or deletes ``attribute`` (``self.text_encoders =
    None`` once the captions are encoded): the class lets the model go itself."""
    for name, method in cls.methods.items():
        if name == "__init__":
            continue
        for inner in walk(method.body):
            if isinstance(inner, cst.Assign) and any(dotted_name(t.target) == attribute for t in inner.targets):
                return True
            if isinstance(inner, cst.Del) and attribute in {dotted_name(t) for t in del_targets(inner)}:
                return True
    return False


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
