"""LL302 dataloader-copy-on-read: Python containers in a Dataset that forked DataLoader workers copy."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterator

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.index import ModuleIndex
from leaklint.analysis.names import dotted_name
from leaklint.analysis.structure import ClassInfo, FunctionInfo, bound_names
from leaklint.analysis.torch_api import TORCH_CODE
from leaklint.analysis.walk import children, not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names
from leaklint.rule import Measured, Rule, Violation

DATASET_BASES = frozenset(
    {
        "torch.utils.data.Dataset",
        "torch.utils.data.dataset.Dataset",
        "torchvision.datasets.VisionDataset",
        "torchvision.datasets.vision.VisionDataset",
    }
)


class DataloaderCopyOnRead(Rule):
    code = "LL302"
    name = "dataloader-copy-on-read"
    severity = Severity.LEAK
    summary = (
        "A Dataset keeps per-sample Python objects that forked DataLoader workers copy page by page as they read them."
    )
    help = (
        "store per-sample metadata in numpy arrays (np.array(paths).astype(np.bytes_)), pandas/pyarrow "
        "columns, or one serialized numpy byte buffer instead of lists of Python objects"
    )
    needs = TORCH_CODE & Names(*{base.rsplit(".", 1)[-1] for base in DATASET_BASES})
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(4, 0, 0), leaks=(0, 0))
    docs = """
## What it finds
A `torch.utils.data.Dataset` subclass defined in the file whose `__init__` (or a method it calls)
stores a container of many Python objects on `self` — a list of dicts, a list of lists or objects,
a dict of lists, records parsed with `json.load` / `yaml.safe_load` / `pickle.load`,
`df.to_dict("records")` — that `__getitem__` indexes per sample (or `__len__` measures), when the
file builds a `DataLoader` over that dataset with `num_workers > 0`.

The finding is on the `self.x = ...` assignment (the line to change) and names the `DataLoader`.
Confidence is high when `num_workers` is a literal (or a module constant) and the code shows what
the elements are (dicts, lists or instances built in a loop or a comprehension, a whole parsed
file, `to_dict("records")`); medium when `num_workers` is not a literal (`args.workers`,
`**kwargs`), when the DataLoader gets the dataset through a helper's parameter, or when the
container is one key of a parsed file (`json.load(f)["annotations"]`: records, or plain strings?);
low (hidden by default) for flat lists of strings or tuples (file paths, `(path, label)` pairs),
for lookup tables that `__getitem__` reads with a key taken from the sample
(`self.images[ann["image_id"]]`), and for datasets with no DataLoader in the file.

## Why it matters
DataLoader workers are forked: they start sharing the parent's memory pages copy-on-write. But
CPython writes to an object every time it is read, because the reference count lives in the
object: `self.samples[idx]` increments and decrements the refcount of the list item, its dict and
its strings. Each touched page is then copied into the worker. Over an epoch every worker copies
every page holding those objects, so resident memory grows until it is `num_workers + 1` times the
size of the metadata — the "memory leak" reported for COCO-style annotation lists and large file
lists, often ending with the OOM killer. Numpy arrays, pandas columns and Arrow tables keep the
data in a few big buffers with one refcount, so reading them copies nothing.

## Example
```python
class Detections(Dataset):
    def __init__(self, ann_file):
        with open(ann_file) as f:
            self.records = json.load(f)["annotations"]

    def __getitem__(self, idx):
        record = self.records[idx]
        ...

loader = DataLoader(Detections("train.json"), batch_size=32, num_workers=8)
```

## Use instead
```python
class Detections(Dataset):
    def __init__(self, ann_file):
        with open(ann_file) as f:
            records = json.load(f)["annotations"]
        # one numpy buffer of pickled records plus offsets: no per-record refcounts
        blobs = [np.frombuffer(pickle.dumps(r), dtype=np.uint8) for r in records]
        self.offsets = np.cumsum([0] + [len(b) for b in blobs])
        self.buffer = np.concatenate(blobs)

    def __getitem__(self, idx):
        record = pickle.loads(self.buffer[self.offsets[idx]:self.offsets[idx + 1]].tobytes())
        ...
```
For file lists, `np.array(paths).astype(np.bytes_)` (decode with `str(p, "utf-8")`) does the same.

## Fix safety
No automatic fix: turning per-sample Python objects into numpy arrays, Arrow tables or serialised
buffers changes how `__getitem__` reads them, and the right format depends on the data.

## Known false positives
The size of the data is not visible in the code: a list of a few hundred dicts is reported like one
of millions. Flat lists of strings or `(path, label)` tuples cost one or two objects per sample and
are only reported with low confidence (`--min-confidence low`). Containers converted in `__init__`
(`self.samples = np.array(...)`, `torch.tensor(...)`, a DataFrame) are not reported, nor are small
literal lists, attributes that `__getitem__` never indexes with the sample index (a vocabulary, a
label map), `IterableDataset` subclasses, or datasets only used with `num_workers=0`. Workers started with the
`spawn` method (the default on Windows and macOS) receive a pickled copy up front instead of
copying on read: the total is the same. What a list is extended with is judged by its elements
(`self.images.extend(pairs)` with `pairs = [(path, prompt) for ...]` stores tuples, low
confidence), not as a list stored whole. On bench/realcode the rule's findings at the default
confidence are true (json-loaded lists of dicts read per sample by 4 forked workers, in the
IP-Adapter training tutorials); the one false finding it had (a few-shot concept list of
`(path, prompt)` tuples, extended from a local list) is low confidence now.

