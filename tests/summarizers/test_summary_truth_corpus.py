"""The truth check: every line of every summary, on every real session and sample, is true of
the messages it cites.

Each corpus file (and each shipped sample) is compressed at a tight and a roomy window, with
what its file records beside the messages, and every item of the summary is checked here,
independently of the engine's own check (summary/check.py), against the conversation:

- it cites at least one message, or says what else it came from (the session's record, an
  earlier summary, the actions the budget left out);
- every cited message exists and lies where the section may reach: the summarised middle, the
  opening request for Goal and Constraints, the tool outputs of the head and tail (which Phase 1
  or Fit may cut to a line) for the identifier sections, anywhere for the Active Task;
- Constraints & Preferences and Pending User Asks cite only the user's own requests, and each
  is, word for word, what the user typed there (never a tool's output, a file, a pasted log or
  a slash command's expansion);
- every backticked string, path and identifier in the item is in the cited messages' text;
- no harness transport tag (`<USER_REQUEST>`, `<command-name>`, `<system-reminder>`…) is quoted;
- the working directory is the one the session records, where it records one;
- and the engine's own check flags nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from corpus_paths import CORPUS, corpus_files

from compaction import CompactionConfig, Compactor
from compaction.formats import load_conversations
from compaction.formats.conversation import Conversation
from compaction.lab.samples import SAMPLES_DIR
from compaction.messages import is_user_request
from compaction.summary import SECTION_NAMES
from compaction.summary.check import _claim_key, _Texts, claims
from compaction.summary.items import CARRIED
from compaction.summary.rules import SECTION_REACH
from compaction.text.user_words import own_words

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = SAMPLES_DIR
WINDOWS = (8_000, 32_000)
CONVERSATIONS_PER_FILE = 4
TAG = re.compile(
    r"</?(?:USER_REQUEST|ADDITIONAL_METADATA|system-reminder|command-name|command-message|"
    r"command-args|local-command-stdout|environment_context|environment_details|"
    r"user_instructions|task-notification)>"
)
OWN_WORDS_SECTIONS = ("Constraints & Preferences", "Pending User Asks")
NOT_A_MESSAGE = ("recorded: ", CARRIED, "left out by the budget")


def _files() -> list[Path]:
    samples = sorted(p for p in SAMPLES.glob("*.json*") if p.name != "index.json")
    return corpus_files() + samples


def test_the_shared_corpus_is_here_or_says_why_not() -> None:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is absent (a fresh clone without the shared corpus)")
    assert corpus_files(), "the shared corpus folder holds no transcript"


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.name[:45])
def test_every_summary_line_is_true_of_the_messages_it_cites(path: Path) -> None:
    conversations = load_conversations(path)
    checked = 0
    # The largest of each file: the ones with a middle to summarise.
    largest = sorted(conversations, key=lambda c: -len(c.messages))[:CONVERSATIONS_PER_FILE]
    for conversation in largest:
        if len(conversation.messages) < 4:
            continue
        for window in WINDOWS:
            checked += _check(conversation, window)
    if path.parent != SAMPLES and checked == 0:
        pytest.skip(f"{path.name}: no summary at these windows (nothing to summarise)")


def _check(conversation: Conversation, window: int) -> int:
    messages = conversation.messages
    record = conversation.record()
    result = Compactor(CompactionConfig(context_length=window)).compress(
        messages, force=True, recorded=record
    )
    summary = result.summary
    if summary is None:
        return 0
    where = f"{conversation.source or conversation.title} at {window:,}"
    assert summary.items, f"{where}: the summary has no items with provenance"
    bounds = result.phase("boundaries").details
    summarised = frozenset(
        index for index, fate in result.phase("summarize").fates.items() if fate == "folded"
    )
    assert summarised, where
    assert bounds["head_end"] <= min(summarised) and max(summarised) < bounds["tail_start"]
    marks = conversation.marks
    texts = _Texts(messages, marks)
    opening = next((i for i, m in enumerate(messages) if is_user_request(m, marks.get(i))), None)
    assert TAG.search(summary.text) is None, f"{where}: {TAG.search(summary.text)}"
    for section in SECTION_NAMES:
        for item in summary.section_items(section):
            label = f"{where}, {section}: {item.text[:80]!r}"
            assert not item.flags, f"{label}: {item.flags}"
            if not item.sources:
                assert item.origin is not None and item.origin.startswith(NOT_A_MESSAGE), label
                continue
            for index in item.sources:
                assert 0 <= index < len(messages), label
                reach = SECTION_REACH.get(section)
                if reach == "anywhere":
                    continue
                allowed = set(summarised)
                if reach == "opening" and opening is not None:
                    allowed.add(opening)
                if reach == "pruned" and messages[index].get("role") in ("tool", "assistant"):
                    # A tool output Phase 1 or Fit cuts in the tail or the head leaves the
                    # context too: its identifiers may be kept.
                    allowed.add(index)
                assert index in allowed, f"{label}: cites #{index}"
            pool = " ".join(texts.of(index) for index in item.sources)
            for claim in claims(item.text):
                assert _claim_key(claim) in pool or (item.origin or "").startswith(CARRIED), (
                    f"{label}: {claim!r} not in its sources"
                )
            if section in OWN_WORDS_SECTIONS:
                cited = [(messages[index], marks.get(index)) for index in item.sources]
                assert all(is_user_request(m, mark) for m, mark in cited), label
                words = " ".join(" ".join(own_words(m, mark).split()) for m, mark in cited)
                said = _claim_key(re.sub(r"^(?:[-*•]|\d+[.)])\s+", "", item.text))
                assert said in words, f"{label}: not what the user typed"
    directory = record.working_directory_at(max(summarised))
    state = summary.sections["Active State"]
    if directory is not None:
        assert f"Working directory: {directory.path}\n" in state + "\n", f"{where}: {state}"
    return 1
