"""Where a tensor lives: on an accelerator (moved there, or made by a model that is there), on the
host (made there, or moved back with ``.cpu()``), or unknown.

The provenance pass asks :func:`placed` for every expression it values (``Value.device``), right
after valuing it, so the answer follows the code statement by statement: ``logits`` is on the
accelerator after ``logits = model(x.to(device))`` and on the host after ``logits = logits.cpu()``.
Rules read it as ``facts.value(expr).device``; :func:`on_accelerator` says whether a value is a
tensor (or a container of tensors) known to be on one.

Evidence, strongest first:

- an explicit move or placement: ``.cuda()``, ``.to(device)``, ``.to("cuda")``, a factory with
  ``device=`` (``torch.zeros(n, device=device)``); ``.cpu()``, ``.to("cpu")``, a factory without
  ``device=`` put the result on the host;
- a framework that places things: a LightningModule's ``self`` and the ``batch`` its
  ``*_step`` hooks receive (the Trainer moves both), the inputs an HF ``Trainer`` subclass gets
  through ``_prepare_inputs`` or in ``compute_loss``/``prediction_step``, what accelerate's
  ``gather``/``gather_for_metrics`` returns (:data:`DEVICE_RESULT_METHODS`);
- a model's output is where the model or its inputs are;
- anything computed from tensors (arithmetic, torch functions, tensor methods, indexing,
  attributes such as ``outputs.logits``, literals that hold them) is where they are.

A call of an unknown function leaves the place unknown: a metric helper given device tensors
may well return a float.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

import re
import weakref

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.calls import call_graph, local_callee
from leaklint.gate import Names
from leaklint.analysis.names import ImportMap, dotted_name, names_read
from leaklint.analysis.structure import ClassInfo, FunctionInfo, ModuleStructure, bound_names
from leaklint.analysis.values import Device, Kind, Role, Value, replace
from leaklint.analysis.walk import calls_in, not_into_scopes, walk

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts

# --- library knowledge ---------------------------------------------------------------------------
#: Tensor methods whose result is on the host.
HOST_METHODS = frozenset({"cpu", "pin_memory"})
#: Tensor (and module) methods whose result is on the accelerator.
ACCELERATOR_METHODS = frozenset({"cuda", "xpu", "mps"})
#: Methods of accelerate's ``Accelerator`` (and Fabric) whose results stay on the process's device:
#: they gather or pad tensors across processes with collective operations on the device.
DEVICE_RESULT_METHODS = frozenset({"gather", "gather_for_metrics", "pad_across_processes", "all_gather"})
#: The packages whose objects those methods belong to (the file must import one of them).
DEVICE_RESULT_PACKAGES = ("accelerate", "lightning", "pytorch_lightning", "lightning_fabric")
#: Base classes of the HF trainers: their ``self.model`` and prepared inputs are on ``args.device``.
HF_TRAINERS = frozenset(
    {
        "transformers.Trainer", "transformers.Seq2SeqTrainer", "transformers.trainer.Trainer",
        "transformers.trainer_seq2seq.Seq2SeqTrainer", "trl.SFTTrainer", "trl.DPOTrainer", "trl.RewardTrainer",
    }
)
#: Of those, the trainers whose evaluation can generate for its metrics (``predict_with_generate``).
HF_SEQ2SEQ_TRAINERS = frozenset({"transformers.Seq2SeqTrainer", "transformers.trainer_seq2seq.Seq2SeqTrainer"})
#: Methods of an HF trainer that return tensors on the trainer's device: the prepared inputs, and
#: ``prediction_step``'s (loss, logits, labels).
HF_TRAINER_DEVICE_METHODS = frozenset({"_prepare_inputs", "_prepare_input", "prediction_step"})
#: HF trainer methods that run the model and return what it computed.
HF_TRAINER_OUTPUT_METHODS = frozenset({"prediction_step"})
#: HF trainer methods whose ``inputs`` (and ``model``) the trainer hands over prepared, on its device.
HF_TRAINER_PREPARED_HOOKS = frozenset({"compute_loss", "prediction_step", "training_step"})
#: Lightning hooks whose batch the Trainer has moved to the module's device.
LIGHTNING_BATCH_HOOKS = frozenset({"training_step", "validation_step", "test_step", "predict_step"})
#: Lightning's callback base class, under the names it is imported by.
LIGHTNING_CALLBACKS = frozenset(
    {
        "lightning.Callback", "lightning.pytorch.Callback", "lightning.pytorch.callbacks.Callback",
        "lightning.pytorch.callbacks.callback.Callback", "pytorch_lightning.Callback",
        "pytorch_lightning.callbacks.Callback", "pytorch_lightning.callbacks.base.Callback",
        "pytorch_lightning.callbacks.callback.Callback",
    }
)
#: A Lightning callback's per-batch hooks, and the positions (after ``self``) of the parameters the
#: Trainer passes on the module's device: ``on_predict_batch_end(trainer, pl_module, outputs,
#: batch, batch_idx)`` gets the step's outputs and the batch it moved before the step ran.
LIGHTNING_CALLBACK_BATCH_HOOKS = re.compile(r"^on_(train|validation|test|predict)_batch_(start|end)$")
_CALLBACK_DEVICE_POSITIONS = {"start": (2,), "end": (2, 3)}
#: The hooks of a Lightning prediction run (``trainer.predict``), which goes over a whole data set
#: once. Lightning itself moves every ``predict_step`` result to the CPU before keeping it (since
#: 1.5, PR 9085), because a prediction run's outputs are the whole data set's.
LIGHTNING_PREDICT_HOOKS = frozenset({"predict_step", "on_predict_batch_start", "on_predict_batch_end"})
#: Torch factories that copy the place of their first argument.
_LIKE_FACTORIES = frozenset({"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like"})
#: Dtypes that ``.to(...)`` may be given instead of a device (``x.to(torch.float16)``).
_DTYPE_NAMES = frozenset(
    {
        "float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8", "int16", "int32",
        "int64", "long", "short", "uint8", "bool", "complex64", "complex128", "cfloat", "cdouble",
    }
)
#: Functions of other libraries that rearrange tensors where they are (the result stays there).
SAME_PLACE_FUNCTIONS = frozenset({"einops.rearrange", "einops.repeat", "einops.reduce", "einops.pack", "einops.unpack"})
_SUMMING_BUILTINS = frozenset({"sum", "max", "min", "abs", "list", "tuple", "sorted", "reversed", "next", "iter"})

#: Identifiers a file must use for any tensor in it to be known on an accelerator (the gate's
#: need, :mod:`leaklint.gate`): a move (``.to``, ``.cuda``), a ``device=`` argument, a gather
#: across processes, an HF trainer's device methods, or a framework that places models and
#: batches (Lightning, transformers' and trl's trainers). Keep it in step with the evidence above.
DEVICE_EVIDENCE = Names(
    "to", "device", *ACCELERATOR_METHODS, *DEVICE_RESULT_METHODS, *HF_TRAINER_DEVICE_METHODS,
    "lightning", "pytorch_lightning", "transformers", "trl",
)

#: Model classes (the last part of the name a model is built from) whose output scores every token
#: over the whole vocabulary: ``[batch, sequence length, vocabulary]`` logits per batch (decoder
#: only, masked, and encoder-decoder heads: ``T5ForConditionalGeneration``, ``AutoModelForSeq2SeqLM``).
LM_HEAD_MODEL = re.compile(r"(ForCausalLM|ForMaskedLM|LMHeadModel|WithLMHead|ForPreTraining|ForSeq2SeqLM|ForConditionalGeneration)$")
#: ``TrainingArguments`` that keep an HF trainer's evaluation from holding every batch's logits on
#: the device: ``eval_accumulation_steps`` (moved to the host every N steps),
#: ``batch_eval_metrics`` (metrics per batch), ``prediction_loss_only`` (no logits kept),
#: ``predict_with_generate`` (a ``Seq2SeqTrainer`` keeps generated token ids, not logits).
HF_EVAL_OFFLOAD_ARGUMENTS = frozenset({"eval_accumulation_steps", "batch_eval_metrics", "prediction_loss_only", "predict_with_generate"})

#: Expression classes whose place :func:`placed` works out (a name's place is the bound value's).
PLACED_NODES = frozenset(
    {
        cst.Call, cst.Attribute, cst.Subscript, cst.BinaryOperation, cst.UnaryOperation, cst.Comparison,
        cst.Tuple, cst.List, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp,
    }
)


def is_tensorish(value: Value) -> bool:
    """A tensor, or something that may be one (a model output, a batch), or a container of them."""
    return value.role is None and value.kind is not Kind.NOT_TENSOR


def on_accelerator(value: Value) -> bool:
    """A tensor, or a container of tensors, that the code shows is on an accelerator."""
    return value.device is Device.ACCELERATOR and is_tensorish(value)


def initial_device(function: FunctionInfo, param: str, imports: ImportMap, structure: ModuleStructure) -> Device:
    """Where a parameter's value lives when the function starts: a LightningModule's ``self``
    and its steps' ``batch``, an HF trainer's prepared ``inputs`` and its ``model``, a Lightning
    callback's ``batch`` and the step ``outputs`` it is handed (unless the file's modules return
    that step's results on the host: ``structure``, the file's classes)."""
    cls = function.cls
    if cls is None or not function.is_method:
        return Device.UNKNOWN
    if cls.is_lightning:
        if param == "self":
            return Device.ACCELERATOR
        if function.name in LIGHTNING_BATCH_HOOKS and len(function.params) > 1 and param == function.params[1]:
            return Device.ACCELERATOR
        if function.is_method and param in _batch_fed_parameters(cls).get(function.name, ()):
            return Device.ACCELERATOR  # self._shared_step(batch): the batch the Trainer moved
    elif function.name in HF_TRAINER_PREPARED_HOOKS and param in ("inputs", "model") and is_hf_trainer(cls, imports):
        return Device.ACCELERATOR
    elif _lightning_callback_device_parameter(function, param, cls, imports):
        if param == lightning_step_outputs_parameter(function, imports) and _steps_return_host(structure, function.name):
            return Device.UNKNOWN
        return Device.ACCELERATOR
    return Device.UNKNOWN


def _steps_return_host(structure: ModuleStructure, hook: str) -> bool:
    """The LightningModules of the file define the step whose outputs ``hook``
    (``on_predict_batch_end``) receives, and every ``return`` of it moves what it returns to the
    host (``.cpu()``, ``.numpy()``, ``.tolist()``, ``.item()``, also inside a tuple or a dict)."""
    stage = LIGHTNING_CALLBACK_BATCH_HOOKS.match(hook)
    if stage is None:
        return False
    steps = [cls.methods[f"{stage.group(1)}_step"] for cls in structure.classes.values() if cls.is_lightning and f"{stage.group(1)}_step" in cls.methods]
    returns = [node.value for step in steps for node in walk(step.body, into=not_into_scopes) if type(node) is cst.Return]
    return bool(returns) and all(value is not None and _on_host(value) for value in returns)


def _on_host(expr: cst.BaseExpression) -> bool:
    """``expr`` visibly hands back host values: a move to the host, or a tuple/list/dict of them."""
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(_on_host(element.value) for element in expr.elements)
    if isinstance(expr, cst.Dict):
        return all(isinstance(element, cst.DictElement) and _on_host(element.value) for element in expr.elements)
    return _host_move(expr)


def _host_move(expr: cst.BaseExpression, imports: ImportMap | None = None) -> bool:
    """``expr`` is a host move of something (``t.detach().cpu().numpy()``, ``loss.item()``) at its
    outermost call; with ``imports``, a module's function of that name (``torch.cpu()``) is not one."""
    if not (isinstance(expr, cst.Call) and type(expr.func) is cst.Attribute):
        return False
    if imports is not None and imports.resolve(expr.func) is not None:
        return False
    method = expr.func.attr.value  # type: ignore[attr-defined]
    return method in HOST_METHODS or method in torch_api.TO_PYTHON_METHODS


