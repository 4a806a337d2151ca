"""Is each line of a summary true of the messages it cites? The provenance check.

Run on every summary a compaction writes, from any summariser: the extractive one cites as it
builds, a model is asked to cite `[#N]`. For each item it asks

- are its citations messages of this conversation, within what was summarised (or where the
  section may reach: rules.SECTION_REACH)?
- may its section take a line from a message of that kind (rules.SECTION_KINDS)? A constraint
  that cites a tool result was not set by the user;
- does the cited text hold what the item states exactly — every backticked string (commands,
  error lines), every file path and every identifier (hashes, URLs, versions) in the item? The
  cited message's text is read with its tool group: a call with its result, a result with its
  call, as the summary joins them on one line;
- an item that carries an earlier summary's line must find it in that summary.

What it finds becomes a flag on the item, shown beside it in the app and the report. It never
raises and never drops an item: a wrong citation is information, not a reason to lose the line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from compaction.messages import (
    Marks,
    Message,
    call_arguments,
    call_name,
    content_text,
    mark_of,
    parse_arguments,
    tool_calls,
)
from compaction.summarizers.extractive.text import mentioned_paths
from compaction.summary import SECTION_NAMES, Summary
from compaction.summary.items import CARRIED, SummaryItem
from compaction.summary.rules import SECTION_REACH, allowed, describe_kinds, message_kinds
from compaction.text.patterns import identifiers, json_strings, readable_text
from compaction.text.user_words import own_words, request_text

#: Sections whose items must be the user's own words: checked against what the user typed
#: (user_words.own_words), not against everything their turn carried.
_OWN_WORDS = ("Constraints & Preferences", "Pending User Asks")
#: A harness's transport tag: never part of what a summary quotes (user_words.py strips them).
_TRANSPORT_TAG = re.compile(
    r"</?(?:USER_REQUEST|ADDITIONAL_METADATA|USER_SETTINGS_CHANGE|EPHEMERAL_MESSAGE|"
    r"system-reminder|command-name|command-message|command-args|local-command-stdout|"
    r"local-command-caveat|environment_context|environment_details|user_instructions|"
    r"task-notification|user_query)>"
)
_ITEM_MARK = re.compile(r"^(?:[-*•]|\d{1,6}[.)])\s+")

_BACKTICKED = re.compile(r"`([^`\n]{3,400})`")
_CUT_MARKS = ("...[truncated]", "...", "…")
#: A claim is checked on its first characters: the summary may cut a long line at its end.
CLAIM_PREFIX_CHARS = 120
_REDACTED = "[REDACTED"


@dataclass(frozen=True)
class SummaryScope:
    """What a summary covered: the messages summarised (the middle), where the first request
    is (Goal and Constraints may cite it), and the tail outputs cut to one line."""

    total: int
    summarised: frozenset[int]
    opening: int | None = None
    pruned: frozenset[int] = frozenset()
    previous_summary: str | None = None
    #: Which user turns the harness sent (messages.Marks); None: the messages' own keys.
    marks: Marks | None = None

    def mark(self, message: Message, index: int) -> str | None:
        return mark_of(message, index, self.marks)

    def reach(self, section: str) -> frozenset[int] | None:
        """The indexes `section` may cite; None for anywhere in the conversation."""
        where = SECTION_REACH.get(section)
        if where == "anywhere":
            return None
        if where == "opening" and self.opening is not None:
            return self.summarised | {self.opening}
        if where == "pruned":
            return self.summarised | self.pruned
        return self.summarised

    def describe(self) -> str:
        if not self.summarised:
            return "nothing"
        low, high = min(self.summarised), max(self.summarised)
        return f"#{low}–#{high}" if low != high else f"#{low}"


@dataclass
class _Texts:
    """Each cited message's text with its tool group, built once per check."""

    messages: Sequence[Message]
    marks: Marks | None = None
    cache: dict[int, str] = field(default_factory=dict)
    words: dict[int, str] = field(default_factory=dict)
    callers: dict[str, int] | None = None
    own_texts: dict[int, str] = field(default_factory=dict)

    def of(self, index: int) -> str:
        text = self.cache.get(index)
        if text is None:
            text = self.cache[index] = _normal(self._group_text(index))
        return text

    def own(self, index: int) -> str:
        """An assistant or user message's text without the rest of its tool group: the start of
        `of(index)` (the group is its parts joined by newlines, which normalise to spaces), so
        what it holds the group holds. "" for a tool result, whose output is the costly part."""
        message = self.messages[index]
        role = message.get("role")
        if role == "tool":
            return ""
        if role != "assistant":
            return self.of(index)  # nothing is grouped with it: the same text
        text = self.own_texts.get(index)
        if text is None:
            text = self.own_texts[index] = _normal(_message_text(message))
        return text

    def words_of(self, index: int) -> str:
        """What the user typed in message `index` ("" for any other message)."""
        text = self.words.get(index)
        if text is None:
            message = self.messages[index]
            mark = mark_of(message, index, self.marks)
            text = self.words[index] = _normal(own_words(message, mark))
        return text

    def _group_text(self, index: int) -> str:
        message = self.messages[index]
        parts = [_message_text(message)]
        if message.get("role") == "assistant":
            ids = {str(call.get("id")) for call in tool_calls(message) if isinstance(call, dict)}
            for later in self.messages[index + 1 : index + 1 + 4 * max(len(ids), 1)]:
                if later.get("role") == "tool" and str(later.get("tool_call_id")) in ids:
                    parts.append(content_text(later))
        elif message.get("role") == "tool":
            caller = self._callers().get(str(message.get("tool_call_id")))
            if caller is not None and caller < index:
                parts.append(_message_text(self.messages[caller]))
        return "\n".join(parts)

    def _callers(self) -> dict[str, int]:
        if self.callers is None:
            self.callers = {}
            for index, message in enumerate(self.messages):
                for call in tool_calls(message):
                    if isinstance(call, dict):
                        self.callers[str(call.get("id"))] = index
        return self.callers


