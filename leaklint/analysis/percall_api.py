"""What leaklint knows about objects that cost memory once per call: the libraries that call a
function many times (hyperparameter searches, web servers), the constructors that build a whole
model, trainer or pipeline, and torchmetrics' metrics and their states.

Tables only, like :mod:`leaklint.analysis.torch_api`: :mod:`leaklint.analysis.steps`,
:mod:`leaklint.analysis.heavy` and the rules LL304-LL306 read them; nothing here imports libcst.
"""

from __future__ import annotations

import re

from leaklint.gate import Names

# --- drivers: library calls that run a callable once per trial ---------------------------------
#: ``(method or function name, position of the callable, its keyword, packages one of which the
#: file must import)``: each runs the callable once per trial (``study.optimize(objective)`` in
#: Optuna, ``tune.run(trainable)`` / ``tune.Tuner(trainable)`` in Ray Tune, ``fmin(fn=...)`` in
#: Hyperopt, ``gp_minimize(func)`` in scikit-optimize).
TRIAL_DRIVERS = (
    ("optimize", 0, "func", ("optuna",)),
    ("run", 0, "run_or_experiment", ("ray",)),
    ("Tuner", 0, "trainable", ("ray",)),
    ("fmin", 0, "fn", ("hyperopt",)),
    ("gp_minimize", 0, "func", ("skopt",)),
    ("forest_minimize", 0, "func", ("skopt",)),
)
#: Keywords of a driver whose list of callables runs after every trial (Optuna's ``callbacks=``).
TRIAL_CALLBACK_KEYWORDS = {"optimize": "callbacks"}
#: Keyword arguments naming a callable that a trainer calls once per hyperparameter trial (and
#: once per ``train()``): ``transformers.Trainer(model_init=...)``, ``setfit.Trainer(model_init=...)``.
PER_TRIAL_KEYWORDS = frozenset({"model_init"})

# --- request handlers ----------------------------------------------------------------------------
#: Decorator methods that register a function as a web request handler: ``@app.post("/train")``
#: (FastAPI, Starlette), ``@app.route(...)`` (Flask, Quart, Sanic), ``@router.get(...)``.
ROUTE_DECORATORS = frozenset({"get", "post", "put", "delete", "patch", "route", "api_route", "websocket"})
#: Packages whose import makes those decorators request handlers.
WEB_FRAMEWORKS = ("fastapi", "flask", "starlette", "quart", "sanic", "aiohttp", "bottle", "litserve")

# --- hooks a framework calls many times ----------------------------------------------------------
#: Methods a framework calls every step, epoch or evaluation (Lightning modules and callbacks,
#: Keras and transformers callbacks): ``on_validation_epoch_end``, ``on_train_batch_end``,
#: ``on_evaluate``, ``validation_step``... Not the ones that run once a run (``on_fit_start``,
#: ``on_train_end``).
REPEATED_HOOK = re.compile(
    r"^(on_(\w+_)?(batch|epoch|step)_(start|begin|end)"
    r"|on_(validation|test|predict)_(start|end)"
    r"|on_(evaluate|log|save|prediction_step|substep_end)"
    r"|(training|validation|test|predict)_step(_end)?"
    r"|(training|validation|test|predict)_epoch_end)$"
)

# --- what builds a whole model -------------------------------------------------------------------
#: Identifiers a file must use to build a model (for the gate): ``torch.nn`` (and ``torch.hub``,
#: ``torch.compile``, ``torch.jit``) with torch itself — ``tf.nn`` is not a model — or one of the
#: libraries whose constructors and factories :mod:`~leaklint.analysis.torch_api` and this module
#: know (``is_module_class``, ``is_module_base``, ``is_model_factory``, :func:`builds_model_holder`).
TORCH_MODEL_IDENTIFIERS = ("nn", "hub", "compile", "jit")
LIBRARY_MODEL_IDENTIFIERS = (
    "torchvision", "timm", "transformers", "diffusers", "peft", "lightning", "pytorch_lightning",
    "LightningModule", "setfit", "trl", "sentence_transformers",
)
BUILDS_MODEL = (Names("torch") & Names(*TORCH_MODEL_IDENTIFIERS)) | Names(*LIBRARY_MODEL_IDENTIFIERS)

