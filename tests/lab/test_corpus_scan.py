"""`compaction scan`'s library over the real corpus: every recorded compaction found (against a
hand count made with plain JSON reads, independent of the importers), aggregates that match it,
incremental rescans, a corrupt file as a row with its error, and a clean stop on Ctrl-C."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from corpus_paths import CORPUS_DIRS, corpus_files, corpus_path

from compaction.history import History
from compaction.lab.corpus.records import CATEGORIES, ERROR, NOT_A_SESSION, OK
from compaction.lab.corpus.scan import scan_file
from compaction.lab.corpus.scanning import scan_corpus
from compaction.lab.corpus.sources import Source, sources_under
from compaction.lab.corpus.stats import ALL, Distribution, percentile
from compaction.lab.probes import CATEGORIES as PROBE_CATEGORIES

needs_corpus = pytest.mark.skipif(
    not corpus_files(), reason="the shared corpus (../shared/corpus) is not beside the project"
)


def hand_count(path: Path) -> list[dict[str, Any]]:
    """The compactions a file records, read with json alone: Claude Code's `compact_boundary`
    system records, Codex's `compacted` items, OpenCode's `compaction` parts (an export)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    found: list[dict[str, Any]] = []
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
        last_total = None
        for message in whole["messages"]:
            if not isinstance(message, dict):
                continue
            for part in message.get("parts") or []:
                if isinstance(part, dict) and part.get("type") == "compaction":
                    kind = "auto" if part.get("auto") else "manual"
                    found.append({"kind": kind, "tokens": last_total})
            tokens = (message.get("info") or {}).get("tokens")
            if isinstance(tokens, dict) and tokens.get("total"):
                last_total = tokens["total"]
        return found
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
            meta = record.get("compactMetadata") or {}
            found.append({"kind": meta.get("trigger"), "tokens": meta.get("preTokens")})
        elif record.get("type") == "compacted":
            found.append({"kind": None, "tokens": None})
    return found


@pytest.fixture(scope="module")
def corpus_scan() -> Any:
    return scan_corpus(sources_under([d for d in CORPUS_DIRS if d.is_dir()]))


@needs_corpus
def test_the_scan_finds_every_recorded_compaction_in_the_corpus(corpus_scan: Any) -> None:
    by_file = {Path(f.path).name: f for f in corpus_scan.files if f.status == OK}
    expected = {p.name: hand_count(p) for p in corpus_files()}
    found = {name: len(scanned.compactions) for name, scanned in by_file.items()}
    assert found == {name: len(items) for name, items in expected.items()}
    # The corpus's compactions, listed: one each in a Claude Code, a Codex and an OpenCode file.
    assert sorted(name for name, count in found.items() if count) == [
        "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl",
        "codex-ship__rollout-2026-03-12T17-09-38-019ce419-22a5-7321-baa1-5d0152ca561e.jsonl",
        "opencode-dark-factory__session__curious-sailor__ses_39b7f9e89ffe7J0WzLzYrUt4eW.json",
    ]
    for name, items in expected.items():
        for hand, scanned in zip(items, by_file[name].compactions, strict=True):
            if hand["kind"] is not None:
                assert scanned.kind == hand["kind"], name
            if hand["tokens"] is not None:
                assert scanned.trigger_tokens == hand["tokens"], name


@needs_corpus
def test_the_aggregates_match_the_hand_count(corpus_scan: Any) -> None:
    hand = [c for p in corpus_files() for c in hand_count(p)]
    everything = next(g for g in corpus_scan.groups if g.agent == ALL)
    assert everything.compactions == len(hand) == 3
    assert everything.manual == sum(1 for c in hand if c["kind"] == "manual") == 1
    assert everything.auto == 2  # Claude Code's (recorded auto) and Codex's
    per_agent = {g.agent: g.compactions for g in corpus_scan.groups if g.agent != ALL}
    assert {agent: n for agent, n in per_agent.items() if n} == {
        "claude-code": 1,
        "codex": 1,
        "opencode": 1,
    }
    # The two READMEs are read and reported, not sessions; nothing is in error.
    assert everything.not_sessions == 2 and everything.failed == 0
    assert everything.files == len(corpus_files()) + 2
    # Trigger tokens: 167,094 (Claude Code's preTokens), 118,210 (OpenCode's last usage before
    # its compaction, prompt + reply) and Codex's; their median is the middle one.
    triggers = sorted(c.trigger_tokens for f in corpus_scan.files for c in f.compactions)
    assert 167_094 in triggers and 118_210 in triggers
    dist = everything.distributions["trigger_tokens"]
    assert dist.n == 3 and dist.median == triggers[1] and dist.min == triggers[0]
    # Codex's summary is encrypted: nothing is called forgotten for it.
    assert everything.readable == 2
    codex = next(c for f in corpus_scan.files for c in f.compactions if not c.summary_readable)
    assert codex.forgotten is None and codex.pending_request_lost is None
    sessions = sum(len(f.sessions) for f in corpus_scan.files)
    assert everything.sessions == sessions


@needs_corpus
def test_recorded_usage_is_summed_where_the_file_records_it(corpus_scan: Any) -> None:
    path = corpus_path(
        "opencode-dark-factory__session__curious-sailor__ses_39b7f9e89ffe7J0WzLzYrUt4eW.json"
    )
    assert path is not None
    session = next(f for f in corpus_scan.files if f.path == str(path)).sessions[0]
    assert session.calls == 35 and session.input_tokens and session.output_tokens
    assert session.peak_input_tokens is not None and session.peak_input_tokens > 100_000
    assert session.recorded_cost_usd == 0.0  # what the export says its calls cost
    compaction = session.compactions[0]
    assert compaction.trigger_source == "usage" and compaction.kind == "manual"


