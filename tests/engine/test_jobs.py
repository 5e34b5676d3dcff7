"""How many workers a run uses: the usable CPUs, capped by a container's quota; small runs none."""

from __future__ import annotations

import concurrent.futures

import pytest

import leaklint.engine as engine
from conftest import LEAKY_LOOP
from leaklint.config import Settings
from leaklint.registry import all_rules


@pytest.mark.parametrize(
    "files, expected",
    [
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu.max": "150000 100000\n"}, 2),
        ({"cpu.max": "50000 100000\n"}, 1),
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "400000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 4),
        ({}, None),
        ({"cpu.max": "garbage"}, None),
    ],
)
def test_cgroup_quota(tmp_path, files, expected):
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    assert engine._cgroup_cpu_quota(str(tmp_path)) == expected


def test_default_jobs_honours_the_quota(monkeypatch):
    monkeypatch.setattr(engine, "_cgroup_cpu_quota", lambda: 1)
    assert engine.default_jobs() == 1


def test_a_few_files_start_no_pool(tmp_path, monkeypatch):
    """A pre-commit run on three files must not pay for starting worker processes."""
    paths = []
    for name in "abc":
        (tmp_path / f"{name}.py").write_text(LEAKY_LOOP)
        paths.append(str(tmp_path / f"{name}.py"))
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", lambda *a, **k: pytest.fail("a pool was started"))
    rules = list(all_rules().values())
    result, _ = engine.lint_paths(paths, rules, Settings(), jobs=8)
    assert len(result.findings) == 3