def _lightning_callback_device_parameter(function: FunctionInfo, param: str, cls: ClassInfo, imports: ImportMap) -> bool:
    """``outputs`` or ``batch`` of a Lightning callback's ``on_*_batch_end`` / ``_start`` hook:
    what the step computed, and the batch the Trainer moved, both still on the module's device."""
    hook = LIGHTNING_CALLBACK_BATCH_HOOKS.match(function.name)
    if hook is None or not is_lightning_callback(cls, imports):
        return False
    positional = function.params[1:]  # after self
    return any(position < len(positional) and positional[position] == param for position in _CALLBACK_DEVICE_POSITIONS[hook.group(2)])


def lightning_step_outputs_parameter(function: FunctionInfo, imports: ImportMap) -> str | None:
    """The parameter of a Lightning callback's ``on_*_batch_end`` hook that receives what the
    module's step returned (``outputs``): a model's output, as the step computed it."""
    cls = function.cls
    hook = LIGHTNING_CALLBACK_BATCH_HOOKS.match(function.name)
    if cls is None or hook is None or hook.group(2) != "end" or not is_lightning_callback(cls, imports):
        return None
    positional = function.params[1:]
    return positional[2] if len(positional) > 2 else None


def is_lightning_callback(cls: ClassInfo, imports: ImportMap) -> bool:
    """A subclass (in this file, directly or through local bases) of Lightning's ``Callback``."""
    for arg in cls.node.bases:
        if arg.keyword is None and imports.resolve(arg.value) in LIGHTNING_CALLBACKS:
            return True
    return any(is_lightning_callback(base, imports) for base in cls.local_bases)


