"""`compaction cost` through click's CliRunner: the report's lines on a real session, its JSON,
a file without usage, and one-line errors (exit 2) for a bad `--price`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from corpus_paths import corpus_path

from compaction.cli import main

SPOTTER = "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def _path(name: str) -> Path:
    path = corpus_path(name)
    if path is None:
        pytest.skip(f"corpus file {name} is absent (a fresh clone has no ../shared/corpus*)")
    return path


def test_cost_prints_calls_dollars_the_hidden_prompt_the_window_and_the_compaction() -> None:
    result = CliRunner().invoke(main, ["cost", str(_path(SPOTTER)), "--no-what-if"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "152 with the provider's usage (152 priced)" in out
    assert "dollars      $11.85" in out
    assert "cache hit    97.7%" in out
    assert "the session file does not show" in out
    assert "200,000 (inferred from 1 recorded compaction(s))" in out and "17%" in out
    assert "compaction 1 at message 229 (auto, line 1256): 167,094 tokens before" in out
    assert "cache model  anthropic" in out
    assert "what-if" in out and "agent, as billed" in out and "ours (default)" not in out


def test_cost_json_holds_every_part_and_the_what_ifs(tmp_path: Path) -> None:
    out = tmp_path / "cost.json"
    name = "claudecode-claudereliability-py2rust__transcript.jsonl"
    result = CliRunner().invoke(main, ["cost", str(_path(name)), "--json", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert len(report["cost"]["calls"]) == 39
    assert set(report["cost"]["usd_by_part"]) == {"fresh", "write", "read", "output"}
    names = [s["name"] for s in report["scenarios"]]
    assert "ours (default)" in names and "peer: hermes" in names
    assert report["cache_model"]["read_error"] is not None


def test_a_file_without_usage_says_so_and_a_bad_price_is_one_line(tmp_path: Path) -> None:
    session = tmp_path / "chat.json"
    session.write_text(
        json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
    )
    result = CliRunner().invoke(main, ["cost", str(session)])
    assert result.exit_code == 0, result.output
    assert "0 with the provider's usage" in result.output
    assert "no provider usage" in result.output
    bad = CliRunner().invoke(main, ["cost", str(session), "--price", "gpt-4o=1,2"])
    assert bad.exit_code == 2
    assert "--price" in bad.output and "Traceback" not in bad.output


def test_a_price_override_prices_a_model_the_map_does_not_know() -> None:
    path = _path("claudecode-agenticwallet__claude-session.jsonl")
    unknown = CliRunner().invoke(main, ["cost", str(path), "--no-what-if"])
    assert "unknown price" in unknown.output
    model = "nvidia/nemotron-3-super-120b-a12b-20230311:free"
    priced = CliRunner().invoke(
        main, ["cost", str(path), "--no-what-if", "--price", f"{model}=1,2,1,0.1"]
    )
    assert priced.exit_code == 0, priced.output
    assert "(2 priced)" in priced.output and "--price" in priced.output
