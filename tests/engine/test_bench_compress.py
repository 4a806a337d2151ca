"""The compress benchmark's own logic: no timing is asserted here (the numbers are the script's
business), only that its rows are measured on the tree it names and combined as it says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from benchmark_scripts import load_benchmark

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    return load_benchmark("bench_compress")


def test_fastest_keeps_each_timing_s_minimum_and_the_rest_of_the_row() -> None:
    first = {"floor": 0.3, "cold": 1.0, "cold_out": {"messages": 9, "tokens": 90}, "tokens": 5}
    second = {"floor": 0.2, "cold": 1.4, "cold_out": {"messages": 9, "tokens": 90}, "tokens": 5}
    bench = _bench()
    assert {"floor", "cold"} <= set(bench.TIMINGS)
    assert bench.fastest(None, first) == first
    assert bench.fastest(first, second) == {
        "floor": 0.2,
        "cold": 1.0,
        "cold_out": {"messages": 9, "tokens": 90},
        "tokens": 5,
    }


WORKER = [sys.executable, "-m", "benchmarks.bench_compress", "--worker"]


def test_a_worker_measures_this_tree_and_reports_what_it_compressed() -> None:
    completed = subprocess.run(
        [*WORKER, "stubbed", "--size", "120", "--tree", str(ROOT)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=_bench()._python_env(ROOT),
        timeout=300,
    )
    row = json.loads(completed.stdout.strip().splitlines()[-1])
    assert Path(row["package"]) == ROOT
    assert all(row[key] > 0 for key in ("floor_stub", "stub_cold", "stub_rerun"))
    assert 0 < row["stub_out"]["messages"] < 120