#: Per LightningModule class, built once: the parameters of its helper methods that receive a
#: step's batch (:func:`_batch_fed_parameters`).
_BATCH_FED: weakref.WeakKeyDictionary[ClassInfo, dict[str, frozenset[str]]] = weakref.WeakKeyDictionary()


def _batch_fed_parameters(cls: ClassInfo) -> dict[str, frozenset[str]]:
    """Method name -> the parameters that every ``self.<method>(...)`` call in the class's methods
    passes the batch a step hook received: the batch itself, an item of it (``batch["image"]``), a
    name unpacked from it (``x, y = batch``), or its items spread (``self.step(*batch)``). A helper
    shared by the steps (``self._shared_step(batch)``) gets what the Trainer moved to the device."""
    if cls not in _BATCH_FED:
        _BATCH_FED[cls] = _find_batch_fed_parameters(cls)
    return _BATCH_FED[cls]


def _find_batch_fed_parameters(cls: ClassInfo) -> dict[str, frozenset[str]]:
    methods: dict[str, cst.FunctionDef] = {}
    for klass in (cls, *cls.local_bases):
        for name, node in klass.methods.items():
            methods.setdefault(name, node)
    calls: dict[str, int] = {}
    fed: dict[tuple[str, str], int] = {}
    for name, node in methods.items():
        batch = _batch_names(node) if name in LIGHTNING_BATCH_HOOKS else frozenset()
        for call in calls_in(node.body):
            func = call.func
            if type(func) is not cst.Attribute or dotted_name(func.value) != "self" or func.attr.value not in methods:  # type: ignore[attr-defined]
                continue
            callee = func.attr.value  # type: ignore[attr-defined]
            calls[callee] = calls.get(callee, 0) + 1
            for param in _parameters_given(methods[callee], call, batch):
                fed[(callee, param)] = fed.get((callee, param), 0) + 1
    found: dict[str, set[str]] = {}
    for (callee, param), count in fed.items():
        if count == calls[callee]:
            found.setdefault(callee, set()).add(param)
    return {name: frozenset(params) for name, params in found.items()}


