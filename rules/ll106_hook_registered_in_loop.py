"""LL106 hook-registered-in-loop: a hook registered every iteration and never removed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from leaklint.analysis.torch_api import GLOBAL_HOOK_FUNCTIONS, HOOK_METHODS
from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.prefilter import SyntaxShape


class HookRegisteredInLoop(Rule):
    code = "LL106"
    name = "hook-registered-in-loop"
    severity = Severity.LEAK
    summary = "A module or parameter hook is registered on every iteration and its handle is never removed."
    help = "register the hook once before the loop, or call handle.remove() before the iteration ends"
    docs = """
## What it finds
A call to `register_forward_hook`, `register_forward_pre_hook`, `register_full_backward_hook`,
`register_backward_hook`, `Tensor.register_hook` or `register_module_forward_hook` (and the other
global `register_module_*` hooks) that runs on every iteration of a training or evaluation loop, or
in a function that runs once per iteration (`forward`, `training_step`, a helper called from such a
loop in the same file), on a module or tensor that outlives the iteration, when the returned handle is
not removed in that iteration: it is discarded, kept in a name that the next iteration overwrites,
or appended to a list whose handles are only removed after the loop (or never).

It also finds an object whose class registers hooks in `__init__` (a Grad-CAM or feature-extractor
helper defined in the file, or a `pytorch_grad_cam` CAM class) constructed inside such a loop
without being used as a context manager or having a `remove`/`release`/`close` method called on
it in the same iteration.

A loop counts by what it does, not only by its names: one that trains, reads a data loader or
counts steps (high confidence), or one whose body runs the model (a forward, a backward, or a
function of the file that does) on something computed from its own item, like
`for img in images: model(img)` or `cam(img)` (medium confidence): it repeats once per input, and
the inputs are unbounded.

## Why it matters
Every registration adds one more entry to the module's hook dictionary. Nothing removes it when the
handle or the helper object goes out of scope: the module keeps the hook, the hook keeps everything
it closes over (the helper object, its stored activations, the dict it writes to), and every forward
pass runs all the hooks registered so far. Memory grows and each step gets slower, iteration after
iteration.

## Example
```python
for images, _ in loader:
    cam = GradCAM(model, model.layer4)  # registers hooks on model.layer4 in __init__
    heatmaps.append(cam(images))
```

## Use instead
```python
cam = GradCAM(model, model.layer4)
for images, _ in loader:
    heatmaps.append(cam(images))
cam.remove_hooks()
```

## Fix safety
No automatic fix: removing the hook needs its handle kept and `remove()` called at the right
point (after the forward that needs it, or once after the loop), or the registration moved out of
the loop; either restructures the code.

## Known false positives
A hook on a tensor or module created in the same iteration (`out.register_hook(...)` on a fresh
activation, hooks on a model built inside the loop) dies with it and is not reported; neither is a
registration in a set-up loop over modules or layer names (`for m in model.modules():`,
`for name in ["fc", "head"]:`) that runs the model on none of its items, nor one whose
handle is used as a context manager or passed on to another function or container that leaklint
cannot follow. A hook that removes itself from inside its own body is not recognised: suppress it
with `# noqa: LL106`. A helper class that removes its hooks in a method called every iteration is
recognised by the method's name (`remove...`, `release`, `close`, `unregister...`) or because the
method calls `.remove()`.

## References
- peft: one forward hook registered per `generate` step accumulated because only the last was
  removed: https://github.com/huggingface/peft/pull/2761
- pytorch-grad-cam, memory growing when a CAM object is created in a loop:
  https://github.com/jacobgil/pytorch-grad-cam/issues/132 and
  https://github.com/jacobgil/pytorch-grad-cam/issues/483 (fixed by the `with` statement)
- Forward hooks that outlive a feature extractor keep accumulating features:
  https://github.com/KamitaniLab/bdpy/issues/72
- Discarded `RemovableHandle`s leaking memory over a fault-injection campaign:
  https://github.com/fffasttime/MRFI/pull/5
- `RemovableHandle` and the context-manager form of registration:
  https://github.com/pytorch/pytorch/pull/446
- Runtime repro: `leaklint verify LL106` measures the leaky and the fixed loop body.
"""
    VALID = (
        """
features = {}
handle = model.layer4.register_forward_hook(lambda m, i, o: features.update(out=o.detach()))
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
handle.remove()
""",
        """
for x, y in loader:
    handles = [m.register_forward_hook(save) for m in model.modules()]
    h = model.fc.register_forward_hook(save)
    out = model(x)
    out.register_hook(lambda g: g.clamp(-1, 1))
    h.remove()
    for handle in handles:
        handle.remove()
""",
        """
def attach(model):
    for name, module in model.named_modules():
        module.register_forward_hook(save)
attach(model)
for x, y in loader:
    model(x).sum().backward()
""",
        # set-up loops over layers: bounded, the model runs on none of their items
        """