#: Classes whose instances keep a model (with its optimizer state, its data and its buffers): the
#: trainers of transformers, SetFit, TRL and Lightning, by qualified name or by a package prefix
#: and a class-name suffix.
MODEL_HOLDER_CLASSES = frozenset(
    {
        "transformers.Trainer",
        "transformers.Seq2SeqTrainer",
        "setfit.Trainer",
        "setfit.SetFitTrainer",
        "setfit.SetFitModel",
        "setfit.SetFitModel.from_pretrained",
        "lightning.Trainer",
        "lightning.pytorch.Trainer",
        "pytorch_lightning.Trainer",
        "sentence_transformers.SentenceTransformer",
        "transformers.pipeline",
    }
)
MODEL_HOLDER_PREFIXES = (("transformers.", "Trainer"), ("trl.", "Trainer"))


def builds_model_holder(qualified: str) -> bool:
    """``transformers.Trainer(...)``, ``setfit.SetFitModel.from_pretrained(...)``,
    ``diffusers.StableDiffusionPipeline.from_pretrained(...)``, ``transformers.pipeline(...)``..."""
    if qualified in MODEL_HOLDER_CLASSES:
        return True
    if any(qualified.startswith(prefix) and qualified.endswith(suffix) for prefix, suffix in MODEL_HOLDER_PREFIXES):
        return True
    return loads_pipeline(qualified)


def loads_pipeline(qualified: str) -> bool:
    """A diffusers pipeline (``StableDiffusionPipeline.from_pretrained``, ``DiffusionPipeline(...)``,
    ``AutoPipelineForText2Image.from_pretrained``): every component model of it, loaded again."""
    if not qualified.startswith("diffusers."):
        return False
    parts = qualified.split(".")
    owner = parts[-2] if parts[-1] in ("from_pretrained", "from_single_file", "from_pipe") else parts[-1]
    return "Pipeline" in owner


#: Calls that load a model from disk or the hub: the suffixes of ``Class.from_pretrained`` and the
#: like, and functions that load one.
LOADERS = (".from_pretrained", ".from_single_file", ".from_pipe")
LOADING_FUNCTIONS = frozenset({"transformers.pipeline", "torch.hub.load"})

#: Where a hyperparameter-search trial keeps objects for the study: ``trial.set_user_attr(key,
#: value)`` is read back as ``trial.user_attrs[key]`` (in-memory storage keeps every trial's).
TRIAL_ATTRIBUTE_SETTERS = {"user_attrs": "set_user_attr", "system_attrs": "set_system_attr"}

#: Words of a file that turn gradients off (torch's blocks and decorators, ``detach``, freezing a
#: model), for the gate of rules about tensors kept without a graph.
GRAD_OFF_WORDS = ("no_grad", "inference_mode", "set_grad_enabled", "detach", "requires_grad")

# --- containers ----------------------------------------------------------------------------------
#: Methods that add an element to a list, dict, set or deque (the container grows).
ADDING_METHODS = frozenset({"append", "extend", "insert", "add", "appendleft", "extendleft", "setdefault", "update"})
#: Methods that take elements out of a container, or empty it.
REMOVING_METHODS = frozenset({"pop", "popitem", "popleft", "remove", "discard", "clear"})
#: Calls that build an empty container.
EMPTY_CONTAINERS = frozenset(
    {"dict", "list", "set", "collections.defaultdict", "collections.OrderedDict", "collections.deque", "defaultdict", "OrderedDict", "deque"}
)