def _batch_names(hook: cst.FunctionDef) -> frozenset[str]:
    """The step hook's batch parameter and the names its body unpacks from it (``x, y = batch``)."""
    params = [param.name.value for param in hook.params.params]
    if len(params) < 2:
        return frozenset()
    names = {params[1]}
    for current in walk(hook.body, into=not_into_scopes):
        if type(current) is cst.Assign and _is_batch(current.value, names):  # type: ignore[attr-defined]
            for target in current.targets:  # type: ignore[attr-defined]
                names.update(name for name in bound_names(target.target) if "." not in name)
    return frozenset(names)


def _is_batch(expr: cst.BaseExpression, batch: frozenset[str] | set[str]) -> bool:
    """``expr`` is the batch or an item of it: ``batch``, ``batch[0]``, ``batch["image"]``."""
    while type(expr) is cst.Subscript:
        expr = expr.value  # type: ignore[attr-defined]
    return type(expr) is cst.Name and expr.value in batch  # type: ignore[attr-defined]


def _parameters_given(method: cst.FunctionDef, call: cst.Call, batch: frozenset[str]) -> set[str]:
    """The parameters of ``method`` that ``call`` (``self.method(...)``) passes the batch or an item of it."""
    if not batch:
        return set()
    params = [param.name.value for param in (*method.params.posonly_params, *method.params.params)][1:]  # after self
    given: set[str] = set()
    position = 0
    for arg in call.args:
        if arg.keyword is not None:
            if _is_batch(arg.value, batch):
                given.add(arg.keyword.value)
        elif arg.star == "*":
            if _is_batch(arg.value, batch):
                given.update(params[position:])  # self.step(*batch): each item of the batch
            break
        elif arg.star == "":
            if position < len(params) and _is_batch(arg.value, batch):
                given.add(params[position])
            position += 1
    return given


def _placed_owner(node: cst.BaseExpression, function: FunctionInfo, imports: ImportMap) -> bool:
    """``self.<x>`` where ``self`` is an object whose models a framework puts on the device."""
    cls = function.cls
    if cls is None or type(node) is not cst.Attribute or dotted_name(node.value) != "self":  # type: ignore[attr-defined]
        return False
    return cls.is_lightning or is_hf_trainer(cls, imports)


