"""The shipped sample sessions: indexed, reproducible, importable, and telling the stories their
descriptions promise when the engine runs on them."""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from compaction.config import CompactionConfig
from compaction.errors import CompactionError
from compaction.input.checks import validate_messages
from compaction.lab.samples import (
    SAMPLES_DIR,
    Sample,
    SampleNotFoundError,
    get_sample,
    list_samples,
    load_sample,
)
from compaction.summary import SUMMARY_PREFIX, SYSTEM_NOTE, parse_summary
from compaction.tokens import make_counter

SAMPLES = list_samples()
IDS = [sample.id for sample in SAMPLES]

pytestmark = pytest.mark.skipif(not SAMPLES, reason="sample_sessions/ is not in this checkout")


def _compress() -> Any:
    """`compaction.compress` (the public API) or, until __init__ re-exports it, the compactor's."""
    try:
        from compaction import compress
    except ImportError:
        from compaction.compactor import compress
    return compress


@pytest.fixture(scope="module")
def counter() -> Any:
    return make_counter("tiktoken", "gpt-4o")


@pytest.fixture(scope="module")
def loaded() -> dict[str, list[dict[str, Any]]]:
    return {sample.id: load_sample(sample.id).messages for sample in SAMPLES}


@pytest.fixture(scope="module")
def results(loaded: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    compress = _compress()
    return {sample_id: compress(messages) for sample_id, messages in loaded.items()}


# -- the index --------------------------------------------------------------------------------


def test_index_lists_every_story() -> None:
    assert IDS == [
        "fix-failing-tests",
        "already-compacted",
        "anchor-last-user",
        "orphans",
        "research-session",
        "teaching-example",
        "quick-fix",
        "shell-session",
    ]
    assert {sample.format for sample in SAMPLES} == {"openai", "anthropic", "claude-code", "codex"}


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_indexed_file_exists_and_is_described(sample: Sample) -> None:
    assert sample.path.is_file()
    assert sample.path.parent == SAMPLES_DIR
    assert sample.title
    # Two or three sentences a user reads in the app.
    assert 2 <= len(re.findall(r"[.!?](\s|$)", sample.description)) <= 5
    assert isinstance(sample.settings, dict)


def test_samples_folder_stays_small() -> None:
    total = sum(path.stat().st_size for path in SAMPLES_DIR.rglob("*") if path.is_file())
    assert total < 3_000_000


def test_generated_files_match_the_generator() -> None:
    """The committed samples are exactly what build_samples.py writes (deterministic, current)."""
    builders = Path(__file__).resolve().parents[1] / "sample_sessions"
    sys.path.insert(0, str(builders))
    try:
        build = importlib.import_module("build_samples")
        common = importlib.import_module("builders.common")
        for entry in build.SAMPLES:
            data = entry["build"]()
            if entry["file"].endswith(".jsonl"):
                text = "\n".join(
                    json.dumps(record, ensure_ascii=False, separators=(",", ":")) for record in data
                )
                expected = text + "\n"
            else:
                expected = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
            committed = (SAMPLES_DIR / entry["file"]).read_text(encoding="utf-8")
            assert committed == expected, f"{entry['file']} is stale: rerun build_samples.py"
        assert common.IdMaker("x").openai() == common.IdMaker("x").openai()
    finally:
        sys.path.remove(str(builders))


# -- loading ----------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_sample_loads_through_the_format_loader(sample: Sample) -> None:
    conversation = load_sample(sample.id)
    assert conversation.format == sample.format
    messages, repairs = validate_messages(conversation.messages)
    assert repairs == []
    assert len(messages) >= 10


def test_unknown_sample_names_the_available_ones() -> None:
    with pytest.raises(SampleNotFoundError, match="available: fix-failing-tests"):
        get_sample("no-such-sample")


def test_missing_folder_means_no_samples(tmp_path: Path) -> None:
    assert list_samples(tmp_path / "absent") == []


def test_broken_index_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "index.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(CompactionError, match=r"index\.json"):
        list_samples(tmp_path)
    (tmp_path / "index.json").write_text('{"samples": [{"id": "x"}]}', encoding="utf-8")
    with pytest.raises(CompactionError, match="lacks file, format, title"):
        list_samples(tmp_path)


# -- what each story promises ------------------------------------------------------------------


def test_coding_session_is_over_the_default_trigger(
    loaded: dict[str, list[dict[str, Any]]], counter: Any
) -> None:
    messages = loaded["fix-failing-tests"]
    tokens = counter.count_messages(messages)
    assert 110 <= len(messages) <= 140
    assert 64_000 < tokens <= 90_000
    results_by_id = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    reads = [
        results_by_id[call["id"]]
        for m in messages
        for call in m.get("tool_calls") or []
        if call["function"]["name"] == "read_file"
        and json.loads(call["function"]["arguments"]) == {"path": "tasklog/users.py"}
    ]
    assert len(reads) == 3 and len(set(reads)) == 1
    biggest = max(len(m["content"]) for m in messages if m["role"] == "tool")
    assert biggest > 30_000
    text = json.dumps(messages)
    assert "sqlite3.IntegrityError: UNIQUE constraint failed: users.email" in text
    assert "never modify the migrations" in text


def test_research_session_is_long(loaded: dict[str, list[dict[str, Any]]], counter: Any) -> None:
    messages = loaded["research-session"]
    assert len(messages) >= 150
    assert counter.count_messages(messages) >= 80_000
    assert any(m.get("reasoning") for m in messages if m["role"] == "assistant")


def test_already_compacted_carries_the_exact_strings(
    loaded: dict[str, list[dict[str, Any]]],
) -> None:
    messages = loaded["already-compacted"]
    assert messages[0]["content"].endswith(SYSTEM_NOTE)
    assert messages[0]["content"].count(SYSTEM_NOTE) == 1
    summaries = [m for m in messages if str(m.get("content") or "").startswith(SUMMARY_PREFIX)]
    assert len(summaries) == 1
    summary = parse_summary(summaries[0]["content"][len(SUMMARY_PREFIX) :])
    assert summary.found_headings == 13
    numbers = re.findall(r"^(\d+)\. ", summary.sections["Completed Actions"], re.MULTILINE)
    assert numbers == [str(n) for n in range(1, 10)]


def _documented_numbers(description: str) -> list[int]:
    return [int(number.replace(",", "")) for number in re.findall(r"\d[\d,]*\d|\d", description)]


def test_teaching_example_reproduces_the_documented_numbers(
    loaded: dict[str, list[dict[str, Any]]], results: dict[str, Any], counter: Any
) -> None:
    sample = get_sample("teaching-example")
    messages = loaded["teaching-example"]
    config = CompactionConfig(context_length=sample.settings["context_length"])
    tokens = counter.counts(messages)
    total = sum(tokens)
    boundaries = results["teaching-example"].phase("boundaries").details
    head_end, tail_start = boundaries["head_end"], boundaries["tail_start"]
    head, tail = sum(tokens[:head_end]), sum(tokens[tail_start:])
    middle = total - head - tail
    budget = config.summary_budget(middle)
    documented = _documented_numbers(sample.description)
    for value in (total, len(messages), head_end, head, len(messages) - tail_start, tail, middle):
        assert value in documented, f"{value} is not in the description"
    assert int(middle * config.summary_ratio) in documented
    assert budget == 8_000 and budget in documented
    # What Phase 3 really uses: the middle after Phase 1, and its budget, are stated too.
    summarize = results["teaching-example"].phase("summarize").details
    assert summarize["middle_tokens"] in documented
    assert int(summarize["middle_tokens"] * config.summary_ratio) in documented
    assert summarize["budget_tokens"] in documented
    # The seed's worked example: trigger 64K, head ≈2K, tail ≈12.8K, middle ≈49.2K.
    assert total >= config.threshold_tokens == 64_000
    assert head_end == 3 and abs(head - 2_000) <= 200
    assert abs(tail - config.tail_budget_tokens) <= 300
    assert abs(middle - 49_200) <= 400
    assert len(messages) < 40


# -- the engine on the samples ----------------------------------------------------------------


@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_compress_works_on_every_sample(
    sample: Sample, results: dict[str, Any], loaded: dict[str, list[dict[str, Any]]]
) -> None:
    result = results[sample.id]
    assert result.tokens_before > 0
    if sample.format in ("claude-code", "codex"):
        # Small on purpose: everything fits in the protected tail.
        assert result.skipped
        assert result.messages == loaded[sample.id]
    else:
        assert not result.skipped, result.skip_reason
        assert result.tokens_after < result.tokens_before
        assert (
            sum(str(m.get("content") or "").startswith(SUMMARY_PREFIX) for m in result.messages)
            == 1
        )


def test_coding_sample_dedupes_the_three_identical_reads(results: dict[str, Any]) -> None:
    prune = results["fix-failing-tests"].phase("prune").details
    hashes = [entry["hash"] for entry in prune["dedupe"]]
    assert any(hashes.count(digest) == 2 for digest in hashes)  # users.py, read three times


def test_coding_sample_one_liners_keep_the_error_evidence(results: dict[str, Any]) -> None:
    lines = [
        entry["line"] for entry in results["fix-failing-tests"].phase("prune").details["summaries"]
    ]
    assert any(
        line.endswith("sqlite3.IntegrityError: UNIQUE constraint failed: users.email")
        for line in lines
    )
    assert not any(line.startswith("[terminal]") and " 1 lines output" in line for line in lines)


def test_anchor_sample_records_the_pinned_request(results: dict[str, Any]) -> None:
    # Issue 21: moving the cut back would drag the whole chain of tool calls into the tail.
    details = results["anchor-last-user"].phase("boundaries").details
    assert details["anchor"] == "pinned"
    assert details["pinned_index"] == details["last_user_index"] < details["raw_walk_stop"]
    assert not [move for move in details["moves"] if move["reason"].startswith("anchor")]
    result = results["anchor-last-user"]
    request = result.phases[0].messages[details["pinned_index"]]
    assert request in result.messages


def test_orphans_sample_yields_orphan_fixes(results: dict[str, Any]) -> None:
    result = results["orphans"]
    assert len(result.orphan_fixes) == 2
    kinds = sorted(
        json.dumps(fix.to_dict() if hasattr(fix, "to_dict") else vars(fix))
        for fix in result.orphan_fixes
    )
    assert any("call_7rWkQ2mXn4pLs9Vb1cTe8yHd" in kind for kind in kinds)
    ids = {m.get("tool_call_id") for m in result.messages if m["role"] == "tool"}
    calls = {call["id"] for m in result.messages for call in m.get("tool_calls") or []}
    assert ids == calls


def test_already_compacted_is_an_iterative_update(results: dict[str, Any]) -> None:
    result = results["already-compacted"]
    assert result.iterative
    system = result.messages[0]["content"]
    assert system.count(SYSTEM_NOTE) == 1


def test_focus_topic_changes_the_research_summary(
    loaded: dict[str, list[dict[str, Any]]], results: dict[str, Any]
) -> None:
    plain = results["research-session"].summary
    if plain is None or plain.is_empty("Completed Actions"):
        pytest.skip("the extractive summariser is still a placeholder (fills only Active Task)")
    focus = get_sample("research-session").settings["focus"]
    focused = _compress()(loaded["research-session"], focus=focus).summary
    assert focused.text != plain.text
    assert focused.text.lower().count("webhook") > plain.text.lower().count("webhook")
