"""``leaklint verify``: a real subcommand with a table, stable JSON, a plot, and honest exit codes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from leaklint import cli
from leaklint.findings import Severity
from leaklint.rule import Rule
from leaklint.runtime.repro import OPTIONAL_FRAMEWORKS
from leaklint.runtime.units import format_bytes


def invoke(*args: str):
    return CliRunner().invoke(cli.main, ["verify", *args])


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """verify keeps its last results under XDG_CACHE_HOME: never the developer's own cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    return tmp_path / "xdg-cache"


def test_without_torch_it_says_how_to_install_torch_for_this_machine(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    result = invoke("LL101")
    assert result.exit_code == 2
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in result.output
    assert "leaklint-ml[runtime]" not in result.output  # the extra does not bring torch


def test_an_unknown_code_is_a_usage_error():
    result = invoke("LL999")
    assert result.exit_code == 2
    assert "unknown rule 'LL999'" in result.output
    assert "unknown rule 'LL1011' (did you mean 'LL101'?)" in invoke("LL1011").output


def test_verify_is_a_subcommand_not_a_path_to_lint():
    result = CliRunner().invoke(cli.main, ["verify", "--help"])
    assert result.exit_code == 0
    assert "--iterations" in result.output and "--plot" in result.output


def test_json_output_follows_the_documented_schema():
    pytest.importorskip("torch")
    result = invoke("LL102", "LL401", "LL501", "--device", "cpu", "--iterations", "6", "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert list(document) == ["schema", "leaklint", "torch", "device", "iterations", "warmup", "results", "summary"]
    assert (document["schema"], document["device"], document["iterations"], document["warmup"]) == ("leaklint.verify/1", "cpu", 6, 3)
    ll102, ll401, ll501 = document["results"]
    assert list(ll102) == ["code", "name", "severity", "device", "status", "verdict", "reason", "host_meter", "leaky", "fixed"]
    assert list(ll102["leaky"]) == [
        "growth_per_iteration", "host_growth_per_iteration", "peak", "held",
        "allocated_per_iteration", "seconds_per_iteration", "live", "host", "host_held",
    ]  # fmt: skip
    assert (ll102["status"], ll102["verdict"]) == ("confirmed", "growth confirmed")
    assert len(ll102["leaky"]["live"]) == 9  # warm-up included
    assert ll102["leaky"]["growth_per_iteration"] > 4096 >= ll102["fixed"]["growth_per_iteration"]
    assert (ll401["severity"], ll401["verdict"]) == ("peak", "peak confirmed")
    if ll501["status"] == "skipped":
        assert ll501["reason"] == "tensorflow not installed" and ll501["leaky"] is None
    assert sum(document["summary"].values()) == 3


def test_the_table_and_the_plot(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    plot = tmp_path / "verify.png"
    result = invoke("LL201", "--device", "cpu", "--iterations", "4", "--plot", str(plot))
    assert result.exit_code == 0, result.output
    header, row = result.stdout.splitlines()[:2]
    assert header.split()[:4] == ["CODE", "DEVICE", "LEAKY/ITER", "FIXED/ITER"]
    assert row.startswith("LL201  cpu") and row.endswith("peak confirmed")
    assert "[1/1] LL201" in result.stderr  # progress goes to stderr
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


class NoDifference(Rule):
    """A rule whose 'fix' changes nothing: verify must not confirm it."""

    code = "XX901"
    name = "no-difference"
    severity = Severity.LEAK
    summary = help = docs = "test rule"

    class Repro(Rule.Repro):
        def setup(self, ctx):
            import torch

            ctx.x = torch.ones(64, device=ctx.device)

        def leaky(self, ctx):
            ctx.x.sum()

        fixed = leaky


def test_a_rule_its_repro_does_not_confirm_fails_the_run(monkeypatch):
    pytest.importorskip("torch")
    import leaklint.registry

    monkeypatch.setattr(leaklint.registry, "all_rules", lambda: {"XX901": NoDifference})
    result = invoke("XX901", "--device", "cpu", "--iterations", "4")
    assert result.exit_code == 1
    assert "not confirmed" in result.stdout
    assert "the rule claims leak (growth); measured: not confirmed" in result.stdout


# --- a broken or incomplete install ----------------------------------------------------------------
@pytest.mark.parametrize("failure", ["ImportError('libtorch_cpu.so: cannot open shared object file')", "OSError('[WinError 126] fbgemm.dll')"])
def test_a_torch_that_fails_to_import_is_a_clear_error_not_a_traceback(tmp_path, failure):
    from conftest import run_leaklint, text

    (tmp_path / "torch.py").write_text(f"raise {failure}\n")
    out, err = text(run_leaklint("verify", "LL101", env={"PYTHONPATH": str(tmp_path)}, cwd=tmp_path))
    assert "Traceback" not in err
    assert "leaklint: error: torch is installed but failed to import: " in err
    assert failure.split("(")[0] in err
    assert "CPU only: pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cpu" in err
    assert "https://pytorch.org/get-started/locally/" in err
    result = run_leaklint("verify", "LL101", env={"PYTHONPATH": str(tmp_path)}, cwd=tmp_path)
    assert result.returncode == 2


def test_a_missing_psutil_or_matplotlib_fails_the_rule_with_an_install_hint(monkeypatch):
    pytest.importorskip("torch")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in ("psutil", "matplotlib") else real(name, *a))
    result = invoke("LL302", "LL303", "--device", "cpu")
    assert result.exit_code == 1
    rows = result.stdout.splitlines()[1:3]
    assert rows[0].startswith("LL302") and rows[0].endswith("error: psutil not installed: pip install 'leaklint-ml[runtime]'")
    assert rows[1].startswith("LL303") and rows[1].endswith("error: matplotlib not installed: pip install 'leaklint-ml[runtime]'")
    assert "[1/2] LL302 error: psutil not installed" in result.stderr


def test_the_runtime_extra_brings_everything_verify_needs_but_torch_and_the_optional_frameworks():
    """torch is the user's to install (the build for their machine); the extra never pulls it, nor
    the frameworks whose rules are skipped without them (TensorFlow, Lightning, which needs torch)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    from conftest import ROOT

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {requirement.split(">")[0].split("=")[0] for requirement in project["optional-dependencies"]["runtime"]}
    needed = {name for rule in cli_rules().values() if rule.has_repro() for name in rule.Repro.requires} - {"torch", *OPTIONAL_FRAMEWORKS}
    assert needed <= runtime, needed - runtime
    assert "torch" not in runtime
    assert {r.split(">")[0].split(";")[0].strip() for r in project["dependencies"]} == {"libcst", "click", "tomli"}


def cli_rules():
    from leaklint.registry import all_rules

    return all_rules()


# --- the table ------------------------------------------------------------------------------------
def test_a_verdict_cell_says_not_confirmed_once_and_why(monkeypatch):
    pytest.importorskip("torch")
    import leaklint.registry

    monkeypatch.setattr(leaklint.registry, "all_rules", lambda: {"XX901": NoDifference})
    result = invoke("XX901", "--device", "cpu", "--iterations", "4")
    row = result.stdout.splitlines()[1]
    assert row.endswith("  not confirmed: the rule claims leak (growth); measured: not confirmed")
    assert row.count("not confirmed") == 2
    assert "XX901 not confirmed: the rule claims leak" in result.stderr


def test_the_table_has_held_bytes_and_a_skipped_rule_says_why_while_running():
    pytest.importorskip("torch")
    from leaklint.runtime.units import parse_size

    result = invoke("LL102", "LL501", "--device", "cpu", "--iterations", "4")
    header, ll102 = result.stdout.splitlines()[:2]
    column = header.index("HELD LEAKY / FIXED")
    leaky, fixed = ll102[column:].split("  ")[0].split(" / ")
    assert parse_size(leaky) > 256 * 1024 > 1024 > parse_size(fixed)  # the leaky list keeps every graph (7 x 66.5 KiB)
    if importlib.util.find_spec("tensorflow") is None:
        assert "[2/2] LL501 skipped: tensorflow not installed (0.0 s)" in result.stderr


# --- the last measured numbers on the rule page ----------------------------------------------------
def test_verify_keeps_the_last_result_of_each_rule_for_the_rule_page(private_cache):
    pytest.importorskip("torch")
    page = CliRunner().invoke(cli.main, ["rule", "LL102"]).stdout
    store = private_cache / "leaklint" / "verify.json"
    assert f"No measurement stored yet. Run `leaklint verify LL102`: it measures both variants and keeps the result in {store}" in page

    assert invoke("LL102", "--device", "cpu", "--iterations", "4").exit_code == 0
    document = json.loads(store.read_text())
    assert document["schema"] == "leaklint.verify-last/1" and list(document["rules"]) == ["LL102"]
    entry = document["rules"]["LL102"]
    import torch

    assert (entry["device"], entry["torch"], entry["iterations"], entry["warmup"]) == ("cpu", torch.__version__, 4, 3)
    assert entry["result"]["verdict"] == "growth confirmed"
    assert [p.name for p in store.parent.iterdir()] == ["verify.json"]  # written atomically: no temporary left

    page = CliRunner().invoke(cli.main, ["rule", "LL102"]).stdout
    section = page[page.index("## Last measured"):]
    assert f"`leaklint verify LL102` on {entry['date'][:10]} " in section
    assert f"device cpu, torch {torch.__version__}, leaklint " in section and "4 iterations after 3 warm-up" in section
    growth = entry["result"]["leaky"]["growth_per_iteration"]
    assert f"| tensor bytes gained per iteration | {format_bytes(growth)} | " in section
    assert "| tensor bytes held at the end |" in section and "| host memory (heap) gained per iteration |" in section
    assert "Verdict: growth confirmed (the rule claims leak: confirmed)." in section

    # Another rule's run keeps this entry; a rule that was only skipped stores nothing.
    assert invoke("LL201", "LL501", "--device", "cpu", "--iterations", "4").exit_code == 0
    rules = json.loads(store.read_text())["rules"]
    assert "LL102" in rules and "LL201" in rules
    if importlib.util.find_spec("tensorflow") is None:
        assert "LL501" not in rules


def test_the_store_honours_xdg_cache_home_and_a_broken_file_is_no_measurement(monkeypatch, tmp_path):
    from leaklint.runtime import last

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert last.store_path() == tmp_path / "xdg" / "leaklint" / "verify.json"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # not absolute: ignored, as the XDG spec says
    assert last.store_path() == Path.home() / ".cache" / "leaklint" / "verify.json"
    broken = tmp_path / "verify.json"
    broken.write_text("{not json")
    assert last.load("LL101", broken) is None
    assert "No measurement stored yet" in last.render("LL101", broken)


def test_an_unwritable_store_only_warns(monkeypatch, tmp_path):
    pytest.importorskip("torch")
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file where the directory should be
    result = invoke("LL201", "--device", "cpu", "--iterations", "4")
    assert result.exit_code == 0
    assert "leaklint: warning: cannot store the results in " in result.stderr


def test_the_rule_page_says_what_a_host_meter_repro_measures_and_how_to_install_it():
    rules = cli_rules()
    ll303, ll302, ll501, ll101 = (rules[c].doc_page() for c in ("LL303", "LL302", "LL501", "LL101"))
    assert "this repro measures host memory, not tensor bytes" in ll303 and "live tensor bytes" not in ll303
    assert "bytes of Python objects (tracemalloc)" in ll303
    assert "the DataLoader workers' private memory (USS, through psutil)" in ll302
    assert "`pip install tensorflow`, which no extra of leaklint installs" in ll501
    assert "leaklint[plot]" not in ll303 + ll501
    assert "live tensor bytes gained per iteration" in ll101 and "host heap bytes (glibc mallinfo2" in ll101


# --- the plot -------------------------------------------------------------------------------------
def synthetic(code, severity, verdict, leaky, fixed, host_meter="heap"):
    from leaklint.runtime.driver import RuleResult

    return RuleResult(code, code.lower(), Severity(severity), "cpu", "confirmed", verdict, host_meter=host_meter, leaky=leaky, fixed=fixed)


def plot_cases():
    from leaklint.runtime.verdict import VariantStats

    flat = (100_000.0,) * 8
    rising = tuple(100_000.0 + 10_000 * i for i in range(8))
    seconds = (0.001,) * 8
    return {
        "live": synthetic("LL102", "leak", "growth confirmed", VariantStats(rising, flat, flat, flat, seconds, 3), VariantStats(flat, flat, flat, flat, seconds, 3)),
        "host": synthetic("LL101", "leak", "host growth confirmed", VariantStats(flat, flat, flat, rising, seconds, 3), VariantStats(flat, flat, flat, flat, seconds, 3)),
        "peak": synthetic("LL401", "peak", "peak confirmed", VariantStats(flat, (3e6,) * 8, flat, (), seconds, 3), VariantStats(flat, (2e6,) * 8, flat, (), seconds, 3)),
        "held": synthetic("LL104", "peak", "peak confirmed", VariantStats((2e6,) * 8, (3e6,) * 8, flat, (), seconds, 3), VariantStats((1e6,) * 8, (2.5e6,) * 8, flat, (), seconds, 3)),
        "time": synthetic("LL402", "perf", "perf confirmed", VariantStats(flat, flat, flat, (), (0.2,) * 8, 3), VariantStats(flat, flat, flat, (), seconds, 3)),
        "python host": synthetic("LL303", "leak", "host growth confirmed", VariantStats((), (), (), rising, seconds, 3), VariantStats((), (), (), flat, seconds, 3), "python"),
        "host held": synthetic("LL509", "peak", "peak confirmed", VariantStats((), (), (), (1e6,) * 8, seconds, 3), VariantStats((), (), (), (3e3,) * 8, seconds, 3)),
    }


def test_the_plot_shows_what_each_verdict_is_about():
    from leaklint.runtime.plot import focus

    assert {name: focus(result) for name, result in plot_cases().items()} == {
        "live": "live", "host": "host", "peak": "peak", "held": "held", "time": "time", "python host": "host",
        "host held": "host",
    }  # fmt: skip


def test_a_repro_measured_on_the_host_only_shows_what_the_host_still_holds():
    from leaklint.runtime.report import render_text

    row = render_text([plot_cases()["host held"]]).splitlines()[1]
    assert "976.6 KiB / 2.9 KiB heap" in row and row.rstrip().endswith("peak confirmed")


def test_the_plot_labels_its_quantity_in_plain_numbers():
    pytest.importorskip("matplotlib")
    from leaklint.runtime.plot import draw

    figure = draw(list(plot_cases().values()))
    figure.canvas.draw()
    labels = [ax.get_ylabel() for ax in figure.axes[:6]]
    assert labels == [
        "live tensor memory (KiB)", "host memory, heap (KiB)", "peak tensor memory in the step (MiB)",
        "tensor memory held between steps (MiB)", "time per step (ms)", "host memory, python (KiB)",
    ]  # fmt: skip
    assert all(ax.yaxis.get_offset_text().get_text() == "" for ax in figure.axes[:6])
    assert figure.axes[4].get_yscale() == "log"  # 200x slower: the fixed line would vanish on a linear axis


def test_the_rule_page_of_a_repro_measured_on_the_host_only_shows_what_the_host_still_holds(tmp_path):
    from leaklint.runtime import last
    from leaklint.runtime.report import result_to_dict

    store = last.save([result_to_dict(plot_cases()["host held"])], device="cpu", torch_version="-", iterations=8, warmup=3, path=tmp_path / "verify.json")
    section = last.render("LL509", store)
    assert "| host memory (heap) held at the end | 976.6 KiB | 2.9 KiB |" in section
    assert "tensor bytes held at the end" not in section