def is_hf_trainer(cls: ClassInfo, imports: ImportMap, kinds: frozenset[str] = HF_TRAINERS) -> bool:
    """A subclass (in this file, directly or through local bases) of an HF trainer (of one of
    ``kinds``: ``HF_SEQ2SEQ_TRAINERS`` for a trainer that can generate for its metrics)."""
    for arg in cls.node.bases:
        if arg.keyword is None and imports.resolve(arg.value) in kinds:
            return True
    return any(is_hf_trainer(base, imports, kinds) for base in cls.local_bases)


def is_lightning_predict_hook(function: FunctionInfo, imports: ImportMap) -> bool:
    """A hook of a Lightning prediction run (``LIGHTNING_PREDICT_HOOKS``) on a LightningModule or
    a Lightning callback."""
    cls = function.cls
    return function.name in LIGHTNING_PREDICT_HOOKS and cls is not None and (cls.is_lightning or is_lightning_callback(cls, imports))


def placed(
    node: cst.BaseExpression, value: Value, values: Mapping[cst.CSTNode, Value], imports: ImportMap, function: FunctionInfo
) -> Value:
    """``value`` (what the provenance pass computed for ``node``) with its ``device`` set from the
    code: ``values`` holds the values of ``node``'s parts, computed just before."""
    if value.kind is Kind.NOT_TENSOR and value.role is None:
        return value
    kind = type(node)
    if kind is cst.Call:
        device = _call_device(node, value, values, imports, function)  # type: ignore[arg-type]
        callee = values.get(node.func)  # type: ignore[attr-defined]
        if value.items is not None and device is not Device.UNKNOWN and callee is not None and callee.role is Role.MODEL:
            # `z_pre, z, x_hat = model(x)`: every part of a model's output lives where it does
            items = tuple(item if item.device is not Device.UNKNOWN or item.kind is Kind.NOT_TENSOR else replace(item, device=device) for item in value.items)
            return replace(value, device=device, items=items)
    elif kind is cst.Attribute or kind is cst.Subscript:
        if value.device is not Device.UNKNOWN:
            return value
        base = values.get(node.value)  # type: ignore[attr-defined]
        if base is not None and (is_tensorish(base) or base.role is value.role is Role.MODEL):
            device = base.device
        elif value.role in (Role.MODEL, Role.FROZEN_MODEL) and _placed_owner(node, function, imports):
            device = Device.ACCELERATOR  # self.net in a LightningModule, self.model in an HF trainer
        else:
            device = Device.UNKNOWN
    elif kind is cst.BinaryOperation:
        device = _joined([values.get(node.left), values.get(node.right)])  # type: ignore[attr-defined]
    elif kind is cst.UnaryOperation:
        device = _joined([values.get(node.expression)])  # type: ignore[attr-defined]
    elif kind is cst.Comparison:
        parts = [values.get(node.left)] + [values.get(c.comparator) for c in node.comparisons]  # type: ignore[attr-defined]
        device = _joined(parts)
    elif kind is cst.Dict:
        device = _joined([values.get(e.value) for e in node.elements])  # type: ignore[attr-defined]
    elif kind is cst.DictComp:
        device = _joined([values.get(node.value)])  # type: ignore[attr-defined]
    elif kind is cst.ListComp or kind is cst.SetComp or kind is cst.GeneratorExp:
        device = _joined([values.get(node.elt)])  # type: ignore[attr-defined]
    else:  # Tuple, List, Set
        device = _joined([values.get(e.value) for e in node.elements])  # type: ignore[attr-defined]
    return value if device is value.device else replace(value, device=device)


def _joined(parts: list[Value | None]) -> Device:
    """The place of something computed from ``parts``: on the accelerator if any tensor among them
    is, on the host if all of them are, else unknown."""
    devices = [part.device for part in parts if part is not None and is_tensorish(part)]
    return max(devices) if devices else Device.UNKNOWN


_ATTRIBUTES: weakref.WeakKeyDictionary[ClassInfo, frozenset[str]] = weakref.WeakKeyDictionary()


def _assigned_attributes(cls: ClassInfo) -> frozenset[str]:
    """The names ``self.<name> = ...`` assigns in the class's own methods."""
    found = _ATTRIBUTES.get(cls)
    if found is None:
        names = set()
        for node in walk(cls.node.body):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    for name in bound_names(target.target):
                        if name.startswith("self.") and name.count(".") == 1:
                            names.add(name[5:])
        found = _ATTRIBUTES[cls] = frozenset(names)
    return found


