"""What leaklint knows about the torch API: which calls make, keep or drop an autograd graph.

Kept in one table-like module so a reader can check (and extend) the knowledge in one place; the
provenance pass reads these sets and never hard-codes an API name itself. The rules'
gate needs (:mod:`leaklint.gate`) read them too, before any file needs libcst: this module imports
nothing from libcst or the rest of the analysis.
"""

from __future__ import annotations

import ast
import enum
import re
from collections.abc import Mapping
from typing import TypeVar

from leaklint.gate import LOOPS, Names, Syntax, Words

# --- gradient-mode switches (qualified names after import resolution) -------------------------
NO_GRAD_CONTEXTS = frozenset(
    {
        "torch.no_grad",
        "torch.autograd.no_grad",
        "torch.autograd.grad_mode.no_grad",
        "torch.inference_mode",
        "torch.autograd.inference_mode",
        "torch.autograd.grad_mode.inference_mode",
    }
)
ENABLE_GRAD_CONTEXTS = frozenset(
    {"torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"}
)
SET_GRAD_ENABLED = frozenset(
    {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"}
)
INFERENCE_MODE = frozenset(
    {"torch.inference_mode", "torch.autograd.inference_mode", "torch.autograd.grad_mode.inference_mode"}
)

# --- memory management -------------------------------------------------------------------------
EMPTY_CACHE = frozenset(
    {
        "torch.cuda.empty_cache",
        "torch.cuda.memory.empty_cache",
        "torch.mps.empty_cache",
        "torch.mps.memory.empty_cache",
        "torch.xpu.empty_cache",
        "torch.xpu.memory.empty_cache",
        "torch.accelerator.empty_cache",
        "torch.accelerator.memory.empty_cache",
    }
)
#: Python's full collection, which training code calls next to ``empty_cache()``.
GC_COLLECT = "gc.collect"

#: ``nn.Module`` itself, as a base class: a subclass of it has only the layers its ``__init__`` builds.
PLAIN_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "torch.nn.modules.Module"})

# --- frameworks --------------------------------------------------------------------------------
#: Packages whose classes run their subclasses' step and epoch hooks themselves (Lightning's
#: fit loop, Keras's ``fit``, the transformers and TRL trainers, Ignite, fastai, Catalyst,
#: Composer): a hook of such a subclass has callers the linted code does not show.
FRAMEWORK_PACKAGES = frozenset(
    {"lightning", "pytorch_lightning", "keras", "tensorflow", "tf_keras", "transformers", "trl", "setfit",
     "sentence_transformers", "accelerate", "ignite", "fastai", "catalyst", "composer", "lightning_fabric", "mmengine", "detectron2"}
)
LIGHTNING_MODULES = frozenset(
    {
        "pytorch_lightning.LightningModule",
        "pytorch_lightning.core.LightningModule",
        "pytorch_lightning.core.module.LightningModule",
        "lightning.LightningModule",
        "lightning.pytorch.LightningModule",
        "lightning.pytorch.core.LightningModule",
        "lightning.pytorch.core.module.LightningModule",
    }
)
#: Lightning runs these hooks with gradients disabled.
#: Lightning's ``Trainer`` class under the names it is imported by (``detect_anomaly=True`` turns on
#: torch's anomaly mode for every step; ``predict()`` keeps every batch's prediction).
LIGHTNING_TRAINERS = frozenset(
    {
        "pytorch_lightning.Trainer", "pytorch_lightning.trainer.Trainer", "pytorch_lightning.trainer.trainer.Trainer",
        "lightning.Trainer", "lightning.pytorch.Trainer", "lightning.pytorch.trainer.Trainer",
    }
)
LIGHTNING_NO_GRAD_HOOKS = frozenset({"validation_step", "test_step", "predict_step"})

# --- losses ------------------------------------------------------------------------------------
_FUNCTIONAL_LOSSES = frozenset(
    {
        "cross_entropy",
        "nll_loss",
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
        "kl_div",
        "ctc_loss",
    }
)


def is_functional_loss(qualified: str) -> bool:
    """``torch.nn.functional.mse_loss`` and friends."""
    module, _, name = qualified.rpartition(".")
    return module == "torch.nn.functional" and (name.endswith("_loss") or name in _FUNCTIONAL_LOSSES)


def is_loss_class(qualified: str) -> bool:
    """``torch.nn.CrossEntropyLoss`` and friends (the instances are loss functions)."""
    module, _, name = qualified.rpartition(".")
    return module in ("torch.nn", "torch.nn.modules.loss") and name.endswith("Loss")


#: Local names that, when called, are taken to compute a loss (medium confidence: names only).
LOSS_FUNCTION_NAME = re.compile(r"^(criterion|.*_criterion|criterion_.*|loss_fn|loss_func|loss_function|lossfn|.*_loss_fn|loss_fn_.*|compute_loss|.*_loss_func)$")

# --- models ------------------------------------------------------------------------------------
_TORCH_NN_NON_MODULES = frozenset({"Parameter", "ParameterList", "ParameterDict", "init", "functional", "utils"})


