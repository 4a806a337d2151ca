"""`compaction sweep` through CliRunner; LLM sweeps ask before spending (loopback server)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from llm_server import LLMServer

from compaction.cli import main
from compaction.config import CompactionConfig
from compaction.history import History
from compaction.lab.samples import get_sample, list_samples
from compaction.lab.sweep.cost import estimate_cost, price
from compaction.lab.sweep.run import sweep
from compaction.summarizers.llm import LLMSummarizer

SAMPLE = "fix-failing-tests"


@pytest.fixture(scope="module")
def sample_path() -> Path:
    if not any(sample.id == SAMPLE for sample in list_samples()):
        pytest.skip(f"sample_sessions/{SAMPLE} is absent from this checkout")
    return get_sample(SAMPLE).path


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["sweep", *args], input=input)
    # An exception escaping the command is a bug, never an answer: show it, not just "exit 1".
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_sweep_prints_frontier_and_recommendation_and_writes_files(
    sample_path: Path, tmp_path: Path
) -> None:
    out_csv, out_json = tmp_path / "points.csv", tmp_path / "sweep.json"
    code, stdout, stderr = run(
        str(sample_path),
        "--param",
        "tail_token_ratio=0.05:0.15:0.05",
        "--param",
        "summary_ratio=0.1,0.3",
        "--context-length",
        "40000",
        "--recommend-savings",
        "60",
        "--jobs",
        "2",
        "--csv",
        str(out_csv),
        "--json",
        str(out_json),
    )
    assert code == 0, stderr
    assert "Sweeping 6 point(s) over 1 conversation(s)" in stderr
    assert "tail_token_ratio  summary_ratio  tokens after  savings %  recall %" in stdout
    assert "Recommended for >= 60% savings: tail_token_ratio=" in stdout
    assert "[python]\nCompactionConfig(context_length=40000" in stdout
    assert "[cli]\ncompaction compress INPUT --context-length 40000" in stdout
    assert "[yaml]\n# hermes-agent" in stdout
    # and the line for each framework adapter (docs/integrations.md)
    for kind, adapter in (
        ("langchain", "CompactionMiddleware"),
        ("pydantic_ai", "compaction_capability"),
        ("openai_agents", "CompactionFilter"),
    ):
        assert f"[{kind}]\n" in stdout
        assert f"{adapter}(CompactionConfig(context_length=40000" in stdout
    with out_csv.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 6 and {"tail_token_ratio", "savings_pct", "recall"} <= set(rows[0])
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert len(data["points"]) == 6 and data["jobs"] == 2
    best = max(
        (p for p in data["points"] if p["savings_pct"] >= 60),
        key=lambda p: (p["recall"], p["savings_pct"], -p["tokens_after"]),
    )
    assert data["recommendation"]["point"] == best["index"]
    # The CLI's numbers are the library's.
    library = sweep(
        [json.loads(sample_path.read_text(encoding="utf-8"))],
        ["tail_token_ratio=0.05:0.15:0.05", "summary_ratio=0.1,0.3"],
        base_config=CompactionConfig(context_length=40_000),
    )
    assert [p["tokens_after"] for p in data["points"]] == [p.tokens_after for p in library.points]


def test_unreachable_target_says_so_and_save_stores_the_sweep(sample_path: Path) -> None:
    code, stdout, stderr = run(
        str(sample_path),
        "--param",
        "summary_ratio=0.2",
        "--context-length",
        "40000",
        "--recommend-savings",
        "99.9",
        "--save",
        "--label",
        "cli sweep",
    )
    assert code == 0, stderr
    assert "No valid point saves 99.9% or more" in stdout
    assert "Saved as sweep 1" in stderr
    with History() as history:
        (stored,) = history.sweeps()
        assert stored.label == "cli sweep" and stored.recommendation is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--param", "tail_token_ratio=0:2:0.5"],
            "invalid value 1.5 for parameter tail_token_ratio",
        ),
        (["--param", "tail_token_ratio=0.5:0.1:0.1"], "start 0.5 is above stop 0.1"),
        (["--param", "nope=1"], "unknown parameter 'nope'"),
        (["--param", "summary_ratio=0.2", "--set", "threshold_ratio=3"], "threshold_ratio must be"),
        (["--param", "summary_ratio=0.2", "--index", "4"], "--index 4 is out of range"),
        (
            ["--param", "summary_ratio=0.2", "--summarizer", "llm"],
            "the llm summarizer needs a model",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(sample_path: Path, args: list[str], message: str) -> None:
    code, stdout, stderr = run(str(sample_path), *args)
    assert code == 2
    assert stderr.count("\n") == 1 and stderr.startswith("error: ") and message in stderr
    assert "Traceback" not in stderr + stdout


def test_unreadable_file_is_exit_2(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    code, _, stderr = run(str(missing), "--param", "summary_ratio=0.2")
    assert code == 2 and stderr.startswith(f"error: {missing}")


# -- LLM sweeps: the cost is known before anything is sent ----------------------------------------


def test_estimate_sends_nothing_and_counts_the_calls_a_sweep_makes(
    sample_path: Path, llm_server: LLMServer
) -> None:
    messages = json.loads(sample_path.read_text(encoding="utf-8"))
    grid = {"tail_token_ratio": [0.05, 0.1]}
    base = CompactionConfig(context_length=40_000)
    estimate = estimate_cost([messages], grid, "openai/loopback", base)
    assert llm_server.requests == []
    assert estimate.calls == 2 and estimate.prompt_tokens > 0 and estimate.completion_tokens > 0
    assert estimate.cost_usd is None and "cost unknown" in estimate.describe()
    summarizer = LLMSummarizer("openai/loopback", api_base=llm_server.base_url, api_key="test")
    result = sweep([messages], grid, summarizer=summarizer, base_config=base)
    assert len(llm_server.requests) == estimate.calls
    assert result.summarizer == "llm" and all(p.fallbacks == 0 for p in result.points)


def test_priced_models_get_a_cost() -> None:
    cost = price("gpt-4o-mini", 1_000_000, 0)
    assert cost is not None and cost > 0
    assert price("openai/no-such-model-anywhere", 1_000, 1_000) is None


def test_cli_asks_before_spending_and_declining_sends_nothing(
    sample_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTION_API_KEY", "test-key")
    args = [
        str(sample_path),
        "--param",
        "tail_token_ratio=0.05,0.1",
        "--context-length",
        "40000",
        "--summarizer",
        "llm",
        "--model",
        "openai/loopback",
        "--api-base",
        llm_server.base_url,
    ]
    code, stdout, stderr = run(*args, input="n\n")
    assert code == 1
    assert "This sweep makes 2 summary call(s) to openai/loopback" in stderr
    assert "Cancelled: nothing was sent." in stderr
    assert llm_server.requests == [] and "Recommended" not in stdout

    code, stdout, stderr = run(*args, "--yes", "--recommend-savings", "10")
    assert code == 0, stderr
    assert len(llm_server.requests) == 2
    assert "Run it?" not in stderr and "Recommended for >= 10% savings" in stdout