def test_percentiles_interpolate_between_ranks() -> None:
    assert percentile([1, 2, 3, 4], 0.5) == 2.5
    assert percentile([10, 20], 0.1) == pytest.approx(11.0)
    assert percentile([7], 0.9) == 7
    dist = Distribution.of("x", [None, 3, 1, 2])
    assert (dist.n, dist.median, dist.p10, dist.p90, dist.total) == (3, 2.0, 1.2, 2.8, 6.0)
    assert Distribution.of("x", [None]).n == 0


def test_the_forgotten_kinds_are_the_probe_categories() -> None:
    assert CATEGORIES == PROBE_CATEGORIES


def _small_corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in (
        "claudecode-yatra__claude-session.jsonl",
        "codex-empireofbits__codex-session.jsonl",
        "gemini-vibecodingtracker__test_conversation_gemini.jsonl",
    ):
        source = corpus_path(name)
        if source is None:
            pytest.skip("the shared corpus (../shared/corpus) is not beside the project")
        shutil.copy(source, folder / name)
    return folder


def test_a_second_scan_reads_only_what_changed(tmp_path: Path) -> None:
    folder = _small_corpus(tmp_path)
    with History() as history:
        first = scan_corpus(sources_under([folder]), store=history)
        assert (first.read, first.reused) == (3, 0)
        again = scan_corpus(sources_under([folder]), store=history)
        assert (again.read, again.reused) == (0, 3)
        assert [f.to_dict() for f in again.files] == [f.to_dict() for f in first.files]
        changed = folder / "claudecode-yatra__claude-session.jsonl"
        with changed.open("a", encoding="utf-8") as handle:
            handle.write("\n")
        os.utime(changed, (1, 1))
        third = scan_corpus(sources_under([folder]), store=history)
        assert (third.read, third.reused) == (1, 2)
        assert len(history.scans()) == 3
        full = scan_corpus(sources_under([folder]), store=history, full=True)
        assert full.read == 3


def test_a_corrupt_or_unreadable_file_is_a_row_with_its_error(tmp_path: Path) -> None:
    folder = _small_corpus(tmp_path)
    (folder / "binary.jsonl").write_bytes(b"\x00\xff\xfe not a session")
    (folder / "truncated.json").write_text(
        '{"messages": [{"role": "user", "content": "hi"', "utf-8"
    )
    (folder / "notes.txt").write_text("just some notes\n", "utf-8")
    with History() as history:
        result = scan_corpus(sources_under([folder]), store=history, jobs=2)
        by_name = {Path(f.path).name: f for f in result.files}
        assert by_name["binary.jsonl"].status == ERROR
        assert "binary content" in str(by_name["binary.jsonl"].error)
        assert by_name["truncated.json"].status in (ERROR, NOT_A_SESSION)
        assert by_name["truncated.json"].error
        assert by_name["notes.txt"].status == NOT_A_SESSION
        assert sum(1 for f in result.files if f.status == OK) == 3
        stored = history.previous_scans([str(folder / "binary.jsonl")])
        assert stored[str(folder / "binary.jsonl")].error == by_name["binary.jsonl"].error
        rows = result.session_rows()
        assert any(r["path"].endswith("binary.jsonl") and r["error"] for r in rows)


def test_a_file_that_disappears_is_a_row_with_its_error(tmp_path: Path) -> None:
    gone = Source(str(tmp_path / "gone.jsonl"), 10, 1.0)
    scanned = scan_file(gone)
    assert scanned.status == ERROR and "not found" in str(scanned.error)


@pytest.mark.parametrize("jobs", [1, 2])
def test_ctrl_c_stops_cleanly_and_keeps_what_finished(tmp_path: Path, jobs: int) -> None:
    folder = _small_corpus(tmp_path)
    for number in range(16):
        shutil.copy(
            folder / "claudecode-yatra__claude-session.jsonl", folder / f"copy-{number}.jsonl"
        )
    sources = sources_under([folder])

    def interrupt(done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with History() as history:
        result = scan_corpus(sources, store=history, jobs=jobs, progress=interrupt)
        assert result.stopped
        assert 2 <= result.read < len(sources)
        assert len(result.not_read) == len(sources) - result.read
        # What finished is in the history, and the next scan reads only the rest.
        assert len(history.previous_scans(s.path for s in sources)) == result.read
        assert history.scans()[0].stopped
        rest = scan_corpus(sources, store=history, jobs=jobs)
        assert (rest.read, rest.reused, rest.stopped) == (len(result.not_read), result.read, False)


def test_a_scan_never_imports_litellm(tmp_path: Path) -> None:
    # The window of the agent's model is only reported by a scan: looking it up in litellm's
    # map cost every worker process seconds of import (most of a small corpus's scan).
    import subprocess
    import sys

    source = corpus_path("claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    if source is None:
        pytest.skip("the shared corpus (../shared/corpus) is not beside the project")
    code = (
        "import sys\n"
        "from compaction.lab.corpus.scan import scan_file\n"
        "from compaction.lab.corpus.sources import sources_under\n"
        f"scanned = scan_file(sources_under([{str(source)!r}])[0])\n"
        "assert len(scanned.compactions) == 1, scanned\n"
        "print('litellm' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == "False"