def is_module_class(qualified: str) -> bool:
    """``torch.nn.Linear``, ``torch.nn.Sequential``, ``torch.nn.DataParallel``... (not losses)."""
    module, _, name = qualified.rpartition(".")
    if not name[:1].isupper() or name in _TORCH_NN_NON_MODULES or is_loss_class(qualified):
        return False
    return module.startswith("torch.nn") or module in ("torchvision.ops",)


def is_module_base(qualified: str) -> bool:
    """Base classes that make a class an ``nn.Module`` subclass."""
    return (
        is_module_class(qualified)
        or qualified in LIGHTNING_MODULES
        or qualified.startswith("transformers.") and qualified.endswith(("PreTrainedModel", "Model"))
        or qualified == "timm.models.VisionTransformer"
    )


#: Bases that add no members a method could call as ``self.x(...)``.
_MEMBERLESS_BASES = frozenset({"object", "abc.ABC", "typing.Generic", "typing.Protocol"})


def has_known_members(qualified: str) -> bool:
    """Whether every member a subclass inherits from ``qualified`` is known to leaklint: a
    ``torch.nn`` module class (``MODULE_API_METHODS``), a Lightning module
    (``LIGHTNING_API_METHODS``), or a base that adds nothing."""
    return is_module_class(qualified) or qualified in LIGHTNING_MODULES or qualified in _MEMBERLESS_BASES


#: Bases of a custom autograd function: its ``forward`` runs with gradient recording off, and
#: its ``ctx`` lives as long as the graph node it belongs to.
AUTOGRAD_FUNCTION_BASES = frozenset(
    {
        "torch.autograd.Function", "torch.autograd.function.Function", "torch.autograd.function.InplaceFunction",
        "torch.autograd.function.NestedIOFunction", "torch.autograd.InplaceFunction",
    }
)


#: ``torch.nn`` modules without parameters: calling one records a graph only through its input.
PARAMETERLESS_MODULES = frozenset(
    {
        "ReLU", "ReLU6", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax", "Softmax2d", "LogSoftmax", "Softmin",
        "Softplus", "Softsign", "LeakyReLU", "ELU", "CELU", "SELU", "GLU", "Hardtanh", "Hardswish", "Hardsigmoid",
        "Hardshrink", "Softshrink", "Tanhshrink", "Mish", "LogSigmoid", "Threshold", "Identity", "Flatten",
        "Unflatten", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
        "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
        "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
        "LPPool1d", "LPPool2d", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle",
        "PixelUnshuffle", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
        "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
        "ReplicationPad3d", "ChannelShuffle", "Fold", "Unfold", "CosineSimilarity", "PairwiseDistance",
    }
)


#: ``torch.nn`` containers built from the modules they are given: they add no parameter of their own.
CONTAINER_MODULES = frozenset({"Sequential", "ModuleList"})


def is_parameterless_module(qualified: str) -> bool:
    """``torch.nn.ReLU``, ``torch.nn.CosineSimilarity``...: a module class with no parameter of
    its own (an output has a graph only through a graph-attached input)."""
    module, _, name = qualified.rpartition(".")
    return module.startswith("torch.nn") and name in PARAMETERLESS_MODULES


#: Calls that return their first argument's model compiled or traced: the same parameters.
MODEL_WRAPPERS = frozenset({"torch.compile", "torch.jit.script", "torch.jit.trace"})


#: transformers' model classes (``BertModel``, ``GPT2LMHeadModel``, ``T5ForConditionalGeneration``),
#: not its configs, tokenizers, processors or trainers.
_TRANSFORMERS_MODEL_CLASS = re.compile(r"\.(?!Auto|TF|Flax|PreTrained)[A-Z]\w*(Model|For[A-Z]\w+)$")


def is_model_factory(qualified: str) -> bool:
    """Calls that return a model: torchvision/timm factories, ``*.from_pretrained`` model classes."""
    if qualified.startswith("torchvision.models.") and qualified.rsplit(".", 1)[-1][:1].islower():
        return True
    if qualified in ("timm.create_model", "torch.hub.load", "torch.compile", "torch.jit.script", "torch.jit.trace"):
        return True
    if qualified.startswith("transformers.") and qualified.count(".") == 1 and _TRANSFORMERS_MODEL_CLASS.search(qualified):
        return True  # GPT2LMHeadModel(config): a model class built directly
    if qualified.startswith(("transformers.", "diffusers.", "peft.")) and qualified.endswith(
        (".from_pretrained", ".from_config", "get_peft_model")
    ):
        owner = qualified.rsplit(".", 2)[-2] if qualified.count(".") >= 2 else ""
        if calls_run_without_grad(qualified.rsplit(".", 1)[0]):
            return False
        return "Tokenizer" not in owner and "Processor" not in owner and "Config" not in owner
    return False