# --- torchmetrics ---------------------------------------------------------------------------------
#: Base classes of every torchmetrics metric (a class of the file deriving from one is a metric).
METRIC_BASES = frozenset({"torchmetrics.Metric", "torchmetrics.metric.Metric"})
#: Collections of metrics (``update``/``compute``/``reset`` apply to every member).
METRIC_COLLECTIONS = frozenset({"torchmetrics.MetricCollection", "torchmetrics.collections.MetricCollection"})
#: torchmetrics names that are not metric classes.
_NOT_METRICS = frozenset({"Metric", "functional", "utilities", "wrappers", "metric"})
#: Metrics whose state is a list that gets one tensor per ``update`` (predictions and targets
#: kept for the final computation): curves, ranking, retrieval and detection metrics, ``CatMetric``.
LIST_STATE_METRIC = re.compile(
    r"(AUROC|AveragePrecision|PrecisionRecallCurve|ROC$|CatMetric|SpearmanCorrCoef|KendallRankCorrCoef"
    r"|^Retrieval|MeanAveragePrecision|CalibrationError|KernelInceptionDistance|BERTScore|InfoLM"
    r"|AtFixed|SpecificityAtSensitivity|SensitivityAtSpecificity|EER$|LogAUC"
    r"|ErrorRelativeGlobalDimensionlessSynthesis|RelativeAverageSpectralError|SpectralDistortionIndex)"
)
#: Arguments that switch a metric of fixed-size states to list states, by class name: the keyword
#: and the literal values that do it (``ANY_VALUE``: any literal other than None). Image metrics
#: keep sums by default (``PeakSignalNoiseRatio``, ``StructuralSimilarityIndexMeasure`` since
#: torchmetrics 0.11) and one tensor per update when asked for per-image values
#: (``reduction="none"``, ``dim=...``) or for the full SSIM images (``return_full_image=True``).
ANY_VALUE = "<any literal but None>"
_PER_IMAGE = ("reduction", ("none", None))
LIST_STATE_ARGUMENTS: dict[str, tuple[tuple[str, object], ...]] = {
    "PeakSignalNoiseRatio": (("dim", ANY_VALUE),),
    "StructuralSimilarityIndexMeasure": (
        _PER_IMAGE,
        ("return_full_image", (True,)),
        ("return_contrast_sensitivity", (True,)),
    ),
    "MultiScaleStructuralSimilarityIndexMeasure": (_PER_IMAGE,),
    "UniversalImageQualityIndex": (_PER_IMAGE,),
    "SpectralAngleMapper": (_PER_IMAGE,),
    "TotalVariation": (_PER_IMAGE,),
}
#: Wrappers whose state is bounded whatever they wrap: ``Running(base, window=n)`` keeps one copy
#: of the base metric's state per update of the last ``n`` and ``compute()`` covers only those
#: (torchmetrics documents it as "a running window"); updated forever without a reset, it neither
#: grows nor summarises the whole history. The other wrappers (``BootStrapper``,
#: ``MinMaxMetric``, ``ClasswiseWrapper``...) keep what their base keeps.
WINDOWED_METRICS = frozenset({"torchmetrics.wrappers.Running", "torchmetrics.wrappers.running.Running"})
#: Keyword values that switch a metric to list states (``multidim_average="samplewise"``: one
#: value per sample, kept until ``compute``).
LIST_STATE_KEYWORDS = {"multidim_average": "samplewise", "thresholds": "None"}
#: Methods that add to a metric's state (calling the metric itself, ``metric(preds, target)``,
#: runs ``forward``, which updates the accumulated state too).
METRIC_UPDATE_METHODS = frozenset({"update", "forward"})
METRIC_COMPUTE_METHODS = frozenset({"compute"})
METRIC_RESET_METHODS = frozenset({"reset"})
#: Lightning's logging methods: a metric *object* logged through them is computed and reset by
#: Lightning at the end of the epoch (``self.log("acc", self.acc)``).
LIGHTNING_LOG_METHODS = frozenset({"log", "log_dict"})


def is_metric_class(qualified: str) -> bool:
    """``torchmetrics.Accuracy``, ``torchmetrics.classification.BinaryAUROC``,
    ``torchmetrics.regression.MeanAbsolutePercentageError``... (not the functional API)."""
    if not qualified.startswith("torchmetrics.") or ".functional" in qualified:
        return False
    name = qualified.rsplit(".", 1)[-1]
    return name[:1].isupper() and name not in _NOT_METRICS and qualified not in METRIC_BASES


def has_list_state(qualified: str) -> bool:
    """A torchmetrics class that keeps a list of tensors (see :data:`LIST_STATE_METRIC`)."""
    return bool(LIST_STATE_METRIC.search(qualified.rsplit(".", 1)[-1]))

# --- accelerate -----------------------------------------------------------------------------------
#: accelerate's ``Accelerator``: it keeps a reference to every object it prepares (its ``_models``,
#: ``_optimizers``, ``_dataloaders`` and ``_schedulers`` lists) until ``free_memory()``.
ACCELERATOR_CLASSES = frozenset({"accelerate.Accelerator", "accelerate.accelerator.Accelerator"})
#: Its methods that wrap an object and add it to those lists.
PREPARE_METHODS = frozenset({"prepare", "prepare_model", "prepare_optimizer", "prepare_data_loader", "prepare_scheduler"})
#: Its methods that empty them (``clear`` is an alias of ``free_memory``).
ACCELERATOR_RELEASE_METHODS = frozenset({"free_memory", "clear"})
#: Packages one of which a file must import for an object of it to be an ``Accelerator``: accelerate
#: itself, or the trainers that hold one as ``self.accelerator`` (transformers' and TRL's).
ACCELERATOR_PACKAGES = ("accelerate", "transformers", "trl")
#: Methods of a transformers ``Trainer`` that the trainer calls again at every evaluation (or
#: prediction): an override of one runs once per evaluation.
HF_TRAINER_PER_EVALUATION = frozenset({"get_eval_dataloader", "get_test_dataloader", "evaluation_loop", "prediction_loop"})
