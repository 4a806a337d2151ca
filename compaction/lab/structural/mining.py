"""Mining the structural facts of a conversation, every category in one pass from the end."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from compaction.lab.structural.definitions import (
    call_skills,
    doc_line,
    is_skill_text,
    names_a_skill_file,
    signatures,
    skill_paths,
    written_texts,
)
from compaction.lab.structural.facts import CATEGORIES, StructuralFact, position_of
from compaction.lab.structural.missing import missing_paths
from compaction.lab.structural.transcript import (
    _mark,
    call_paths,
    error_key,
    failed,
    failure_lines,
    is_summary,
    latest_request,
    own_words,
    readable,
    sentences,
    text,
)
from compaction.messages import Message, call_arguments, tool_calls

MAX_PER_CATEGORY = 50
LATEST_REQUEST_CHARS = 120
MAX_SENTENCE_CHARS = 400
#: `early_errors` come from the calls in this share of the conversation's messages.
EARLY_SHARE = 0.5

_URL = re.compile(r"https?://[^\s<>\"'`()\[\]{}|\\^]+")
_RULE = re.compile(
    r"\b(?:must|never|always|don'?t|do not|should(?:n'?t)?|only|make sure|avoid|without|"
    r"prefer|no need to|instead)\b",
    re.I,
)
_REASON = re.compile(
    r"\b(?:because|since|so that|so (?:I|we|it)\b|instead of|rather than|to avoid|in order to)\b",
    re.I,
)
#: Someone deciding: the agent's intent in the first person, a choice made, or a refusal.
_DECISION = re.compile(
    r"\b(?:I'?ll|I will|I'?m going to|I am going to|we'?ll|we will|we can|let'?s|let me(?! know)|"
    r"I'?m \w+ing|I am \w+ing|we'?re \w+ing|"
    r"(?:I|we) (?:decided|chose|opted|went with|switched|prefer|am unable|cannot|can'?t|"
    r"won'?t|will not)|decided to|chose to|opted (?:to|for)|went with)\b",
    re.I,
)
#: …or a sentence that opens with the choice itself (`Used X instead of Y`, `Now replace…`).
_DECIDED = re.compile(
    r"^(?:(?:now|also|then|so|and|instead),? )*(?:us(?:e|ed)|switch(?:ed)?|replac(?:e|ed)|"
    r"keep|kept|remov(?:e|ed)|mov(?:e|ed)|drop(?:ped)?|add(?:ed)?|renam(?:e|ed)|"
    r"skip(?:ped)?|chang(?:e|ed)|fix(?:ed)?|chose|opted|decided|went with)\b",
    re.I,
)
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_BULLET = re.compile(r"^(?:[-*•>#]+|\d+[.)])\s+")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def decision_sentences(content: str) -> list[str]:
    """The sentences of an assistant's prose (code blocks left out) that state a decision and
    its reason: someone deciding (I'll, let's, I'm moving, we chose, I cannot…, or a sentence
    that opens with the choice: Used, Replaced, Now remove…) and a reason (because, since,
    so that, so I, instead of, rather than, to avoid, in order to)."""
    prose = _FENCE.sub("\n", content.translate(_QUOTES))
    found = []
    for sentence in sentences(prose):
        sentence = _BULLET.sub("", sentence)
        deciding = _DECISION.search(sentence) or _DECIDED.match(sentence)
        if deciding and _REASON.search(sentence) and len(sentence) <= MAX_SENTENCE_CHARS:
            found.append(sentence)
    return found


class _Facts:
    def __init__(self, length: int) -> None:
        self.length = length
        self.facts: dict[str, list[StructuralFact]] = {name: [] for name in CATEGORIES}
        self.seen: set[tuple[str, str]] = set()

    def add(self, category: str, content: str, index: int, key_text: str = "") -> None:
        position = position_of(index, self.length)
        fact = StructuralFact(category, content, index, key_text, position)
        key = (category, fact.key)
        if not fact.key or key in self.seen or len(self.facts[category]) >= MAX_PER_CATEGORY:
            return
        self.seen.add(key)
        self.facts[category].append(fact)


def _outputs(messages: Sequence[Message]) -> dict[str, str]:
    outputs: dict[str, str] = {}
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "tool":
            outputs[str(message.get("tool_call_id"))] = text(message)
    return outputs


def _early_errors(messages: Sequence[Message], outputs: dict[str, str], facts: _Facts) -> None:
    """The error lines of the failed calls in the first EARLY_SHARE of the conversation, oldest
    first: the newest-first `errors` may never reach them in a long session."""
    for index in range(int(len(messages) * EARLY_SHARE)):
        message = messages[index]
        if not isinstance(message, dict):
            continue
        for call in tool_calls(message):
            output = outputs.get(str(call.get("id"))) if isinstance(call, dict) else None
            if output is not None and failed(output):
                for line in failure_lines(readable(output)):
                    facts.add("early_errors", line, index, error_key(line))


def _written(call: dict[str, object], index: int, facts: _Facts) -> None:
    for path, written, whole in reversed(list(written_texts(call))):
        place = f"{path}: " if path else ""
        for line, key in reversed(signatures(written)):
            facts.add("definitions", place + line, index, key)
        doc = doc_line(written) if whole else None
        if doc is not None:
            facts.add("definitions", place + doc, index, doc)


def mine(
    messages: Sequence[Message], marks: Mapping[int, str] | None = None
) -> list[StructuralFact]:
    """The structural facts of `messages` (never modified), newest first in each category
    (`early_errors` oldest first). `marks` says which user turns the harness sent (the
    conversation's marks; left out, the messages' own `injected` keys)."""
    facts = _Facts(len(messages))
    latest = latest_request(messages, marks)
    if latest is not None:
        first_line = next(line for line in latest[1].splitlines() if line.strip())
        facts.add("latest_request", first_line.strip()[:LATEST_REQUEST_CHARS], latest[0])
    outputs = _outputs(messages)
    _early_errors(messages, outputs, facts)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, dict):
            continue
        content = text(message)
        own = own_words(message, _mark(message, index, marks))
        if own is not None:
            for sentence in reversed(sentences(own)):
                if _RULE.search(sentence) and len(sentence) <= MAX_SENTENCE_CHARS:
                    facts.add("constraints", sentence, index)
        if message.get("role") == "assistant" and not is_summary(content):
            for sentence in reversed(decision_sentences(content)):
                facts.add("decisions", sentence, index)
        if message.get("role") in ("tool", "user") and is_skill_text(content):
            for path in reversed(skill_paths(content)):
                facts.add("skills", path, index)
        for url in reversed(_URL.findall(content)):
            facts.add("urls", url.rstrip(".,;:!?*_"), index)
        for call in reversed(tool_calls(message)):
            if not isinstance(call, dict):
                continue
            for url in reversed(_URL.findall(call_arguments(call))):
                facts.add("urls", url.rstrip(".,;:!?*_\\"), index)
            for path in reversed(call_paths(call)):
                facts.add("paths", path, index)
            _written(call, index, facts)
            for skill in reversed(call_skills(call)):
                facts.add("skills", skill, index)
            output = outputs.get(str(call.get("id")))
            if output is None:
                continue
            if names_a_skill_file(call):
                for path in reversed(skill_paths(output)):
                    facts.add("skills", path, index)
            for path in reversed(missing_paths(call, output)):
                facts.add("missing_paths", path, index)
            if failed(output):
                for line in reversed(failure_lines(readable(output))):
                    facts.add("errors", line, index, error_key(line))
    return [fact for name in CATEGORIES for fact in facts.facts[name]]