def _call_device(node: cst.Call, value: Value, values: Mapping[cst.CSTNode, Value], imports: ImportMap, function: FunctionInfo) -> Device:
    func = node.func
    arguments = [values.get(arg.value) for arg in node.args if not (arg.keyword is not None and arg.keyword.value == "device")]
    qualified = imports.resolve(func)
    if qualified is not None:
        return _function_device(node, qualified, value, arguments, values, imports)
    if type(func) is cst.Attribute:
        return _method_device(node, func, value, arguments, values, imports, function)  # type: ignore[arg-type]
    callee = values.get(func)
    if callee is not None and callee.role in (Role.MODEL, Role.FROZEN_MODEL):
        return _model_output(callee, arguments)
    if type(func) is cst.Name and func.value in _SUMMING_BUILTINS:  # type: ignore[attr-defined]
        return _joined(arguments)
    return value.device  # a local function's result (its summary), or unknown


def _model_output(model: Value, arguments: list[Value | None]) -> Device:
    """A model's output is where the model is, or where its inputs are."""
    return max([model.device] + [part.device for part in arguments if part is not None and is_tensorish(part)])


def _method_device(
    node: cst.Call, func: cst.Attribute, value: Value, arguments: list[Value | None], values: Mapping[cst.CSTNode, Value],
    imports: ImportMap, function: FunctionInfo,
) -> Device:
    method = func.attr.value
    if method in HOST_METHODS:
        return Device.HOST
    if method in ACCELERATOR_METHODS:
        return Device.ACCELERATOR
    receiver = values.get(func.value)
    if method == "to":
        target = _to_target(node, values, imports)
        if target is not None:
            return target
        return receiver.device if receiver is not None else value.device
    called = values.get(func)
    if called is not None and called.role in (Role.MODEL, Role.FROZEN_MODEL):
        return _model_output(called, arguments)  # self.encoder(x)
    if method in DEVICE_RESULT_METHODS and imports.imports_anything_from(*DEVICE_RESULT_PACKAGES):
        return Device.ACCELERATOR
    cls = function.cls
    if dotted_name(func.value) == "self" and cls is not None:
        if cls.find_method(method) is not None:
            return value.device  # a method of the class: its summary says
        if method in HF_TRAINER_DEVICE_METHODS and is_hf_trainer(cls, imports):
            return Device.ACCELERATOR
        if method in _assigned_attributes(cls) and not (called is not None and called.role in (Role.MODEL, Role.FROZEN_MODEL)):
            # `self.agent(state, device)`: an object the class keeps (an RL agent, a sampler),
            # not a layer of the module: what it returns (actions as Python ints) is unknown
            return value.device
    if receiver is None:
        return value.device
    if receiver.role in (Role.MODEL, Role.FROZEN_MODEL):
        if method in torch_api.MODULE_RETURNS_SELF:
            return receiver.device  # model.eval(): the model itself
        if method in torch_api.MODULE_API_METHODS:
            return value.device
        return _model_output(receiver, arguments)  # model.generate(ids), model.encode(x)
    if is_tensorish(receiver):
        # A tensor method's result is where the tensor is; an object of unknown kind (a
        # tokenizer, a metric) given device tensors may return anything: a string, a float.
        return receiver.device
    return value.device


def _function_device(
    node: cst.Call, qualified: str, value: Value, arguments: list[Value | None], values: Mapping[cst.CSTNode, Value], imports: ImportMap
) -> Device:
    if qualified in SAME_PLACE_FUNCTIONS:
        return _joined(arguments[:1])
    if not qualified.startswith("torch."):
        return value.device
    name = qualified.rsplit(".", 1)[-1]
    if name in torch_api.TENSOR_FACTORIES or name in _LIKE_FACTORIES:
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "device":
                target = _device_argument(arg.value, values, imports)
                return Device.ACCELERATOR if target is None else target
        source = _joined(arguments[:1])
        if name in _LIKE_FACTORIES or (name in ("as_tensor", "tensor") and source is not Device.UNKNOWN):
            return source  # zeros_like(x), as_tensor(x): where x is
        return Device.HOST  # made on the default device, the CPU
    return _joined(arguments)


def _to_target(node: cst.Call, values: Mapping[cst.CSTNode, Value], imports: ImportMap) -> Device | None:
    """Where ``x.to(...)`` puts ``x``; None when the call changes only the dtype."""
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "device":
            target = _device_argument(arg.value, values, imports)
            return Device.ACCELERATOR if target is None else target
    positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
    if not positional:
        return None
    return _device_argument(positional[0], values, imports)


