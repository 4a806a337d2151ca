"""The adapters' benchmark's own logic: no timing is asserted (the numbers are the script's
business), only that every row runs the turns it says, ours compacts on each framework's run,
and the table divides ours by each of the framework's own rows."""

from __future__ import annotations

from types import ModuleType

import pytest
from benchmark_scripts import load_benchmark

pytest.importorskip("langchain", reason="the [langchain] extra is not installed")
pytest.importorskip("pydantic_ai", reason="the [pydantic-ai] extra is not installed")
pytest.importorskip("agents", reason="the [openai-agents] extra is not installed")


def _bench() -> ModuleType:
    return load_benchmark("bench_integrations")


@pytest.mark.parametrize("framework", ["LangChain", "Pydantic AI", "OpenAI Agents SDK"])
def test_each_framework_row_runs_and_ours_compacts(framework: str) -> None:
    bench = _bench()
    rows = bench.FRAMEWORKS[framework](60)
    ours = rows["ours"]
    seconds, split, compactions = ours
    assert compactions >= 2  # 60 pages of ~675 tokens cross a 16,000-token threshold
    assert split.calls["should_compress"] == 60  # once per model call
    assert split.calls["compress"] >= compactions
    assert split.calls["converted"] >= 60
    assert 0 < sum(split.seconds.values()) <= seconds
    theirs = [label for label in rows if label.startswith("theirs: ")]
    assert theirs
    table = bench.report(framework, rows, 60)
    (line,) = [line for line in table if line.startswith("| ours |")]
    assert line.count(" x |") == len(theirs)
