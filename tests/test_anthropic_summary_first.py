"""With a head that holds no turn (`protect_first_n` 0 or 1: nothing, or only the system prompt),
the summary opens the conversation, and Anthropic wants a user turn there. The audit's sweep over
the corpus found 300 compactions whose summary came out as an assistant turn first; here every
sample session and every corpus conversation is compacted that way and validated for Anthropic.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from corpus_paths import corpus_files as all_corpus_files

from compaction import CompactionConfig, Compactor
from compaction.formats import load_conversations
from compaction.lab.samples import list_samples, load_sample
from compaction.provider_rules import errors, validate
from compaction.summary import SUMMARY_PREFIX

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def _sample_conversations() -> list[tuple[str, list[dict[str, Any]]]]:
    return [(sample.id, load_sample(sample.id).messages) for sample in list_samples()]


def _corpus_conversations() -> list[tuple[str, list[dict[str, Any]]]]:
    found = []
    for path in all_corpus_files():
        if path.name.startswith("."):
            continue
        for position, conversation in enumerate(load_conversations(path)):
            found.append((f"{path.name}#{position}", conversation.messages))
    return found


def _anthropic_errors_after_compaction(
    conversations: list[tuple[str, list[dict[str, Any]]]],
) -> list[str]:
    failures = []
    for label, messages in conversations:
        total = Compactor().count_tokens(messages)
        # The audit's tiny window, and one whose threshold sits at a third of the conversation.
        for window in (1_000, max(1_000, total * 2 // 3)):
            for head in (0, 1):
                config = CompactionConfig(context_length=window, protect_first_n=head)
                result = Compactor(config).compress(messages, force=True)
                failures += [
                    f"{label} window={window} head={head}: {problem}"
                    for problem in errors(validate(result.messages, "anthropic"))
                ]
    return failures


def test_sample_sessions_compacted_with_a_turnless_head_are_valid_for_anthropic() -> None:
    conversations = _sample_conversations()
    assert conversations
    assert _anthropic_errors_after_compaction(conversations) == []


@pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS} (a fresh user clone)"
)
def test_corpus_conversations_compacted_with_a_turnless_head_are_valid_for_anthropic() -> None:
    conversations = _corpus_conversations()
    assert len(conversations) > 200
    assert _anthropic_errors_after_compaction(conversations) == []


def test_the_audit_case_merges_the_summary_into_the_first_user_turn() -> None:
    # `compaction compress fix-failing-tests.openai.json --context-length 1000 --head 1`: the
    # tail opens with the user's latest request, so the summary is merged into it.
    messages = load_sample("fix-failing-tests").messages
    config = CompactionConfig(context_length=1_000, protect_first_n=1)
    result = Compactor(config).compress(messages, force=True)
    assert result.messages[0]["role"] == "system"
    assert result.messages[1]["role"] == "user"
    assert str(result.messages[1]["content"]).startswith(SUMMARY_PREFIX)
    assert result.phase("assemble").details["summary_role"] is None
    assert errors(validate(result.messages, "openai")) == []
    assert errors(validate(result.messages, "anthropic")) == []