def _device_argument(expr: cst.BaseExpression, values: Mapping[cst.CSTNode, Value], imports: ImportMap | None) -> Device | None:
    """The place a device argument names: the host for ``"cpu"`` / ``torch.device("cpu")``, the
    accelerator for any other device (a string, a ``device`` variable, ``self.device``), a
    tensor's place for ``x.to(other)``; None for a dtype (``torch.float16``, ``x.dtype``)."""
    if isinstance(expr, cst.SimpleString):
        text = expr.evaluated_value
        name = text.split(":", 1)[0].strip() if isinstance(text, str) else ""
        return Device.HOST if name == "cpu" else Device.ACCELERATOR
    if isinstance(expr, cst.Call) and expr.args and isinstance(expr.args[0].value, cst.SimpleString):
        callee = imports.resolve(expr.func) if imports is not None else None
        if callee == "torch.device":
            return _device_argument(expr.args[0].value, values, imports)
    if isinstance(expr, cst.Attribute) and expr.attr.value == "dtype":
        return None
    qualified = imports.resolve(expr) if imports is not None else None
    if qualified is not None and qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in _DTYPE_NAMES:
        return None
    argument = values.get(expr)
    if argument is not None and is_tensorish(argument) and argument.kind is not Kind.UNKNOWN:
        return argument.device  # x.to(other_tensor)
    if argument is not None and names_host(argument):
        return Device.HOST  # a parameter that defaults to "cpu" and no call in the file changes
    return Device.ACCELERATOR


def names_host(value: Value) -> bool:
    """``value`` is a device designator known to name the host (see :func:`host_default`)."""
    return value.kind is Kind.NOT_TENSOR and value.device is Device.HOST


def host_default(function: FunctionInfo, param: str) -> bool:
    """The parameter's default names the host: ``"cpu"``, ``torch.device("cpu")``."""
    node = function.node
    if node is None:
        return False
    for candidate in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
        if candidate.name.value == param and candidate.default is not None:
            return _names_cpu(candidate.default)
    return False


def _names_cpu(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.SimpleString):
        text = expr.evaluated_value
        return isinstance(text, str) and text.split(":", 1)[0].strip() == "cpu"
    if isinstance(expr, cst.Call) and dotted_name(expr.func) in ("torch.device", "device") and expr.args:
        return expr.args[0].keyword is None and _names_cpu(expr.args[0].value)
    return False


# --- what a model produced -----------------------------------------------------------------------
def produces_model_output(facts: ModuleFacts, call: cst.Call, function: FunctionInfo) -> bool:
    """``call`` runs a model and returns (something computed from) its output."""
    if call in facts.derived(_forward_calls):
        return True
    func = call.func
    if type(func) is cst.Attribute:
        receiver = facts.value(func.value)  # type: ignore[attr-defined]
        method = func.attr.value  # type: ignore[attr-defined]
        if receiver.role in (Role.MODEL, Role.FROZEN_MODEL) and method not in torch_api.MODULE_API_METHODS:
            return True
        cls = function.cls
        if dotted_name(func.value) == "self" and cls is not None and method in HF_TRAINER_OUTPUT_METHODS:  # type: ignore[attr-defined]
            return cls.find_method(method) is None and is_hf_trainer(cls, facts.imports)
    callee = local_callee(call, function, facts)
    return callee is not None and facts.summary(callee).runs_model


def _forward_calls(facts: ModuleFacts) -> frozenset[cst.Call]:
    return frozenset(model_call.node for model_call in facts.model_calls())


# --- where collected tensors end up --------------------------------------------------------------
#: Host moves that read a single number off a tensor: what they move is no copy of the tensors.
SUMMARY_MOVES = frozenset({"item"})
#: Tensor methods that, called without arguments, reduce the whole tensor to one number.
WHOLE_REDUCTIONS = frozenset({"mean", "sum", "norm", "std", "var", "prod", "max", "min", "amax", "amin", "logsumexp", "nansum", "nanmean"})
#: How many callers up :func:`callers_take_to_host` follows a result that a caller returns again.
_CALLER_DEPTH = 2