## References
- PyTorch data docs, multi-process data loading ("After several iterations, the loader worker
  processes will consume the same amount of CPU memory as the parent process for all Python objects
  ... accessed from the worker processes"): https://pytorch.org/docs/stable/data.html#multi-process-data-loading
- "DataLoader num_workers > 0 causes CPU memory from parent process to be replicated in all worker
  processes": https://github.com/pytorch/pytorch/issues/13246
- How the refcount copy-on-read works and how to serialize a list of dicts into one buffer:
  https://ppwwyyxx.com/blog/2022/Demystify-RAM-Usage-in-Multiprocess-DataLoader/
- A `list[dict]` of annotations with 32 workers killed by the OOM killer:
  https://github.com/tier4/autoware-ml/pull/78
- Runtime repro: `leaklint verify LL302` measures the leaky and the fixed loop body.
"""
    VALID = (
        """
import json
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

class Boxes(Dataset):
    def __init__(self, ann_file):
        with open(ann_file) as f:
            records = json.load(f)
        self.paths = np.array([r["file"] for r in records]).astype(np.bytes_)
        self.boxes = torch.tensor([r["box"] for r in records])

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        return str(self.paths[idx], "utf-8"), self.boxes[idx]

loader = DataLoader(Boxes("train.json"), batch_size=8, num_workers=8)
""",
        """
import json
import torch
from torch.utils.data import DataLoader, Dataset

class Captions(Dataset):
    def __init__(self, ann_file, vocab_file):
        with open(vocab_file) as f:
            self.vocab = json.load(f)
        self.samples = []
        with open(ann_file) as f:
            for line in f:
                self.samples.append({"text": line.strip()})

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, idx):
        return torch.tensor([self.vocab[w] for w in self.samples[idx]["text"].split()])

loader = DataLoader(Captions("train.txt", "vocab.json"), batch_size=8, num_workers=0)
""",
        """
import torch
from torch.utils.data import DataLoader, Dataset

class Windows(Dataset):
    def __init__(self, series, size):
        self.items = []
        for start in range(0, len(series) - size):
            self.items.append({"start": start, "end": start + size})
        self.items = torch.tensor([[w["start"], w["end"]] for w in self.items])
        self.series = series

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        start, end = self.items[i].tolist()
        return self.series[start:end]

loader = DataLoader(Windows(torch.randn(10000), 64), batch_size=32, num_workers=4)
""",
        """
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset

class Stream(IterableDataset):
    def __init__(self, files):
        self.records = [{"file": f} for f in files]

    def __iter__(self):
        for record in self.records:
            yield torch.load(record["file"])

class Pairs(Dataset):
    def __init__(self):
        self.classes = ["cat", "dog"]
        self.index = {name: i for i, name in enumerate(self.classes)}

    def __len__(self):
        return 1000

    def __getitem__(self, idx):
        return torch.randn(3), self.index[self.classes[idx % 2]]

stream = DataLoader(Stream(["a.pt"]), num_workers=4)
pairs = DataLoader(Pairs(), num_workers=4)
""",
        # (path, prompt) pairs extended from a local list: two objects per sample (low confidence)
        """
from pathlib import Path
import torch
from torch.utils.data import DataLoader, Dataset

class Concepts(Dataset):
    def __init__(self, concepts):
        self.images = []
        for concept in concepts:
            pairs = [(p, concept["prompt"]) for p in Path(concept["dir"]).iterdir() if p.is_file()]
            self.images.extend(pairs)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        path, prompt = self.images[i]
        return torch.load(path), prompt

loader = DataLoader(Concepts([{"dir": "cats", "prompt": "a cat"}]), batch_size=1, num_workers=2)
""",
    )
    INVALID = (
        """
import json
import torch
from torch.utils.data import DataLoader, Dataset

class Detections(Dataset):
    def __init__(self, ann_file):
        with open(ann_file) as f:
            self.records = json.load(f)["annotations"]  # expect: LL302

    def __len__(self):
        return len(self.records)

    def __getitem__(self, idx):
        record = self.records[idx]
        return torch.tensor(record["bbox"]), record["category_id"]

loader = DataLoader(Detections("instances_train.json"), batch_size=32, num_workers=8)
""",
        """
import os
import torch
from torch.utils import data

class ImageFolderDataset(data.Dataset):
    def __init__(self, root):
        samples = []
        for label, cls in enumerate(sorted(os.listdir(root))):
            for name in os.listdir(os.path.join(root, cls)):
                samples.append({"path": os.path.join(root, cls, name), "label": label})
        self.samples = samples  # expect: LL302

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        sample = self.samples[index]
        return torch.load(sample["path"]), sample["label"]

def main(args):
    train_set = ImageFolderDataset(args.root)
    loader = data.DataLoader(train_set, batch_size=64, shuffle=True, num_workers=args.workers)
    for x, y in loader:
        pass
""",
        """
import pandas as pd
import torch
from torch.utils.data import DataLoader, Dataset

class TabularDataset(Dataset):
    def __init__(self, csv_path):
        frame = pd.read_csv(csv_path)
        self.rows = frame.to_dict("records")  # expect: LL302
        self.histories = []  # expect: LL302
        for row in self.rows:
            self.histories.append([int(item) for item in row["history"].split()])

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        return torch.tensor(row["x"]), torch.tensor(self.histories[i])