def calls_run_without_grad(qualified_class: str) -> bool:
    """Library classes whose instances record no graph when called: their ``__call__`` is
    decorated with ``@torch.no_grad()``. Every diffusers pipeline is (``DiffusionPipeline``,
    ``StableDiffusionPipeline``, ``AutoPipelineForText2Image``...), and so is what transformers'
    ``pipeline()`` builds (its ``__call__`` runs the model under ``torch.no_grad()``)."""
    owner = qualified_class.rsplit(".", 1)[-1]
    return (qualified_class.startswith("diffusers.") and "Pipeline" in owner) or qualified_class == "transformers.pipeline"


#: ``torch.hub.load`` repositories (``owner/name``, any ``:ref``) whose entry points return a
#: wrapper that runs its forward without recording a graph, and the keyword arguments, with the
#: values they must keep, under which they do. YOLOv5's ``hubconf._create(name, pretrained=True,
#: channels=3, classes=80, autoshape=True, ...)`` wraps the detection model in ``AutoShape`` only
#: when ``autoshape`` and ``pretrained`` are true, ``channels == 3`` and ``classes == 80``
#: (classification and segmentation checkpoints stay unwrapped), and ``AutoShape.forward`` is
#: decorated ``@smart_inference_mode()``, i.e. ``torch.inference_mode()``:
#: https://github.com/ultralytics/yolov5/blob/master/hubconf.py and
#: https://github.com/ultralytics/yolov5/blob/master/models/common.py (class AutoShape). With
#: ``autoshape=False`` (or another value, or an argument passed by position) hub returns the raw
#: model, which records a graph.
HUB_MODELS_WITHOUT_GRAD: dict[str, dict[str, object]] = {
    "ultralytics/yolov5": {"autoshape": True, "pretrained": True, "channels": 3, "classes": 80},
}
#: Checkpoint names of such a repository's ``custom`` entry point that are not wrapped
#: (YOLOv5's ``*-cls.pt`` classifiers and ``*-seg.pt`` segmenters are "not yet AutoShape compatible").
HUB_UNWRAPPED_CHECKPOINTS = re.compile(r"-(cls|seg)\b", re.IGNORECASE)


def hub_model_runs_without_grad(repo: object, entry: object, keywords: dict[str, object], positional: tuple[object, ...]) -> bool:
    """``torch.hub.load(repo, entry, *positional, **keywords)`` (literals as Python values, anything
    else as ``None``) returns a wrapper whose calls record no graph (see ``HUB_MODELS_WITHOUT_GRAD``)."""
    if not isinstance(repo, str) or not isinstance(entry, str):
        return False
    if keywords.get("source", "github") != "github":
        return False  # a local directory: whatever it holds
    required = HUB_MODELS_WITHOUT_GRAD.get(repo.split(":", 1)[0].lower())
    if required is None:
        return False
    if entry == "custom":
        path = positional[0] if positional else keywords.get("path")
        if len(positional) > 1 or (isinstance(path, str) and HUB_UNWRAPPED_CHECKPOINTS.search(path)):
            return False
    elif positional:
        return False  # yolov5s(pretrained, channels, classes, autoshape, ...) by position
    return all(keywords.get(name, value) == value and type(keywords.get(name, value)) is type(value) for name, value in required.items())


#: Methods whose call on a name is evidence that the name is an ``nn.Module``.
MODULE_EVIDENCE_METHODS = frozenset(
    {
        "eval",
        "train",
        "parameters",
        "named_parameters",
        "state_dict",
        "load_state_dict",
        "modules",
        "named_modules",
        "children",
        "requires_grad_",
        "register_forward_hook",
        "register_full_backward_hook",
    }
)
#: ``nn.Module``'s own methods (and Lightning's): ``self.named_modules()`` inside a module calls
#: one of them, not a submodule. (``forward`` is left out: ``self.forward(x)`` is a forward pass.)
MODULE_API_METHODS = frozenset(
    {
        "add_module", "apply", "bfloat16", "buffers", "children", "compile", "cpu", "cuda", "double", "eval",
        "extra_repr", "float", "get_buffer", "get_extra_state", "get_parameter", "get_submodule", "half", "ipu",
        "load_state_dict", "modules", "mtia", "named_buffers", "named_children", "named_modules",
        "named_parameters", "parameters", "register_backward_hook", "register_buffer", "register_forward_hook",
        "register_forward_pre_hook", "register_full_backward_hook", "register_full_backward_pre_hook",
        "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook", "register_module",
        "register_parameter", "register_state_dict_post_hook", "register_state_dict_pre_hook", "requires_grad_",
        "set_extra_state", "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train", "type",
        "xpu", "zero_grad",
    }
)
#: ``nn.Module`` methods that give the module's own parameters, buffers or submodules.
MODULE_COLLECTION_METHODS = frozenset(
    {"parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children", "modules", "named_modules"}
)
LIGHTNING_API_METHODS = frozenset(
    {
        "log", "log_dict", "print", "save_hyperparameters", "manual_backward", "optimizers", "lr_schedulers",
        "all_gather", "toggle_optimizer", "untoggle_optimizer", "clip_gradients", "configure_gradient_clipping",
        "freeze", "unfreeze", "to_onnx", "to_torchscript", "backward", "optimizer_step", "optimizer_zero_grad",
    }
)
#: Module methods that return the module itself.
MODULE_RETURNS_SELF = frozenset({"to", "cuda", "cpu", "train", "eval", "half", "float", "double", "bfloat16", "requires_grad_", "apply", "share_memory"})
#: Parameter / variable names that suggest a model (low confidence on their own).
MODEL_NAME = re.compile(
    r"^(model|net|network|module|backbone|encoder|decoder|classifier|generator|discriminator|teacher|student|"
    r"[a-z0-9_]*_model|model_[a-z0-9_]*|[a-z0-9_]*_net|net_[a-z0-9]+|net[GD]|net_[GD])$"
)
#: Names that suggest a graph tensor (low confidence on their own).
GRAPH_TENSOR_NAME = re.compile(r"^(loss|losses|[a-z0-9_]*_loss|loss_[a-z0-9_]*|[a-z0-9_]*_losses)$")

