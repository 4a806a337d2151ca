"""benchmarks/bench_instructions.py counts instructions with callgrind: the same script counts
the same every time, to within a few dozen instructions in ~90 million (a temporary folder's
name differs), which is what makes it a view a busy machine does not move; more work counts
more. Skipped where valgrind is not installed (it is not needed to run the project)."""

from __future__ import annotations

import os
import shutil
import sys
from types import ModuleType

import pytest
from benchmark_scripts import load_benchmark

pytestmark = pytest.mark.skipif(
    shutil.which("valgrind") is None, reason="valgrind is not installed (apt-get install valgrind)"
)


def _bench() -> ModuleType:
    return load_benchmark("bench_instructions")


def test_the_same_script_counts_the_same_and_more_work_counts_more() -> None:
    bench = _bench()
    env = dict(os.environ)
    work = "total = 0\nfor i in range({n}):\n    total += len({{str(i): i}})\n"
    small = [bench.instructions(sys.executable, work.format(n=1_000), "/", env) for _ in range(2)]
    large = bench.instructions(sys.executable, work.format(n=100_000), "/", env)
    assert abs(small[0] - small[1]) <= small[0] // 100_000
    assert large > small[0] + 100 * 1_000  # 99,000 more rounds of the loop, each many