loaders = {"train": DataLoader(TabularDataset("train.csv"), batch_size=256, num_workers=4)}
""",
        # records extended from a local list of dicts
        """
import os
import torch
from torch.utils.data import DataLoader, Dataset

class Clips(Dataset):
    def __init__(self, roots):
        self.clips = []  # expect: LL302
        for root in roots:
            found = [{"path": os.path.join(root, n), "root": root} for n in os.listdir(root)]
            self.clips.extend(found)

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, i):
        return torch.load(self.clips[i]["path"])

loader = DataLoader(Clips(["a", "b"]), batch_size=8, num_workers=4)
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A DataLoader worker reading a Dataset that keeps a Python list of path strings (every read
        writes a string's refcount, so the forked worker copies its page), vs the same paths in one
        numpy byte-string array."""

        requires = ("torch", "numpy", "psutil")
        tensors = False
        host_meter = "uss"

        def setup(self, ctx):
            import numpy as np
            import torch
            from torch.utils.data import DataLoader, Dataset

            paths = [f"images/train/{index:07d}.jpg" for index in range(100_000)]

            class Files(Dataset):
                def __init__(self, paths):
                    self.paths = paths
                def __len__(self):
                    return len(self.paths)
                def __getitem__(self, index):
                    return len(self.paths[index])

            class PackedFiles(Files):
                def __init__(self, paths):
                    self.paths = np.array(paths).astype(np.bytes_)
                def __getitem__(self, index):
                    return len(str(self.paths[index], "utf-8"))

            def batches(dataset):
                loader = DataLoader(
                    dataset, batch_size=256, shuffle=True, generator=torch.Generator().manual_seed(0),
                    num_workers=1, multiprocessing_context="fork",
                )
                return iter(loader)

            files, packed = Files(paths), PackedFiles(paths)  # both before any fork: see the docstring
            ctx.files, ctx.packed = batches(files), batches(packed)

        def leaky(self, ctx):
            next(ctx.files)

        def fixed(self, ctx):
            next(ctx.packed)

        def teardown(self, ctx):
            del ctx.files, ctx.packed


# --- detection ------------------------------------------------------------------------------------
_ITERABLE_BASES = frozenset({"torch.utils.data.IterableDataset", "torch.utils.data.dataset.IterableDataset"})
#: Libraries whose objects keep their data out of Python objects (no refcount per element).
_CONVERTING_ROOTS = ("numpy", "torch", "pandas", "pyarrow", "h5py", "zarr", "datasets", "polars")
#: ... except these, which may return anything (a pickled list of dicts).
_OPAQUE_LOADERS = frozenset({"torch.load", "numpy.load", "pandas.read_pickle"})
_CONVERTING_METHODS = frozenset({"astype", "to_numpy", "numpy", "to_list_array", "to_pandas", "to_arrow"})
_PARSERS = frozenset(
    {
        "json.load", "json.loads", "yaml.load", "yaml.safe_load", "yaml.full_load", "yaml.unsafe_load",
        "pickle.load", "pickle.loads", "orjson.loads", "ujson.load", "ujson.loads", "simplejson.load",
        "simplejson.loads", "joblib.load",
    }
)
_FILE_LISTINGS = frozenset({"os.listdir", "os.scandir", "os.walk", "glob.glob", "glob.iglob"})
_PATH_LISTING_METHODS = frozenset({"glob", "rglob", "iterdir"})
_LINE_METHODS = frozenset({"readlines", "splitlines"})
_ROW_METHODS = frozenset({"itertuples", "iterrows"})
_WRAPPERS = frozenset({"list", "sorted", "tuple", "set", "reversed", "frozenset"})
_EMPTY_FACTORIES = frozenset(
    {"list", "dict", "set", "collections.defaultdict", "collections.OrderedDict", "defaultdict", "OrderedDict"}
)
_STORE_METHODS = {"append": 0, "appendleft": 0, "add": 0, "extend": 0, "insert": 1}
#: ``DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, ...)``
_NUM_WORKERS_POSITION = 5
_MAX_DEPTH = 3


@dataclass
class Container:
    """What ``self.x`` holds after ``__init__``, as far as the code shows."""

    heavy: bool  # many Python objects per sample: dicts, lists, records, instances
    what: str  # "a list of dicts"
    source: str  # "json.load", "os.listdir", "a loop of appends"
    #: False when the element type is a guess (``json.load(f)["texts"]`` may be a list of strings).
    certain: bool = True


_CONVERTED = "converted"


@dataclass
class _Builds:
    """Assignments to one name in one function, and the elements stored into it."""

    assignments: list[tuple[cst.CSTNode, cst.BaseExpression]] = field(default_factory=list)
    #: (element expression, stored inside a loop, stored one level down: ``x[k].append(e)``)
    stores: list[tuple[cst.BaseExpression | _ElementsOf, bool, bool]] = field(default_factory=list)


@dataclass(frozen=True)
class Usage:
    """A ``DataLoader(...)`` with worker processes that reads a dataset class of this file."""

    call: cst.Call
    workers: int | None  # None: not a literal (args.workers, **kwargs)
    workers_text: str
    direct: bool  # the dataset argument is traced to the class; False: a parameter of a helper

    @property
    def rank(self) -> tuple[bool, bool]:
        return (self.direct and self.workers is not None, self.direct)


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    datasets = [cls for cls in facts.structure.classes.values() if _is_map_dataset(cls, facts)]
    if not datasets:
        return
    index = facts.index
    usages = _dataset_usages(facts, index, {cls.name for cls in datasets})
    best: dict[cst.CSTNode, Violation] = {}
    for cls in datasets:
        usage = usages.get(cls.name)
        for violation in _check_dataset(cls, usage, facts, index):
            current = best.get(violation.node)
            if current is None or violation.confidence > current.confidence:
                best[violation.node] = violation
    yield from best.values()


# --- which classes are datasets, and what they index per sample ---------------------------------
def _is_map_dataset(cls: ClassInfo, facts: ModuleFacts) -> bool:
    bases = [arg.value.value if isinstance(arg.value, cst.Subscript) else arg.value for arg in cls.node.bases]
    qualified = {facts.imports.resolve(base) for base in bases}  # Dataset[Tuple[...]] too
    if qualified & _ITERABLE_BASES:
        return False
    if qualified & DATASET_BASES:
        return True
    return any(_is_map_dataset(base, facts) for base in cls.local_bases)


def _per_sample_attributes(cls: ClassInfo) -> dict[str, bool]:
    """``self.x`` attributes read per sample, and whether directly: indexed with the sample index
    (``self.samples[idx]``, ``self.data["paths"][i % n]``) or measured by ``__len__`` (True), or only
    looked up with a key read from another container (``self.images[ann["image_id"]]``: False, a
    lookup table that may be small)."""
    attributes: dict[str, bool] = {}
    getitem = cls.find_method("__getitem__")
    if getitem is not None:
        params = [p.name.value for p in getitem.params.params]
        if len(params) >= 2:
            direct, keys = _index_names(getitem, params[1])
            for node in walk(getitem.body, into=not_into_scopes):
                if not isinstance(node, cst.Subscript) or not _mentions_any(node.slice, direct | keys):
                    continue
                root = _self_attribute_root(node.value)
                if root is not None:
                    is_direct = _mentions_any(node.slice, direct) and not _reads_container(node.slice)
                    attributes[root] = attributes.get(root, False) or is_direct
    length = cls.find_method("__len__")
    if length is not None:
        for node in walk(length.body, into=not_into_scopes):
            is_len = isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len"
            if is_len and node.args:
                root = _self_attribute_root(node.args[0].value)
                if root is not None:
                    attributes[root] = True
    return attributes


def _index_names(function: cst.FunctionDef, index: str) -> tuple[set[str], set[str]]:
    """Names computed from the index parameter by arithmetic (``i = idx % len(self.files)``), and
    names holding data read with it (``ann = self.annotations[idx]``, ``path, label = row``)."""
    direct, keys = {index}, set()
    assignments = [node for node in walk(function.body, into=not_into_scopes) if isinstance(node, cst.Assign)]
    for _ in range(2):
        for node in assignments:
            if not _mentions_any(node.value, direct | keys):
                continue
            is_key = _reads_container(node.value) or _mentions_any(node.value, keys)
            for target in node.targets:
                names = [n for n in bound_names(target.target) if "." not in n]
                (keys if is_key else direct).update(names)
    return direct - keys, keys


def _reads_container(expr: cst.CSTNode | object) -> bool:
    """Whether ``expr`` reads an element of something (``self.x[...]``, ``row["label"]``)."""
    nodes = expr if isinstance(expr, (list, tuple)) else [expr]
    return any(isinstance(n, cst.Subscript) for item in nodes for n in walk(item))


def _mentions_any(node: cst.CSTNode | object, names: set[str]) -> bool:
    nodes = node if isinstance(node, (list, tuple)) else [node]
    return any(isinstance(n, cst.Name) and n.value in names for item in nodes for n in walk(item))


def _self_attribute_root(node: cst.BaseExpression) -> str | None:
    """``self.data`` for ``self.data["paths"]``, ``self.df.iloc``, ``self.samples``."""
    while isinstance(node, cst.Subscript):
        node = node.value
    name = dotted_name(node)
    if name is None or not name.startswith("self.") or name.count(".") < 1:
        return None
    return ".".join(name.split(".")[:2])


# --- DataLoaders over this file's datasets ---------------------------------------------------------
def _dataset_usages(facts: ModuleFacts, index: ModuleIndex, dataset_names: set[str]) -> dict[str, Usage]:
    """For each dataset class name: the most direct DataLoader with workers that reads it."""
    usages: dict[str, Usage] = {}
    constructed_anywhere = _constructed_in(facts.module, dataset_names)
    for statement in facts.statements():
        for node in walk(statement.node):
            if not isinstance(node, cst.Call) or facts.imports.resolve(node.func) not in torch_api.DATA_LOADER_CLASSES:
                continue
            workers, text = _num_workers(node, facts, index)
            if workers == 0:
                continue
            dataset = _dataset_argument(node)
            if dataset is None:
                continue
            names, through_parameter = _classes_reaching(dataset, statement.function, index, dataset_names, facts)
            direct = bool(names)
            if not names and through_parameter:
                names = constructed_anywhere
            for name in names:
                usage = Usage(node, workers, text, direct)
                if name not in usages or usage.rank > usages[name].rank:
                    usages[name] = usage
    return usages


def _num_workers(call: cst.Call, facts: ModuleFacts, index: ModuleIndex) -> tuple[int | None, str]:
    spread = False
    for position, arg in enumerate(call.args):
        if arg.star == "**":
            spread = True
        if arg.star:
            continue
        if (arg.keyword is not None and arg.keyword.value == "num_workers") or (
            arg.keyword is None and position == _NUM_WORKERS_POSITION
        ):
            return _literal_int(arg.value, index), facts.describe(arg.value)
    return (None, "**kwargs") if spread else (0, "0")


def _literal_int(expr: cst.BaseExpression, index: ModuleIndex) -> int | None:
    if isinstance(expr, cst.Integer):
        return int(expr.value.replace("_", ""), 0)
    if isinstance(expr, cst.Name):
        values = index.module_values(expr.value)
        if len(values) == 1 and isinstance(values[0], cst.Integer):
            return int(values[0].value.replace("_", ""), 0)
    return None


def _dataset_argument(call: cst.Call) -> cst.BaseExpression | None:
    for position, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == "dataset":
            return arg.value
        if arg.keyword is None and not arg.star and position == 0:
            return arg.value
    return None


def _constructed_in(node: cst.CSTNode, dataset_names: set[str]) -> set[str]:
    return {
        name
        for current in walk(node)
        if isinstance(current, cst.Call) and (name := _callee_leaf(current)) in dataset_names
    }


def _callee_leaf(call: cst.Call) -> str | None:
    name = dotted_name(call.func)
    return name.rsplit(".", 1)[-1] if name else None


def _classes_reaching(
    expr: cst.BaseExpression, function: FunctionInfo, index: ModuleIndex, dataset_names: set[str], facts: ModuleFacts
) -> tuple[set[str], bool]:
    """Dataset classes whose instances ``expr`` may be (through assignments), and whether it
    depends on a parameter of the enclosing function (an unknown caller's dataset)."""
    found: set[str] = set()
    through_parameter = False
    seen: set[tuple[int, str]] = set()
    pending: list[tuple[cst.BaseExpression, FunctionInfo, int]] = [(expr, function, 0)]
    while pending:
        current, scope, depth = pending.pop()
        for node in walk(current):
            if isinstance(node, cst.Call) and _callee_leaf(node) in dataset_names:
                leaf = _callee_leaf(node)
                assert leaf is not None
                found.add(leaf)
                found.update(base.name for base in _local_bases(facts.structure.classes_by_name.get(leaf)))
            name = dotted_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
            if name is None or depth >= _MAX_DEPTH or (id(scope), name) in seen:
                continue
            seen.add((id(scope), name))
            values = index.visible_values(scope, name)
            if not values and node is current and (name in scope.params or name.startswith("self.")):
                through_parameter = True
            pending.extend((value, scope, depth + 1) for value in values)
    return found, through_parameter


def _local_bases(cls: ClassInfo | None) -> list[ClassInfo]:
    if cls is None:
        return []
    bases = list(cls.local_bases)
    for base in cls.local_bases:
        bases.extend(_local_bases(base))
    return bases


# --- what __init__ stores ---------------------------------------------------------------------------
def _check_dataset(cls: ClassInfo, usage: Usage | None, facts: ModuleFacts, index: ModuleIndex) -> Iterator[Violation]:
    builders = _builder_functions(cls, facts)
    if not builders:
        return
    for attribute, direct in sorted(_per_sample_attributes(cls).items()):
        per_function = [(function, _builds_of(function, attribute)) for function in builders]
        per_function = [(function, builds) for function, builds in per_function if builds.assignments]
        if not per_function:
            continue
        container, where = _classify_attribute(per_function, facts, index)
        if container is None or where is None:
            continue
        yield _violation(cls, attribute, container, where, usage, facts, direct)


def _builder_functions(cls: ClassInfo, facts: ModuleFacts) -> list[FunctionInfo]:
    """``__init__`` (the class's and its local bases'), and methods it calls on ``self``."""
    inits = [cls.find_method("__init__")] + [base.find_method("__init__") for base in _local_bases(cls)]
    functions: list[FunctionInfo] = []
    for init in inits:
        if init is None or init not in facts.structure.functions:
            continue
        functions.append(facts.structure.functions[init])
        for node in walk(init.body, into=not_into_scopes):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                if dotted_name(node.func.value) == "self":
                    helper = cls.find_method(node.func.attr.value)
                    if helper is not None and helper in facts.structure.functions:
                        functions.append(facts.structure.functions[helper])
    unique: list[FunctionInfo] = []
    for function in functions:
        if function not in unique:
            unique.append(function)
    return unique


def _builds_of(function: FunctionInfo, name: str) -> _Builds:
    """Assignments to ``name`` and the elements stored into it, in ``function``'s own body."""
    builds = _Builds()
    assert function.node is not None
    stack: list[tuple[cst.CSTNode, bool, cst.CSTNode | None]] = [(function.node.body, False, None)]
    while stack:
        node, in_loop, line = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.SimpleStatementLine):
            line = node
        if isinstance(node, cst.Assign):
            if any(name in bound_names(t.target) for t in node.targets):
                builds.assignments.append((line or node, node.value))
            for target in node.targets:
                if isinstance(target.target, cst.Subscript) and dotted_name(target.target.value) == name:
                    builds.stores.append((node.value, in_loop, False))
        elif isinstance(node, cst.AnnAssign) and node.value is not None and name in bound_names(node.target):
            builds.assignments.append((line or node, node.value))
        elif isinstance(node, cst.AugAssign) and dotted_name(node.target) == name:
            builds.stores.append((_element_of_iterable(node.value), in_loop, False))  # x += [e]
        elif isinstance(node, cst.Call):
            _note_store(node, name, in_loop, builds)
        inner_loop = in_loop or isinstance(node, (cst.For, cst.While))
        stack.extend((child, inner_loop, line) for child in reversed(children(node)))
    return builds  # pre-order: assignments in source order


def _note_store(call: cst.Call, name: str, in_loop: bool, builds: _Builds) -> None:
    """``x.append(e)``, ``x.extend(es)``, ``x[k].append(e)``, ``x.setdefault(k, []).append(e)``."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in _STORE_METHODS:
        return
    position = _STORE_METHODS[func.attr.value]
    if len(call.args) <= position:
        return
    element = call.args[position].value
    receiver = func.value
    if func.attr.value == "extend":
        element = _element_of_iterable(element)
    if dotted_name(receiver) == name:
        builds.stores.append((element, in_loop, False))
    elif isinstance(receiver, cst.Subscript) and dotted_name(receiver.value) == name:
        # x["paths"].append(p): one column of a few; x[key].append(e): a list per key
        builds.stores.append((element, in_loop, not _is_literal_key(receiver)))
    elif (
        isinstance(receiver, cst.Call)
        and isinstance(receiver.func, cst.Attribute)
        and receiver.func.attr.value == "setdefault"
        and dotted_name(receiver.func.value) == name
    ):
        builds.stores.append((element, in_loop, True))


def _is_literal_key(subscript: cst.Subscript) -> bool:
    elements = subscript.slice
    return (
        len(elements) == 1
        and isinstance(elements[0].slice, cst.Index)
        and isinstance(elements[0].slice.value, (cst.SimpleString, cst.Integer))
    )


@dataclass(frozen=True)
class _ElementsOf:
    """An element of an iterable named or computed elsewhere: ``x.extend(pairs)`` stores the
    elements of ``pairs``, not ``pairs`` itself."""

    iterable: cst.BaseExpression


def _element_of_iterable(expr: cst.BaseExpression) -> cst.BaseExpression | _ElementsOf:
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
        return expr.elt
    if isinstance(expr, (cst.List, cst.Tuple)) and expr.elements:
        return expr.elements[0].value
    return _ElementsOf(expr)


def _classify_attribute(
    per_function: list[tuple[FunctionInfo, _Builds]], facts: ModuleFacts, index: ModuleIndex
) -> tuple[Container | None, cst.CSTNode | None]:
    """The container ``self.x`` holds (None if converted anywhere, or unknown) and the line to report:
    the last assignment that builds it, the state ``__init__`` leaves behind."""
    chosen: tuple[Container, cst.CSTNode] | None = None
    for function, builds in per_function:
        for line, value in builds.assignments:
            kind = _classify_value(value, function, builds, facts, index, 0)
            if kind == _CONVERTED:
                return None, None
            if isinstance(kind, Container):
                chosen = (kind, line)
    return chosen if chosen is not None else (None, None)


def _classify_value(
    value: cst.BaseExpression,
    function: FunctionInfo,
    builds: _Builds | None,
    facts: ModuleFacts,
    index: ModuleIndex,
    depth: int,
) -> Container | str | None:
    """What a value assigned to a container name is: a :class:`Container`, ``_CONVERTED`` or None."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, (cst.List, cst.Dict, cst.Set, cst.Tuple)) and not value.elements:
        return _from_stores(builds, "dict" if isinstance(value, cst.Dict) else "list", function, facts, index, depth)
    if isinstance(value, cst.Dict):
        if all(_is_empty_container(e.value) for e in value.elements if isinstance(e, cst.DictElement)):
            return _from_stores(builds, "dict of lists", function, facts, index, depth)  # {"paths": [], ...}
        return _dict_of_containers(value, function, facts, index, depth)
    if isinstance(value, (cst.List, cst.Set, cst.Tuple)):
        return None  # a literal written out by hand is small
    if isinstance(value, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
        element = value.value if isinstance(value, cst.DictComp) else value.elt
        heavy, what = _element_kind(element, function, facts, index, depth)
        source = _iteration_source(value.for_in.iter, function, facts, index, depth) or "built by a comprehension"
        if not heavy and source in _FILE_LISTINGS | {f"Path.{m}" for m in _PATH_LISTING_METHODS}:
            what = "file paths"
        return Container(heavy, f"a {'dict' if isinstance(value, cst.DictComp) else 'list'} of {what}", source)
    if isinstance(value, cst.Subscript):
        inner = _classify_value(value.value, function, None, facts, index, depth + 1)
        if isinstance(inner, Container) and inner.source in _PARSERS:
            return replace(inner, certain=False)  # one key of a parsed file: records, or plain strings?
        return inner
    if isinstance(value, cst.BinaryOperation):
        return _classify_value(value.left, function, None, facts, index, depth + 1)
    if isinstance(value, cst.Name):
        return _classify_local(value.value, function, facts, index, depth)
    if isinstance(value, cst.Attribute):
        if value.attr.value == "values" and not isinstance(value.value, cst.Call):
            return _CONVERTED  # df.values
        return None
    if isinstance(value, cst.Call):
        return _classify_call(value, function, builds, facts, index, depth)
    return None


def _is_empty_container(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.List, cst.Dict, cst.Set)):
        return not expr.elements
    return isinstance(expr, cst.Call) and not expr.args and dotted_name(expr.func) in ("list", "dict", "set")


def _classify_call(
    call: cst.Call, function: FunctionInfo, builds: _Builds | None, facts: ModuleFacts, index: ModuleIndex, depth: int
) -> Container | str | None:
    qualified = facts.imports.resolve(call.func) or ""
    if qualified in _PARSERS:
        return Container(True, "parsed records", qualified)
    if qualified in _FILE_LISTINGS or (isinstance(call.func, cst.Name) and qualified == "glob.glob"):
        return Container(False, "file names", qualified)
    if qualified in _OPAQUE_LOADERS:
        return None
    if qualified.split(".", 1)[0] in _CONVERTING_ROOTS:
        return _CONVERTED
    if isinstance(call.func, cst.Name) and call.func.value in _WRAPPERS and call.args:
        return _classify_value(call.args[0].value, function, builds, facts, index, depth + 1)
    if (isinstance(call.func, cst.Name) and call.func.value in _EMPTY_FACTORIES) or qualified in _EMPTY_FACTORIES:
        kind = "list" if (_callee_leaf(call) or "") in ("list", "set") else "dict"
        return _from_stores(builds, kind, function, facts, index, depth)
    if isinstance(call.func, cst.Attribute):
        method = call.func.attr.value
        if method in _CONVERTING_METHODS:
            return _CONVERTED
        if method == "to_dict":
            return Container(True, "a list of dicts", "DataFrame.to_dict")
        if method in _ROW_METHODS:
            return Container(True, "rows of Python objects", f"DataFrame.{method}")
        if method in _PATH_LISTING_METHODS:
            return Container(False, "paths", f"Path.{method}")
        if method in _LINE_METHODS:
            return Container(False, "lines", method)
        if method == "tolist":
            return Container(False, "a list of values", ".tolist()")
        if method in ("values", "items", "keys") and not call.args:
            inner = _classify_value(call.func.value, function, None, facts, index, depth + 1)
            return inner if isinstance(inner, Container) else None
        if dotted_name(call.func.value) == "self" and function.cls is not None:
            return _classify_returns(function.cls.find_method(method), facts, index, depth)
    if isinstance(call.func, cst.Name):
        return _classify_returns(facts.structure.module_functions.get(call.func.value), facts, index, depth)
    return None


def _classify_returns(
    node: cst.FunctionDef | None, facts: ModuleFacts, index: ModuleIndex, depth: int
) -> Container | str | None:
    """What a local helper (``self._load()``, ``make_samples(root)``) returns."""
    if node is None or node not in facts.structure.functions:
        return None
    helper = facts.structure.functions[node]
    for current in walk(node.body, into=not_into_scopes):
        if isinstance(current, cst.Return) and current.value is not None:
            result = _classify_value(current.value, helper, None, facts, index, depth + 1)
            if result is not None:
                return result
    return None


def _classify_local(
    name: str, function: FunctionInfo, facts: ModuleFacts, index: ModuleIndex, depth: int
) -> Container | str | None:
    """A local variable copied into ``self``: how it was built in the same function."""
    if function.node is None:
        return None
    builds = _builds_of(function, name)
    for _, value in builds.assignments:
        result = _classify_value(value, function, builds, facts, index, depth + 1)
        if result is not None:
            return result
    return None


def _from_stores(
    builds: _Builds | None, kind: str, function: FunctionInfo, facts: ModuleFacts, index: ModuleIndex, depth: int
) -> Container | None:
    """An empty list/dict filled afterwards: what the stored elements are."""
    if builds is None or not builds.stores:
        return None
    in_loop = any(loop for _, loop, _ in builds.stores)
    source = "filled in a loop" if in_loop else "filled by appends"
    if any(nested for _, _, nested in builds.stores):
        return Container(True, "a dict of lists", source)
    kinds = [_element_kind(element, function, facts, index, depth) for element, _, _ in builds.stores]
    heavy = [what for is_heavy, what in kinds if is_heavy]
    if heavy:
        return Container(True, f"a {kind} of {heavy[0]}", source)
    return Container(False, f"a {kind} of {kinds[0][1]}", source)


def _dict_of_containers(
    value: cst.Dict, function: FunctionInfo, facts: ModuleFacts, index: ModuleIndex, depth: int
) -> Container | None:
    """``{"paths": paths, "labels": labels}`` where the values are lists built in ``__init__``."""
    for element in value.elements:
        if isinstance(element, cst.DictElement):
            inner = _classify_value(element.value, function, None, facts, index, depth + 1)
            if isinstance(inner, Container):
                return Container(True, "a dict of lists", inner.source)
    return None


def _element_kind(
    element: cst.BaseExpression | _ElementsOf, function: FunctionInfo, facts: ModuleFacts, index: ModuleIndex, depth: int
) -> tuple[bool, str]:
    """Whether one stored element is many Python objects (dicts, lists, instances), and its name."""
    if isinstance(element, _ElementsOf):
        return _elements_kind(element.iterable, function, facts, index, depth)
    if isinstance(element, (cst.Dict, cst.DictComp)):
        return True, "dicts"
    if isinstance(element, (cst.List, cst.ListComp, cst.Set, cst.SetComp)):
        return True, "lists"
    if isinstance(element, cst.Tuple):
        inner = [_element_kind(e.value, function, facts, index, depth + 1) for e in element.elements]
        return (True, "tuples of containers") if any(heavy for heavy, _ in inner) else (False, "tuples")
    if isinstance(element, cst.Call):
        qualified = facts.imports.resolve(element.func)
        leaf = _callee_leaf(element) or ""
        if leaf == "dict" and qualified is None:
            return True, "dicts"
        if qualified in _PARSERS:
            return True, "parsed records"
        if leaf in facts.structure.classes_by_name or (qualified is None and leaf[:1].isupper()):
            return True, "objects"
        return False, "values"
    if isinstance(element, cst.Name) and function.node is not None and depth <= _MAX_DEPTH:
        return _local_element_kind(element.value, function, facts, index, depth)
    if isinstance(element, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return False, "strings"
    return False, "values"


def _elements_kind(
    iterable: cst.BaseExpression, function: FunctionInfo, facts: ModuleFacts, index: ModuleIndex, depth: int
) -> tuple[bool, str]:
    """What the elements of ``iterable`` are (``x.extend(pairs)``, ``x += pairs[:n]``): a local
    is classified as the container it was built as (``pairs = [(p, prompt) for p in files]`` holds
    tuples, not lists)."""
    while isinstance(iterable, cst.Subscript) or (
        isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value in _WRAPPERS and iterable.args
    ):
        iterable = iterable.value if isinstance(iterable, cst.Subscript) else iterable.args[0].value  # pairs[:n], list(pairs)
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "zip":
        return False, "tuples"
    if isinstance(iterable, cst.Name):
        if depth > _MAX_DEPTH:
            return False, "values"
        inner = _classify_local(iterable.value, function, facts, index, depth + 1)
        if isinstance(inner, Container):
            return inner.heavy, _element_words(inner.what)
    return _element_kind(iterable, function, facts, index, depth)


def _element_words(what: str) -> str:
    """``tuples`` for ``a list of tuples``."""
    for prefix in ("a list of ", "a dict of ", "a set of "):
        if what.startswith(prefix):
            return what[len(prefix):]
    return what


def _local_element_kind(
    name: str, function: FunctionInfo, facts: ModuleFacts, index: ModuleIndex, depth: int
) -> tuple[bool, str]:
    """An element held in a local: a dict built just before, or a record from a parsed file."""
    assert function.node is not None
    for node in walk(function.node.body, into=not_into_scopes):
        if isinstance(node, cst.Assign) and any(name in bound_names(t.target) for t in node.targets):
            heavy, what = _element_kind(node.value, function, facts, index, depth + 1)
            if heavy:
                return heavy, what
        elif isinstance(node, (cst.For, cst.CompFor)) and name in bound_names(node.target):
            inner = _classify_value(node.iter, function, None, facts, index, depth + 1)
            if isinstance(inner, Container) and inner.heavy:
                return True, "parsed records"
    return False, "values"


def _iteration_source(
    iterable: cst.BaseExpression, function: FunctionInfo, facts: ModuleFacts, index: ModuleIndex, depth: int
) -> str | None:
    for node in walk(iterable):
        if isinstance(node, cst.Call):
            qualified = facts.imports.resolve(node.func) or ""
            leaf = _callee_leaf(node) or ""
            if qualified in _PARSERS or qualified in _FILE_LISTINGS:
                return qualified
            if leaf in _PATH_LISTING_METHODS:
                return f"Path.{leaf}"
            if leaf in _LINE_METHODS | _ROW_METHODS or qualified.startswith("csv."):
                return qualified or leaf
            if leaf == "open":
                return "read from a file"
    if isinstance(iterable, cst.Name):
        inner = _classify_local(iterable.value, function, facts, index, depth + 1)
        if isinstance(inner, Container):
            return inner.source
    return None


# --- the finding ----------------------------------------------------------------------------------
def _violation(
    cls: ClassInfo,
    attribute: str,
    container: Container,
    where: cst.CSTNode,
    usage: Usage | None,
    facts: ModuleFacts,
    direct: bool,
) -> Violation:
    node = where.body[0] if isinstance(where, cst.SimpleStatementLine) else where
    read = "read per sample" if direct else "looked up with a key from each sample"
    holds = f"'{attribute}' holds {container.what} ({container.source})"
    if usage is None:
        message = (
            f"{holds}, {read} in {cls.name}.__getitem__: under a DataLoader with num_workers > 0, "
            "every forked worker would copy their memory pages as it reads them"
        )
        return Violation(node=node, message=message, confidence=Confidence.LOW, statement=where)
    line = facts.line_of(usage.call)
    at = f", line {line}" if line is not None else ""
    message = (
        f"{holds}, {read} by DataLoader workers (num_workers={usage.workers_text}{at}): each read "
        "bumps the objects' refcounts, so every forked worker copies their memory pages and grows through the epoch"
    )
    if not container.heavy or not direct:
        confidence = Confidence.LOW  # a few objects per sample, or a lookup table of unknown size
    elif usage.direct and usage.workers is not None and container.certain:
        confidence = Confidence.HIGH
    else:
        confidence = Confidence.MEDIUM
    return Violation(node=node, message=message, confidence=confidence, statement=where)