# --- what graph evidence needs (for the gate, leaklint/gate.py) -------------------------
#: Identifiers a file must use for any value in it to be graph-attached at medium confidence or
#: above: a backward call, the torch.nn namespace (module classes, losses, functional losses), a
#: model library or factory, or a method only modules have. Names alone (``loss``, ``model``) are
#: low-confidence evidence and need none of these.
GRAPH_EVIDENCE_IDENTIFIERS = frozenset(
    {
        "backward", "manual_backward", "grad", "nn", "torchvision", "timm", "transformers", "diffusers", "peft",
        "lightning", "pytorch_lightning", "LightningModule", "hub", "compile", "jit",
    }
) | MODULE_EVIDENCE_METHODS


def is_graph_evidence_identifier(name: str) -> bool:
    """Whether using ``name`` may make some value graph-attached above low confidence."""
    return (
        name in GRAPH_EVIDENCE_IDENTIFIERS
        or name.endswith(("_loss", "Loss"))
        or name in _FUNCTIONAL_LOSSES
        or bool(LOSS_FUNCTION_NAME.match(name))
    )


# --- data and optimisers -----------------------------------------------------------------------
#: Classes whose instances yield batches: torch's DataLoader and the loaders of libraries built on it.
DATA_LOADER_CLASSES = frozenset(
    {
        "torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader",
        "torch_geometric.loader.DataLoader", "torch_geometric.data.DataLoader", "torch_geometric.loader.NeighborLoader",
        "torch_geometric.loader.LinkNeighborLoader", "dgl.dataloading.GraphDataLoader", "dgl.dataloading.DataLoader",
        "monai.data.DataLoader", "monai.data.ThreadDataLoader", "torchdata.stateful_dataloader.StatefulDataLoader",
    }
)
#: Libraries whose loader classes are DataLoaders of their own data (PyG's ``ClusterLoader``,
#: DGL's ``GraphDataLoader``): iterating one yields a batch per iteration.
_DATA_LOADER_MODULES = ("torch_geometric.loader.", "torch_geometric.data.", "dgl.dataloading.")


#: Dataset classes: iterating one yields its samples, one ``__getitem__`` after another.
DATASET_BASES = frozenset(
    {
        "torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset", "torch.utils.data.IterableDataset",
        "torch.utils.data.dataset.IterableDataset",
    }
)
#: Packages of datasets whose samples are images or tensors (``torchvision.datasets.CIFAR10(...)``).
DATASET_PACKAGES = ("torchvision.datasets.",)
#: Functions (by their last name) that return the loader they get first, wrapped (accelerate's).
WRAPPING_FUNCTIONS = frozenset({"skip_first_batches"})
#: itertools functions whose result yields the items of the iterable they get first.
ITERATING_ITERTOOLS = frozenset(f"itertools.{name}" for name in ("chain", "islice", "cycle", "compress"))


#: Packages whose functions and attributes give paths, strings, numbers, colours or images, never
#: a tensor of torch (``glob.glob(...)``, ``plt.rcParams["axes.prop_cycle"].by_key()["color"]``).
NON_TENSOR_PACKAGES = frozenset(
    {"os", "glob", "pathlib", "string", "json", "matplotlib", "seaborn", "colorsys", "PIL", "cv2", "re", "sys"}
)


def is_dataset_class(qualified: str | None) -> bool:
    """A dataset class of torch or torchvision (``Dataset``, ``torchvision.datasets.CIFAR10``)."""
    return qualified is not None and (qualified in DATASET_BASES or qualified.startswith(DATASET_PACKAGES))


def is_data_loader_class(qualified: str | None) -> bool:
    """``qualified`` names a data-loader class: torch's ``DataLoader`` or a library's."""
    if qualified is None:
        return False
    return qualified in DATA_LOADER_CLASSES or (
        qualified.startswith(_DATA_LOADER_MODULES) and qualified.rsplit(".", 1)[-1].endswith("Loader")
    )