def takes_to_host(facts: ModuleFacts, function: FunctionInfo, names: frozenset[str], *, outside: cst.CSTNode | None = None) -> bool:
    """``function`` moves what ``names`` hold (or what it unpacks, iterates or indexes out of them)
    to the host somewhere: ``t.cpu()``, ``.numpy()``, ``.tolist()``, ``.item()``, ``.to("cpu")``,
    or a local helper that returns its argument so moved (``to_np(torch.cat(preds))``), also
    inside comprehensions (``{k: v.cpu() for k, v in results.items()}``) and loops over them
    (``for prob in preds: prob.argmax(1).cpu()``). Code inside ``outside`` (the loop that fills
    them) does not count. Names are followed through bindings flow-insensitively: what a name
    derived from them is bound to anywhere in the function is derived too."""
    if not names:
        return False
    node = function.node
    body: cst.CSTNode = node.body if node is not None else facts.module  # the module's top-level code
    derived = set(names)
    binders: list[tuple[set[str], cst.CSTNode]] = []
    for current in walk(body, into=not_into_scopes):
        kind = type(current)
        if kind is cst.For or kind is cst.CompFor:
            binders.append((set(bound_names(current.target)), current.iter))  # type: ignore[attr-defined]
        elif kind is cst.Assign:
            targets = {name for target in current.targets for name in bound_names(target.target)}  # type: ignore[attr-defined]
            binders.append((targets, current.value))  # type: ignore[attr-defined]
    changed = True
    while changed:
        changed = False
        for targets, source in binders:
            if targets - derived and names_read(source) & derived:
                derived |= targets
                changed = True
    skipped = frozenset(walk(outside)) if outside is not None else frozenset()
    for call in calls_in(body):
        if call in skipped:
            continue
        moved = _moved_part(call, function, facts)
        if moved is not None and names_read(moved) & derived:
            return True
    return False


def callers_take_to_host(facts: ModuleFacts, function: FunctionInfo, depth: int = 0) -> bool:
    """Every call of ``function`` in the file (there is at least one) moves the tensors it returns
    to the host (:func:`takes_to_host` on the names the result is bound to, or a host move around
    the call itself), or returns them to callers that all do. A collector whose callers all move
    its result to the host kept it on the device for nothing."""
    sites = call_graph(facts).sites_of(function)
    if not sites or depth > _CALLER_DEPTH:
        return False
    for call, fact in sites:
        statement = fact.node
        caller = fact.function
        if any(
            (moved := _moved_part(other, caller, facts)) is not None and any(part is call for part in walk(moved))
            for other in calls_in(statement)
        ):
            continue  # to_np(collect(...)), collect(...).cpu()
        if isinstance(statement, cst.Return) and statement.value is not None and any(part is call for part in walk(statement.value)):
            if callers_take_to_host(facts, caller, depth + 1):
                continue
            return False
        if isinstance(statement, cst.Assign) and statement.value is call:
            bound = frozenset(name for target in statement.targets for name in bound_names(target.target))
            if takes_to_host(facts, caller, bound):
                continue
        return False
    return True


def _moved_part(call: cst.Call, function: FunctionInfo, facts: ModuleFacts) -> cst.BaseExpression | None:
    """What ``call`` moves to the host, if it is such a move: the receiver of ``.cpu()``,
    ``.numpy()``, ``.tolist()``, ``.item()``, ``.to("cpu")``; the arguments of a local function
    whose every return moves what it computes to the host (``def to_np(t): return t.cpu().numpy()``)."""
    func = call.func
    if type(func) is cst.Attribute and facts.imports.resolve(func) is None:
        method = func.attr.value  # type: ignore[attr-defined]
        receiver = func.value  # type: ignore[attr-defined]
        if method in SUMMARY_MOVES or _summarised(receiver):
            return None  # a scalar read off the tensors (.item(), .mean().cpu()): they stay where they are
        if method in HOST_METHODS or method in torch_api.TO_PYTHON_METHODS:
            return receiver
        if method == "to" and call.args and _device_argument(call.args[0].value, {}, facts.imports) is Device.HOST:
            return receiver
    callee = local_callee(call, function, facts)
    if callee is not None and call.args and callee in facts.derived(_host_returning):
        return cst.Tuple([cst.Element(arg.value) for arg in call.args])
    return None


def _summarised(expr: cst.BaseExpression) -> bool:
    """``expr`` reduces a tensor to a few numbers somewhere along its chain of method calls: a
    reduction called without arguments (``probs.amax(dim=1).mean()``, ``masks.float().sum()``)."""
    while type(expr) is cst.Call:
        func = expr.func  # type: ignore[attr-defined]
        if type(func) is not cst.Attribute:
            return False
        if func.attr.value in WHOLE_REDUCTIONS and not expr.args:  # type: ignore[attr-defined]
            return True
        expr = func.value  # type: ignore[attr-defined]
    return False


def _host_returning(facts: ModuleFacts) -> set[FunctionInfo]:
    """The local functions whose every ``return`` moves what it returns to the host (``to_np``)."""
    found: set[FunctionInfo] = set()
    for function in facts.structure.functions.values():
        node = function.node
        if node is None:
            continue
        returns = [
            current.value
            for current in walk(node.body, into=not_into_scopes)
            if type(current) is cst.Return and current.value is not None  # type: ignore[attr-defined]
        ]
        if returns and all(_host_move(value, facts.imports) for value in returns):
            found.add(function)
    return found
