"""LL302 dataloader-copy-on-read: Python containers in a Dataset that forked DataLoader workers copy."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.prefilter import SyntaxShape


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
copying on read: the total is the same.

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
    )

    @classmethod
    def may_report(cls, shape: SyntaxShape, min_confidence: Confidence) -> bool:
        """Only subclasses of a torch or torchvision ``Dataset`` are checked."""
        return shape.uses(*{base.rsplit(".", 1)[-1] for base in DATASET_BASES})

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        from leaklint.rules.checks.ll302_dataloader_copy_on_read import check

        return check(facts)

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