#: Methods a trainer library's class has that return the data loader it runs (``self.get_eval_dataloader()``
#: in a ``Trainer`` subclass): base class -> method names.
_TRAINER_LOADER_METHODS = frozenset({"get_train_dataloader", "get_eval_dataloader", "get_test_dataloader"})
FRAMEWORK_LOADER_METHODS = {
    "transformers.Trainer": _TRAINER_LOADER_METHODS,
    "transformers.trainer.Trainer": _TRAINER_LOADER_METHODS,
    "transformers.Seq2SeqTrainer": _TRAINER_LOADER_METHODS,
}
#: Tensor methods that move a tensor to a device (``x.to(device)``, ``x.cuda()``).
DEVICE_MOVE_METHODS = frozenset({"to", "cuda"})
#: Calls that run one training step of a Keras/TensorFlow model (an optimizer update).
TRAINING_STEP_METHODS = frozenset({"train_on_batch", "apply_gradients"})
#: Tensor methods whose result a loop walks slice by slice (the time steps of one sequence, the
#: rows of one batch): such a loop is one pass over one tensor, not a pass over data.
SLICING_METHODS = frozenset({"transpose", "unbind", "split", "chunk", "t", "permute", "unfold", "flip"})
OPTIMIZER_NAME = re.compile(r"(optim|optimizer|opt|scheduler)", re.IGNORECASE)
#: Progress bars that wrap an iterable and yield its items (``tqdm(loader)`` still reads the loader).
PROGRESS_BARS = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm", "tqdm.rich.tqdm"})

# --- tensor methods and functions --------------------------------------------------------------
#: Leave autograd: the result is a Python value.
TO_PYTHON_METHODS = frozenset({"item", "tolist", "numpy", "__float__", "__int__"})
#: Leave autograd: the result is a tensor without history (``detach`` shares storage: not fresh).
DETACH_METHODS = frozenset({"detach", "detach_"})
#: Produce tensors that never require grad (integer / boolean results).
NO_GRAD_RESULT_METHODS = frozenset(
    {
        "argmax", "argmin", "argsort", "eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite",
        "nonzero", "long", "int", "bool", "byte", "short", "sign", "logical_and", "logical_or", "logical_not",
        "bincount", "unique", "count_nonzero", "equal", "allclose", "all", "any",
        "multinomial", "searchsorted", "bucketize",
    }
)
#: Produce Python values that are not tensors.
NON_TENSOR_METHODS = frozenset({"size", "dim", "numel", "ndimension", "nelement", "element_size", "stride", "is_contiguous", "data_ptr", "get_device", "tolist", "item"})
NON_TENSOR_ATTRIBUTES = frozenset({"shape", "dtype", "device", "requires_grad", "is_cuda", "ndim", "is_leaf", "grad_fn", "layout"})
#: Attributes that are tensors without history.
DETACHED_ATTRIBUTES = frozenset({"data", "grad"})
#: Methods returning (values, indices) when called with a dimension.
VALUES_INDICES_METHODS = frozenset({"max", "min", "sort", "topk", "kthvalue", "median", "mode", "cummax", "cummin"})
#: Results share storage with the input (in-place on them writes through): never "fresh".
VIEW_METHODS = frozenset(
    {
        "view", "view_as", "reshape", "reshape_as", "transpose", "permute", "t", "squeeze", "unsqueeze", "expand",
        "expand_as", "narrow", "select", "flatten", "unflatten", "unfold", "chunk", "split", "unbind", "T", "mT",
        "diagonal", "movedim", "swapaxes", "as_strided", "contiguous", "to", "cpu", "cuda", "type", "float",
        "double", "half", "bfloat16", "detach", "real", "imag",
    }
)
#: Methods a trainer library calls with the model being trained: base class -> method -> parameter.
_TRAINER_MODEL_PARAMETERS = {"compute_loss": "model", "training_step": "model", "prediction_step": "model"}
FRAMEWORK_MODEL_PARAMETERS = {
    "transformers.Trainer": _TRAINER_MODEL_PARAMETERS,
    "transformers.trainer.Trainer": _TRAINER_MODEL_PARAMETERS,
    "transformers.Seq2SeqTrainer": _TRAINER_MODEL_PARAMETERS,
}


_Table = TypeVar("_Table")


def _trainer_table(qualified_bases: tuple[str, ...], tables: Mapping[str, _Table]) -> _Table | None:
    """The table entry of the first trainer library base (TRL's trainers are ``Trainer`` subclasses)."""
    for base in qualified_bases:
        table = tables.get(base)
        if table is None and base.startswith("trl.") and base.endswith("Trainer"):
            table = tables["transformers.Trainer"]
        if table is not None:
            return table
    return None