def _message_text(message: Message) -> str:
    text = content_text(message)
    parts = [text]
    if message.get("role") == "tool":
        decoded = readable_text(text)  # a JSON-wrapped output, as its lines
        if decoded is not text:
            parts.append(decoded)
    elif message.get("role") == "user":
        parts.append(request_text(message))  # a slash command as `/name args`
    for call in tool_calls(message):
        if not isinstance(call, dict):
            continue
        raw = call_arguments(call)
        parts.append(call_name(call))
        parts.append(raw)
        parts.extend(json_strings(parse_arguments(raw)))
    return "\n".join(parts)


def _normal(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").split())


def claims(text: str) -> list[str]:
    """What an item states exactly: its backticked strings, file paths and identifiers."""
    found: list[str] = []
    for quoted in _BACKTICKED.findall(text):
        found.append(quoted)
    bare = _BACKTICKED.sub(" ", text)
    found.extend(path for path in mentioned_paths(bare) if len(path) >= 4)
    found.extend(identifiers(bare))
    return [claim for claim in dict.fromkeys(found) if _REDACTED not in claim]


def _claim_key(claim: str) -> str:
    key = _normal(claim)
    for mark in _CUT_MARKS:
        if key.endswith(mark):
            key = key[: -len(mark)].rstrip()
            break
    return key[:CLAIM_PREFIX_CHARS]


def check_item(
    section: str,
    item: SummaryItem,
    messages: Sequence[Message],
    scope: SummaryScope,
    texts: _Texts,
    verbatim: bool = False,
) -> tuple[str, ...]:
    """The flags of one item (empty when it holds). With `verbatim` (a summariser that quotes
    rather than paraphrases: the extractive one), a rule or a pending ask must be the user's
    own typed words, word for word."""
    flags = [flag for flag in item.flags if flag.startswith(("unreadable citation", "no source"))]
    tag = _TRANSPORT_TAG.search(item.text)
    if tag is not None:
        flags.append(f"quotes the harness's tag {tag.group()}")
    carried = item.origin is not None and item.origin.startswith(CARRIED)
    if carried and not item.sources:
        previous = _normal(scope.previous_summary or "")
        missing = [c for c in claims(item.text) if _claim_key(c) not in previous]
        if missing:
            flags.append(f"`{missing[0]}` is not in the previous summary")
        return tuple(dict.fromkeys(flags))
    if not item.sources:
        if item.origin is None and "no source cited" not in flags:
            flags.append("no source")
        return tuple(dict.fromkeys(flags))
    reach = scope.reach(section)
    cited: list[int] = []
    for index in item.sources:
        if not 0 <= index < len(messages):
            flags.append(f"cites #{index}, which is not a message of this conversation")
            continue
        cited.append(index)
        if reach is not None and index not in reach:
            flags.append(f"cites #{index}, outside what was summarised ({scope.describe()})")
        mark = scope.mark(messages[index], index)
        if not allowed(section, messages[index], mark):
            kinds = ", ".join(sorted(k.value for k in message_kinds(messages[index], mark)))
            flags.append(f"cites #{index} ({kinds}); {section} takes {describe_kinds(section)}")
    stated = claims(item.text) if cited else []
    own_words_checked = bool(cited) and verbatim and section in _OWN_WORDS and not carried
    # The pool (every cited message with its tool group: outputs of many KB, normalised) is
    # built only for a claim that no cited message's own text holds, or for the own-words
    # check; building it for every item was half of the check's cost.
    if stated or own_words_checked:
        where = ", ".join(f"#{index}" for index in cited[:3])
        pool: str | None = None
        for claim in stated:
            key = _claim_key(claim)
            if section not in _OWN_WORDS and any(key in texts.own(index) for index in cited):
                # Found in a cited message's own text, which the pool below holds: the path a
                # decision names is in its own sentence, so the tool outputs grouped with the
                # message need not be read for it.
                continue
            if pool is None:
                pool = _pool(section, cited, texts, scope if carried else None)
            if key not in pool:
                flags.append(f"`{claim}` is not in {where}")
                break  # one missing claim says the citation is wrong; more say nothing new
        if own_words_checked:
            if pool is None:
                pool = _pool(section, cited, texts, None)
            quoted = _claim_key(_ITEM_MARK.sub("", item.text))[:CLAIM_PREFIX_CHARS]
            if quoted and quoted not in pool:
                flags.append(f"not the user's own words in {where}")
    return tuple(dict.fromkeys(flags))


def _pool(section: str, cited: list[int], texts: _Texts, carried: SummaryScope | None) -> str:
    """What the cited messages say, as one text to look claims up in: what the user typed for
    a section of their own words, else each message with its tool group; with `carried` (a
    grouped line that holds earlier values beside new ones) the previous summary too."""
    if section in _OWN_WORDS:
        pool = " ".join(texts.words_of(index) for index in cited)
    else:
        pool = " ".join(texts.of(index) for index in cited)
    if carried is not None:
        pool += " " + _normal(carried.previous_summary or "")
    return pool


def check_summary(
    summary: Summary, messages: Sequence[Message], scope: SummaryScope, verbatim: bool = False
) -> Summary:
    """`summary` with every item's flags set by the check (the same object, items replaced)."""
    texts = _Texts(messages, scope.marks)
    for name in SECTION_NAMES:
        items = summary.items.get(name)
        if not items:
            continue
        summary.items[name] = [
            item.with_flags(check_item(name, item, messages, scope, texts, verbatim))
            for item in items
        ]
    return summary
