"""bench/crashfree.py, CI-sized: a sample of the running interpreter's standard library (every
25th file, plus the files that test parsers and encodings) lints with no internal error, and
leaklint calls a file unparsable exactly when ``ast.parse`` does. The whole standard library, the
torch sources and the benchmark corpus are checked by running bench/crashfree.py itself."""

from __future__ import annotations

import importlib.util
import sys

from conftest import ROOT


def _crashfree():
    spec = importlib.util.spec_from_file_location("crashfree", ROOT / "bench" / "crashfree.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


crashfree = _crashfree()

#: Where the standard library keeps files that are broken or oddly encoded on purpose.
PARSER_TEST_DATA = ("tokenizedata", "data", "encoded_modules", "typinganndata")


def stdlib_sample():
    files = crashfree.stdlib_files()
    odd = [p for p in files if any(part in PARSER_TEST_DATA for part in p.parts) or "bad" in p.name or p.name == "test_grammar.py"]
    return sorted(set(files[::25]) | set(odd))


def test_a_sample_of_the_standard_library():
    files = stdlib_sample()
    report = crashfree.check("stdlib sample", files, jobs=2)
    assert report.ok, crashfree.describe(report)
    assert report.files >= 70


def test_a_disagreement_with_python_is_reported(tmp_path):
    """The check itself works: ast.parse accepts this, and leaklint refuses it on purpose."""
    # A finding to report makes the file worth libcst's parse, which then fails.
    leak = "total = 0\nfor x in loader:\n    loss = model(x).sum()\n    loss.backward()\n    total += loss\n"
    (tmp_path / "odd.py").write_text("import torch\n(x): int = 1\n" + leak)
    (tmp_path / "bad.py").write_text("def f(:\n")
    report = crashfree.check("odd", [tmp_path / "odd.py", tmp_path / "bad.py"], jobs=1)
    assert report.ok and len(report.too_complex) == 1 and report.errors["syntax-error"] == 1