def framework_loader_method(qualified_bases: tuple[str, ...], method: str) -> bool:
    """``method``, called on ``self`` in a class with these bases, returns the framework's data
    loader (``self.get_eval_dataloader()`` in an HF ``Trainer`` subclass)."""
    table = _trainer_table(qualified_bases, FRAMEWORK_LOADER_METHODS)
    return table is not None and method in table


def framework_model_parameter(qualified_bases: tuple[str, ...], method: str) -> str | None:
    """The parameter through which a framework hands ``method`` (of a class with these bases)
    the model it trains: ``model`` in an HF ``Trainer`` subclass's ``compute_loss``; TRL's
    trainers are ``Trainer`` subclasses."""
    table = _trainer_table(qualified_bases, FRAMEWORK_MODEL_PARAMETERS)
    return table.get(method) if table is not None else None


#: Queues that keep at most ``maxlen`` items (``deque(maxlen=20)``): appending drops the oldest.
BOUNDED_QUEUES = frozenset({"collections.deque"})
#: Containers that make their items by calling a factory (``defaultdict(AverageMeter)``).
DEFAULT_DICTS = frozenset({"collections.defaultdict"})
#: ``isinstance(x, torch.Tensor)``: the classes whose instances are tensors.
TENSOR_TYPES = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})
#: ``isinstance(x, nn.Module)`` false: ``x`` is no module, whatever the rest of the file does with the name.
MODULE_TYPES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "torch.nn.modules.Module"})
#: ``torch.is_tensor(x)``: the same test as a function.
TENSOR_CHECKS = frozenset({"torch.is_tensor"})
#: Integer and boolean dtypes: a tensor cast to one cannot require grad (``x.to(torch.uint8)``).
INTEGER_DTYPES = frozenset(
    f"torch.{name}"
    for name in ("uint8", "int8", "int16", "int32", "int64", "short", "int", "long", "bool", "uint16", "uint32", "uint64")
)
#: In-place methods that change a tensor's shape or storage, not its values from their argument:
#: ``buf.resize_as_(out)`` takes only the shape of ``out``, so ``buf`` gets no history from it
#: (``requires_grad`` stays False); ``set_`` points at another storage.
SHAPE_ONLY_INPLACE_METHODS = frozenset({"resize_", "resize_as_", "set_"})
#: Tensor methods that create a new tensor with no history (``x.new_zeros(n)``).
NEW_TENSOR_METHODS = frozenset({"new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "new_empty_strided"})
#: Module-level torch functions that create tensors from nothing (no history).
TENSOR_FACTORIES = frozenset(
    {
        "tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "linspace",
        "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
        "randint_like", "as_tensor", "from_numpy", "frombuffer", "Tensor", "FloatTensor", "LongTensor",
    }
)
#: Parameters: leaves that require grad (unless built with ``requires_grad=False``), so what is
#: computed from one has autograd history.
PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.UninitializedParameter"})
#: Containers whose items are parameters (``self.scales[name]`` of an ``nn.ParameterDict``).
PARAMETER_CONTAINERS = frozenset(
    {"torch.nn.ParameterDict", "torch.nn.ParameterList", "torch.nn.modules.container.ParameterDict", "torch.nn.modules.container.ParameterList"}
)
#: Of the factories, those that may return the caller's own storage rather than a new tensor:
#: ``torch.as_tensor(t)`` / ``torch.asarray(t)`` return ``t`` itself when dtype and device already
#: match, ``torch.from_numpy`` / ``torch.frombuffer`` / ``torch.from_dlpack`` share the array's
#: buffer. An in-place op on the result writes into the caller's data.
SHARING_FACTORIES = frozenset({"as_tensor", "asarray", "from_numpy", "frombuffer", "from_dlpack"})
#: Module-level torch functions whose results never require grad.
NO_GRAD_RESULT_FUNCTIONS = frozenset(
    {f"torch.{name}" for name in NO_GRAD_RESULT_METHODS | {"numel", "is_tensor", "manual_seed", "save"}}
)
#: ``torch.distributions.Distribution`` methods that draw without a graph (they run under
#: ``torch.no_grad()``; ``rsample()`` is the one that keeps it). No tensor method has these names.
DISTRIBUTION_SAMPLE_METHODS = frozenset({"sample", "sample_n"})
#: Parameters of torch functions that take integers (lengths, indices): a name passed there
#: holds no graph from then on, whatever made it (the decode lengths a captioning decoder returns
#: beside its scores). Qualified name -> (position, keyword) of each such parameter.
INTEGER_PARAMETERS: dict[str, tuple[tuple[int, str], ...]] = {
    "torch.nn.utils.rnn.pack_padded_sequence": ((1, "lengths"),),
    "torch.gather": ((2, "index"),),
    "torch.index_select": ((2, "index"),),
    "torch.take": ((1, "index"),),
    "torch.bincount": ((0, "input"),),
    "torch.nn.functional.one_hot": ((0, "tensor"),),
    "torch.nn.functional.embedding": ((0, "input"),),
}
#: Calls that read a tensor without differentiating it or keeping its graph: writing it out,
#: printing, converting (leaklint.analysis.graph_use ends a graph's flow there).
GRAPH_SINK_FUNCTIONS = frozenset(
    {
        "torch.save", "torchvision.utils.save_image", "torchvision.io.write_png", "torchvision.io.write_jpeg",
        "torchvision.io.write_video", "torchaudio.save", "json.dump", "json.dumps", "pickle.dump", "pickle.dumps",
    }
)
#: Libraries whose functions only read a tensor's values (numpy needs it detached anyway).
GRAPH_SINK_MODULES = ("numpy.", "math.", "matplotlib.", "PIL.", "cv2.", "imageio.", "logging.", "scipy.", "sklearn.")
#: Library functions (not torch's own) that return a tensor computed from their argument.
GRAPH_PASSING_FUNCTIONS = frozenset(
    {"torchvision.utils.make_grid", "einops.rearrange", "einops.repeat", "einops.reduce", "einops.einsum"}
)
#: Deserialisers whose result may be a whole model (``torch.load`` of a pickled module).
LOADERS_OF_ANYTHING = frozenset({"torch.load", "torch.jit.load", "torch.hub.load_state_dict_from_url"})
#: Backward entry points taking the tensor as their first argument.
BACKWARD_FUNCTIONS = frozenset({"torch.autograd.backward", "torch.autograd.grad"})
#: Methods on trainers/accelerators that run backward on their first argument.
BACKWARD_METHODS = frozenset({"backward", "manual_backward"})
#: Keywords of the backward entry points that keep the graph after it runs (``create_graph=True``
#: implies ``retain_graph=True``): torch.Tensor.backward, torch.autograd.backward and
#: torch.autograd.grad free the graph's saved tensors unless one of them is true
#: (https://pytorch.org/docs/stable/generated/torch.autograd.backward.html).
GRAPH_RETAINING_KEYWORDS = ("retain_graph", "create_graph")
#: Context managers that yield a scaled copy of the loss they are given, for the backward in their
#: body: apex's ``with amp.scale_loss(loss, optimizer) as scaled_loss: scaled_loss.backward()``
#: (https://nvidia.github.io/apex/amp.html#apex.amp.scale_loss).
SCALED_LOSS_CONTEXTS = frozenset({"apex.amp.scale_loss"})

# --- in-place twins (LL401) --------------------------------------------------------------------
INPLACE_OPERATORS = {"+": "add_", "-": "sub_", "*": "mul_", "/": "div_"}
#: Operators whose operands may swap (``y + x`` == ``x + y``) for an in-place rewrite of ``x``.
COMMUTATIVE_OPERATORS = frozenset({"+", "*"})
#: ``torch.relu(x)`` -> ``torch.relu_(x)`` / ``x.relu()`` -> ``x.relu_()``.
INPLACE_FUNCTIONS = frozenset({"relu", "sigmoid", "tanh", "clamp", "clamp_min", "clamp_max", "abs", "neg", "exp", "log", "sqrt", "floor", "ceil", "round", "sin", "cos", "reciprocal", "square", "nan_to_num", "add", "sub", "mul", "div", "pow"})
#: ``F.relu(x)`` -> ``F.relu(x, inplace=True)``.
FUNCTIONAL_INPLACE = frozenset({"relu", "relu6", "elu", "selu", "celu", "leaky_relu", "hardtanh", "rrelu", "silu", "mish", "hardswish", "hardsigmoid", "threshold", "dropout", "alpha_dropout", "dropout1d", "dropout2d", "dropout3d"})
#: ``nn.ReLU()`` -> ``nn.ReLU(inplace=True)``.
MODULES_WITH_INPLACE = frozenset({"ReLU", "ReLU6", "ELU", "SELU", "CELU", "LeakyReLU", "Hardtanh", "RReLU", "SiLU", "Mish", "Hardswish", "Hardsigmoid", "Threshold"})


#: Methods of library models that run the model's forward with autograd as the caller has it
#: (transformers' CLIP-style towers, OpenAI CLIP and open_clip): a forward under another name.
#: Not ``encode`` (sentence-transformers runs it under ``no_grad`` itself) nor ``generate``.
LIBRARY_FORWARD_METHODS = frozenset(
    {"get_image_features", "get_text_features", "get_audio_features", "get_video_features", "encode_image", "encode_text"}
)


#: TensorFlow iterators (as ``tensorflow.analysis.tf_api`` names them) that yield the checkpoints a
#: training job writes, one every few minutes: a loop over them runs once per checkpoint, not per step.
CHECKPOINT_ITERATORS = frozenset({"train.checkpoints_iterator"})


# --- framework steps and evaluation code, by name ---------------------------------------------
#: Functions that run once per training step by their name alone.
STEP_FUNCTION_NAMES = frozenset(
    {"forward", "training_step", "train_step", "step", "train_batch", "train_on_batch", "optimize_parameters"}
)
#: Framework hooks that run once per batch (Lightning modules, Keras / HF / Lightning callbacks).
PER_STEP_HOOK = re.compile(
    r"^(training_step|validation_step|test_step|predict_step|train_step"
    r"|on_(train_|validation_|test_|predict_)?batch_(start|begin|end)"
    r"|on_step_(begin|end)|on_(before|after)_backward|on_before_optimizer_step|on_before_zero_grad)$"
)
#: Methods a framework calls every step or every epoch (``on_*`` hooks, ``*_epoch_end``, steps).
FRAMEWORK_HOOK_NAME = re.compile(r"^(on_\w+|training_step|validation_step|test_step|\w+_epoch_end)$")
#: Methods frameworks call once per step: Lightning, Keras, and ``nn.Module.forward``.
STEP_METHODS = frozenset({"training_step", "validation_step", "test_step", "predict_step", "forward", "train_step", "eval_step"})
#: Functions whose name says they evaluate, validate or predict.
_EVAL_FUNCTION_NAME = re.compile(
    r"^_*(run_|do_|_)?(eval|evaluate|evaluation|validate|validation|valid|val|test|predict|prediction|infer|inference)"
    r"(_?(step|epoch|loop|one_epoch|model|fn|batch|batches|all|dataset|loader|set|split|metrics|accuracy|only)s?)?$"
    r"|^_*(evaluate|validate|predict|infer|inference|run_inference|eval)_\w+$"
    r"|^\w+_(eval|evaluate|evaluation|validate|validation|inference|predict|prediction|test_epoch|val_epoch|eval_epoch)$"
)


def is_eval_function_name(name: str) -> bool:
    """``evaluate``, ``validate_epoch``, ``run_inference``... but not pytest's ``test_something``."""
    return bool(_EVAL_FUNCTION_NAME.match(name))


# --- hooks ----------------------------------------------------------------------------------------
class HookKind(enum.Enum):
    FORWARD = "forward hook"
    FORWARD_PRE = "forward pre-hook"
    BACKWARD = "backward hook"
    TENSOR = "tensor hook"


#: ``Module``/``Tensor`` methods that register a hook, and what the hook receives.
HOOK_METHODS = {
    "register_forward_hook": HookKind.FORWARD,
    "register_forward_pre_hook": HookKind.FORWARD_PRE,
    "register_full_backward_hook": HookKind.BACKWARD,
    "register_full_backward_pre_hook": HookKind.BACKWARD,
    "register_backward_hook": HookKind.BACKWARD,
    "register_hook": HookKind.TENSOR,
}
#: ``torch.nn.modules.module.register_module_*``: global hooks that run for every module.
GLOBAL_HOOK_FUNCTIONS = {
    "register_module_forward_hook": HookKind.FORWARD,
    "register_module_forward_pre_hook": HookKind.FORWARD_PRE,
    "register_module_full_backward_hook": HookKind.BACKWARD,
    "register_module_full_backward_pre_hook": HookKind.BACKWARD,
    "register_module_backward_hook": HookKind.BACKWARD,
}


#: Packages whose import makes a file a TensorFlow/Keras file (LL501-LL503).
TENSORFLOW_ROOTS = ("tensorflow", "keras", "tf_keras")
#: Packages whose import makes a file torch code: torch itself and the libraries built on it.
TORCH_ROOTS = (
    "torch", "torchvision", "torchaudio", "torchtext", "lightning", "pytorch_lightning", "lightning_fabric",
    "timm", "diffusers", "accelerate", "torch_geometric", "ignite", "sentence_transformers", "peft", "trl",
    "fastai", "stable_baselines3", "torchmetrics", "kornia", "detectron2", "mmengine", "setfit", "catalyst",
)
#: Packages with a torch side and a TensorFlow/Flax side: importing from one is torch code unless
#: one of the names is another side's class (``TFAutoModel``, ``FlaxBertModel``).
MIXED_ROOTS = ("transformers",)
NON_TORCH_NAME_PREFIXES = ("TF", "Flax")


# --- what the gate asks of a file (leaklint/gate.py) -------------------------------------------
#: Words one of which a file must mention to hold a finding of a torch rule: torch names, a loss,
#: a model, or a backward call are the evidence every such rule needs.
TORCH_WORDS = (
    "torch", "loss", "model", "net", "module", "backbone", "encoder", "decoder", "classifier",
    "generator", "discriminator", "teacher", "student", "criterion", "backward", "no_grad", "lightning",
)
TORCH_CODE = Words(*TORCH_WORDS)
#: What a graph-attached value above low confidence rests on (see GRAPH_EVIDENCE_IDENTIFIERS).
GRAPH_EVIDENCE = Names(*GRAPH_EVIDENCE_IDENTIFIERS, matching=is_graph_evidence_identifier)
#: Code that runs per call or per iteration: a loop, a comprehension or a function.
LOOPS_OR_FUNCTIONS = LOOPS | Syntax(ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
#: A file that uses TensorFlow or Keras.
TENSORFLOW_CODE = Words("keras", "tensorflow") & Names(*TENSORFLOW_ROOTS)