for layer in model.modules():
    layer.register_forward_hook(save)
for name in ["layer3", "layer4"]:
    getattr(model, name).register_forward_hook(save)
    model(warmup_batch)
for images in gallery:
    show(images)
""",
        """
for images, _ in loader:
    with GradCAM(model, model.layer4) as cam:
        maps = cam(images)
    with model.fc.register_forward_hook(save):
        model(images)
""",
        """
class GradCAM:
    def __init__(self, model, layer):
        self.handles = [layer.register_forward_hook(self.save)]
    def save(self, module, inputs, output):
        self.activations = output.detach()
    def remove_hooks(self):
        for h in self.handles:
            h.remove()
for images, _ in loader:
    cam = GradCAM(model, model.layer4)
    cam(images)
    cam.remove_hooks()
for path in checkpoints:
    model = build_model(path)
    model.fc.register_forward_hook(save)
    for x, _ in loader:
        model(x)
""",
        """
import torch.nn as nn
class SelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, dim)
        self.save_gradients = False
    def save_attn_gradients(self, grad):
        self.attn_gradients = grad
    def forward(self, x):
        probs = self.score(x).softmax(dim=-1)
        if self.save_gradients:
            probs.register_hook(self.save_attn_gradients)
        return probs @ x
""",
    )
    INVALID = (
        """
for x, y in loader:
    model.layer4.register_forward_hook(save_features)  # expect: LL106
    loss = criterion(model(x), y)
    loss.backward()
""",
        """
class GradCAM:
    def __init__(self, model, layer):
        self.model = model
        layer.register_forward_hook(self.save)
    def save(self, module, inputs, output):
        self.activations = output.detach()
    def __call__(self, x):
        return self.model(x)
for images, labels in loader:
    cam = GradCAM(model, model.layer4)  # expect: LL106
    heat = cam(images)
""",
        """
for epoch in range(epochs):
    for p in model.parameters():
        p.register_hook(lambda g: g.clamp(-1, 1))  # expect: LL106
    train_one_epoch(model)
""",
        """
def visualize(model, image):
    feats = {}
    handle = model.layer3.register_forward_hook(lambda m, i, o: feats.update(out=o.detach()))  # expect: LL106
    model(image)
    return feats["out"]
for image, _ in loader:
    visualize(model, image)
""",
        # a loop over inputs with no data-like name: it runs the model (or a helper that does) per item
        """
class GradCAM:
    def __init__(self, model, layer):
        self.model = model
        layer.register_forward_hook(self.save)
    def save(self, module, inputs, output):
        self.activations = output.detach()
    def __call__(self, x):
        return self.model(x)
def explain(model, images):
    maps = []
    for img in images:
        cam = GradCAM(model, model.layer4)  # expect: LL106
        maps.append(cam(img).detach())
    for img in images:
        model.fc.register_forward_hook(lambda m, i, o: print(o.shape))  # expect: LL106
        model(img.unsqueeze(0))
    return maps
""",
        """
from pytorch_grad_cam import GradCAM
handles = []
for step, (x, y) in enumerate(loader):
    handles.append(model.fc.register_forward_hook(save))  # expect: LL106
    h = model.fc.register_full_backward_hook(save_grad)  # expect: LL106
    cam = GradCAM(model=model, target_layers=[model.layer4])  # expect: LL106
    model(x).sum().backward()
for handle in handles:
    handle.remove()
h.remove()
""",
    )

    @classmethod
    def may_report(cls, shape: SyntaxShape, min_confidence: Confidence) -> bool:
        """Hooks are registered with ``register_*hook`` (or by a Grad-CAM helper)."""
        return shape.uses(*HOOK_METHODS, *GLOBAL_HOOK_FUNCTIONS) or shape.mentions("grad_cam")

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        from leaklint.rules.checks.ll106_hook_registered_in_loop import check

        return check(facts)

    class Repro(Rule.Repro):
        """A GradCAM-style helper (hooks that append activations, as pytorch-grad-cam's do) built every
        batch: every old helper's hook still runs and keeps each new output, vs one helper built once."""

        def setup(self, ctx):
            import torch

            class Probe:
                def __init__(self, model, layer):
                    self.model = model
                    self.activations = []
                    layer.register_forward_hook(self.save)
                def save(self, module, inputs, output):
                    self.activations.append(output.detach())
                def __call__(self, x):
                    self.activations = []
                    return self.model(x)

            ctx.Probe = Probe
            ctx.model = torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(ctx.device)
            ctx.images = torch.randn(64, 32, device=ctx.device)
            ctx.cam = None

        def leaky(self, ctx):
            cam = ctx.Probe(ctx.model, ctx.model[0])
            cam(ctx.images)

        def fixed(self, ctx):
            if ctx.cam is None:
                ctx.cam = ctx.Probe(ctx.model, ctx.model[0])
            ctx.cam(ctx.images)
