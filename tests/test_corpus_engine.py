"""The engine over real transcripts nobody on this project wrote: τ-bench runs and SWE-agent
histories, read as plain OpenAI message lists straight from the corpus files (no importer), with
the same invariants the property tests check."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from conversation_checks import assert_well_formed_compaction, tool_structure_problems

from compaction import CompactionConfig, Compactor, compress
from compaction.phases.boundaries import find_head_end

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS} (a fresh user clone)"
)


def _taubench() -> list[list[dict[str, Any]]]:
    runs = json.loads((CORPUS / "taubench__gpt-4o-airline.json").read_text(encoding="utf-8"))
    return [run["traj"] for run in runs]


def _swe_agent_history(name: str) -> list[dict[str, Any]]:
    data = json.loads((CORPUS / name).read_text(encoding="utf-8"))
    history = []
    for entry in data["history"]:
        message = {key: entry[key] for key in ("role", "content", "tool_calls") if key in entry}
        if entry.get("role") == "tool":
            # SWE-agent lists the answered ids; the canonical format carries one.
            message["tool_call_id"] = (entry.get("tool_call_ids") or [None])[0]
        if message.get("tool_calls") is None:
            message.pop("tool_calls", None)
        history.append(message)
    return history


def _small_window(messages: list[dict[str, Any]]) -> CompactionConfig:
    # A window whose threshold sits at a third of the conversation, so compaction has work to do.
    total = Compactor().count_tokens(messages)
    return CompactionConfig(context_length=max(1_000, int(total * 2 / 3)), summary_min_tokens=200)


def _check(messages: list[dict[str, Any]]) -> None:
    config = _small_window(messages)
    frozen = copy.deepcopy(messages)
    result = compress(messages, config)
    assert messages == frozen
    assert_well_formed_compaction(messages, result, find_head_end(messages, config.protect_first_n))
    again = compress(messages, config)
    assert again.messages == result.messages
    if result.messages:
        assert tool_structure_problems(compress(result.messages, config).messages) == []
    if not result.skipped and config.threshold_tokens < result.tokens_before:
        middle = result.phase("boundaries").details["middle_tokens"]
        if middle >= 3_000:  # a small middle can cost less than its summary's minimum budget
            assert result.tokens_after < result.tokens_before


@needs_corpus
def test_every_taubench_run_compacts_well_formed() -> None:
    trajectories = _taubench()
    assert len(trajectories) == 200
    for trajectory in trajectories:
        _check(trajectory)


@needs_corpus
@pytest.mark.parametrize(
    "name",
    [
        "sweagent-demo-fc__marshmallow-code__marshmallow-1867.traj",
        "sweagent-testdata-gpt4__pydicom__pydicom-1458.traj",
    ],
)
def test_swe_agent_histories_compact_well_formed(name: str) -> None:
    history = _swe_agent_history(name)
    assert len(history) > 20
    _check(history)
    result = compress(history, _small_window(history))
    assert not result.skipped
    assert result.summary is not None
    assert result.summary.sections["Active Task"] != "None."


@needs_corpus
def test_every_corpus_file_through_the_root_api_as_a_script_would() -> None:
    """What a user's script (and ../shared/tools/corpus-check) does with the public names alone:
    `compaction.load_conversations(path)`, then `compress` the largest conversation at a 32K
    window. Every file loads, every compaction fits, and neither provider rejects the result."""
    import compaction

    files = sorted(p for p in CORPUS.iterdir() if p.is_file() and p.name != "README.md")
    assert files
    for path in files:
        conversations = compaction.load_conversations(path)
        assert conversations, path.name
        assert conversations[0].messages == compaction.load_conversation(path).messages
        biggest = max(conversations, key=lambda c: len(c.messages))
        result = compaction.compress(biggest.messages, CompactionConfig(context_length=32_000))
        assert result.tokens_after <= 32_000, path.name
        for provider in ("openai", "anthropic"):
            errors = [
                p for p in compaction.validate(result.messages, provider) if p.severity == "error"
            ]
            assert errors == [], (path.name, provider, errors[:3])
