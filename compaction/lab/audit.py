"""What did my agent forget? The compactions an agent really made in its own session, audited.

The importers list the compactions a session file records (`Conversation.compactions`: Claude
Code's compact boundary and summary, Codex's `compacted` item, hermes' summaries, Gemini CLI's
compression). For each, this module mines the probe facts (latest request, constraints, files,
errors, commands, identifiers) of what the agent compacted away — the messages from the previous
compaction (or the start) up to this one — and asks:
- what the agent's context still held afterwards (its summary, plus the system prompt): the facts
  it kept, and the ones it forgot, each with the message it came from;
- what our pipeline keeps when it compacts the same messages with the agent's budget: the window
  of the session's model, the agent's recorded tokens-before as the trigger, and a summary no
  larger than the agent's.

An encrypted summary (Codex's server-side compaction) cannot be read: `kept_by_agent` is None and
nothing is called forgotten, but our pipeline's run is still shown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.errors import CompactionError, ConfigError
from compaction.formats.conversation import Conversation, RecordedCompaction
from compaction.lab.cost.calibration import FAMILY_WINDOWS, effective_window
from compaction.lab.memory import with_lab_cache
from compaction.lab.probes import Fact, haystack, mine_facts, normalise
from compaction.lab.strategies import config_for_target
from compaction.messages import Message, content_text
from compaction.summary.recorded import SessionRecord
from compaction.tokens import TokenCounter, make_counter

AGENT_NAMES = {
    "claude-code": "Claude Code",
    "codex": "Codex",
    "hermes": "hermes",
    "gemini-cli": "Gemini CLI",
    "copilot-cli": "Copilot CLI",
    "qwen-code": "Qwen Code",
    "opencode": "OpenCode",
    "cline": "Cline",
    "roo-code": "Roo Code",
    "kilo-code": "Kilo Code",
}


@dataclass
class ForgottenFact:
    """A fact of the compacted-away messages that the agent's context no longer holds."""

    kind: str
    text: str
    message_index: int
    kept_by_pipeline: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "text": self.text,
            "message_index": self.message_index,
            "kept_by_pipeline": self.kept_by_pipeline,
        }


@dataclass
class AuditEvent:
    """One compaction the agent made, measured."""

    agent: str
    position: int
    trigger: str
    tokens_before: int
    tokens_before_recorded: bool
    summary: str | None
    summary_tokens: int | None
    compacted_from: int  # the first message this compaction took away
    facts_before: int
    kept_by_agent: int | None
    kept_by_pipeline: int | None
    agent_tokens_after: int | None  # the agent's context right after: system + summary
    pipeline_tokens_after: int | None
    window: int
    window_source: str  # "litellm", "model family" or "assumed"
    forgotten: list[ForgottenFact] = field(default_factory=list)
    pipeline_error: str | None = None
    line: int | None = None
    # Ours with the agent's post-compaction size as its token target: the fair comparison of
    # what a context of that size can hold (the agent's budget alone lets ours keep a tail).
    kept_at_agent_size: int | None = None
    tokens_at_agent_size: int | None = None
    pipeline_summary: str | None = None  # our summary in the same-size run, for side by side
    #: The provider's count at the last call before the compaction (prompt + output), from the
    #: usage the file records: the context's real size, never a session's running total.
    recorded_prompt: int | None = None
    #: Where `agent_tokens_after` comes from: "counted" (its system prompt and summary, counted
    #: here) or "recorded usage" (an encrypted summary: the provider's count at the first call
    #: after the compaction, the context the agent really carried on with).
    agent_tokens_after_source: str | None = None

    @property
    def agent_name(self) -> str:
        return AGENT_NAMES.get(self.agent, self.agent)

    def verdict(self) -> str:
        """One size story: what the agent's context held right after the compaction, and what
        ours keeps of the same messages at that same total."""
        if self.agent_tokens_after is None:
            size = "the size of the agent's context after it is not recorded"
        elif self.agent_tokens_after_source == "recorded usage":
            size = (
                f"the agent's context after it was {self.agent_tokens_after:,} tokens (the "
                "provider's count at its next call)"
            )
        else:
            size = f"the agent's context after it was {self.agent_tokens_after:,} tokens"
        if self.kept_by_agent is None:
            agent = f"the agent's summary is not readable; {size}"
        else:
            agent = f"{size} and held {self.kept_by_agent} of {self.facts_before} facts"
        if self.kept_at_agent_size is not None:
            ours = (
                f"ours at the same size ({self.tokens_at_agent_size or 0:,} tokens) keeps "
                f"{self.kept_at_agent_size} of {self.facts_before}"
            )
        elif self.kept_by_pipeline is not None and self.pipeline_tokens_after is not None:
            ours = (
                f"ours with the agent's window and trigger keeps {self.kept_by_pipeline} of "
                f"{self.facts_before} ({self.pipeline_tokens_after:,} tokens)"
            )
        else:
            ours = f"ours could not run ({self.pipeline_error})"
        return f"{agent}; {ours}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "position": self.position,
            "trigger": self.trigger,
            "tokens_before": self.tokens_before,
            "tokens_before_recorded": self.tokens_before_recorded,
            "summary": self.summary,
            "summary_tokens": self.summary_tokens,
            "compacted_from": self.compacted_from,
            "facts_before": self.facts_before,
            "kept_by_agent": self.kept_by_agent,
            "kept_by_pipeline": self.kept_by_pipeline,
            "agent_tokens_after": self.agent_tokens_after,
            "pipeline_tokens_after": self.pipeline_tokens_after,
            "window": self.window,
            "window_source": self.window_source,
            "forgotten": [fact.to_dict() for fact in self.forgotten],
            "pipeline_error": self.pipeline_error,
            "line": self.line,
            "kept_at_agent_size": self.kept_at_agent_size,
            "tokens_at_agent_size": self.tokens_at_agent_size,
            "recorded_prompt": self.recorded_prompt,
            "agent_tokens_after_source": self.agent_tokens_after_source,
            "verdict": self.verdict(),
        }


@dataclass
class Audit:
    file: str | None
    format: str
    events: list[AuditEvent]

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "format": self.format,
            "events": [event.to_dict() for event in self.events],
        }


def session_window(
    model: str | None, tokens_before: int, use_litellm: bool = True
) -> tuple[int, str]:
    """The window of the session's model: litellm's map, else its family, else assumed from the
    recorded tokens-before (the agent compacted at that size, so its window was larger).

    `use_litellm=False` skips the map: importing litellm costs seconds per process, which an
    audit of the agent alone (a corpus scan, where the window is only reported) need not pay."""
    if model:
        from compaction.config import model_context_length

        try:
            if use_litellm:
                return model_context_length(model), "litellm"
        except ConfigError:
            pass
        lowered = model.lower()
        for prefix, window in FAMILY_WINDOWS:
            if prefix in lowered:
                return window, "model family"
    return max(int(tokens_before * 1.25), 8_000), "assumed"


def agent_window(
    conversation: Conversation, tokens_before: int, use_litellm: bool = True
) -> tuple[int, str]:
    """The window the agent worked in: the one it recorded (Codex's `model_context_window`), or
    the one its recorded compactions imply where litellm's map says more (Claude Code compacts
    near 167K of a 200K window on a model the map gives 1M); else `session_window`.
    `use_litellm=False` leaves litellm's map out (see `session_window`)."""
    model = conversation.metadata.get("model")
    model = model if isinstance(model, str) else None
    found = effective_window(conversation, model, use_litellm=use_litellm)
    if found.source == "recorded by the agent" or (
        found.source.startswith("inferred")
        and (found.litellm_window is not None or not use_litellm)
    ):
        return found.window, found.source
    return session_window(model, tokens_before, use_litellm=use_litellm)


def recorded_prompt(conversation: Conversation, position: int) -> int | None:
    """Prompt + output of the last call before `position` whose usage the file records."""
    before = [c for c in conversation.calls if c.position < position and c.input_tokens]
    if not before:
        return None
    last = before[-1]
    return (last.input_tokens or 0) + (last.output_tokens or 0)


def context_after(conversation: Conversation, position: int) -> int | None:
    """The provider's count of the prompt at the first call after `position` whose usage the
    file records: the context the agent carried on with (its summary, the messages it kept and
    its system prompt), when the summary itself cannot be read."""
    after = [c for c in conversation.calls if c.position >= position and c.input_tokens]
    return after[0].input_tokens if after else None


#: "#12" is an issue number in prose, but in a session of more messages than that it is as
#: likely a message number (a harness's, a summary's "#1"): never a fact worth calling forgotten.
_NUMBER = re.compile(r"#(\d+)")


def _not_message_numbers(facts: list[Fact], messages: int) -> list[Fact]:
    return [
        fact
        for fact in facts
        if not (
            fact.category == "identifiers"
            and (match := _NUMBER.fullmatch(fact.text.strip())) is not None
            and int(match.group(1)) < messages
        )
    ]


def _agent_context(messages: Sequence[Message], event: RecordedCompaction) -> list[Message]:
    """What the agent's context held right after the compaction: its system prompt and summary."""
    systems = [m for m in messages[: event.position] if m.get("role") == "system"]
    if event.summary is None:
        return systems
    return [*systems, {"role": "user", "content": event.summary}]


def _pipeline(
    before: list[Message],
    tokens_before: int,
    window: int,
    summary_tokens: int | None,
    counter: TokenCounter,
    model: str,
    marks: dict[int, str] | None = None,
) -> tuple[list[Message] | None, str | None]:
    """Our pipeline on the same messages, with the agent's budget; (messages, error)."""
    threshold = min(max(tokens_before / window, 0.05), 1.0)
    settings: dict[str, Any] = {"context_length": window, "threshold_ratio": threshold}
    if summary_tokens:
        cap = max(summary_tokens, 200)
        settings.update(summary_max_tokens=cap, summary_min_tokens=min(2_000, cap))
    try:
        config = CompactionConfig(**settings)
        record = SessionRecord(marks=tuple(sorted((marks or {}).items())))
        result = Compactor(config, counter=counter).compress(before, force=True, recorded=record)
    except CompactionError as exc:
        return None, str(exc)
    return result.messages, None


def _at_size(
    before: list[Message], target: int, counter: TokenCounter, marks: dict[int, str] | None = None
) -> tuple[list[Message] | None, str | None]:
    """Our pipeline on `before` with `target` tokens as its goal (the lab's equal-size rule):
    its messages and its summary's text."""
    if not before or target <= 0:
        return None, None
    try:
        config = config_for_target(target)
        record = SessionRecord(marks=tuple(sorted((marks or {}).items())))
        result = Compactor(config, counter=counter).compress(before, force=True, recorded=record)
    except CompactionError:
        return None, None
    return result.messages, result.summary.text if result.summary is not None else None


@with_lab_cache
def audit(
    conversation: Conversation, counter: TokenCounter | None = None, ours: bool = True
) -> Audit:
    """One AuditEvent per compaction the conversation's agent recorded, in order.

    `ours=False` measures the agent alone (what it kept and forgot) without running our
    pipeline twice per compaction: a corpus scan over thousands of sessions needs only that
    (`kept_by_pipeline`, `kept_at_agent_size` and their tokens are then None)."""
    counter = counter or make_counter()
    messages = conversation.messages
    model = conversation.metadata.get("model")
    model = model if isinstance(model, str) else None
    cwd = conversation.metadata.get("cwd")
    cwd = cwd if isinstance(cwd, str) else None
    events: list[AuditEvent] = []
    start = 0
    for recorded in sorted(conversation.compactions, key=lambda c: c.position):
        position = min(max(recorded.position, 0), len(messages))
        # The agent's context before this compaction: its system prompt, then everything since
        # the previous compaction (whose summary it carried) up to this one.
        systems = [m for m in messages[:start] if m.get("role") == "system"]
        window_messages = list(messages[start:position])
        before = [*systems, *window_messages]
        counted = counter.count_messages(before) if before else 0
        tokens_before = recorded.tokens_before or counted
        summary_tokens = (
            counter.count_message({"role": "user", "content": recorded.summary})
            if recorded.summary is not None
            else None
        )
        # Marks by position in the window, and in `before` (its system messages come first).
        window_marks = {
            i - start: kind for i, kind in conversation.marks.items() if start <= i < position
        }
        before_marks = {i + len(systems): kind for i, kind in window_marks.items()}
        facts = _not_message_numbers(
            _offset(mine_facts(window_messages, marks=window_marks), start), len(messages)
        )
        window, source = agent_window(conversation, tokens_before, use_litellm=ours)
        pipeline: list[Message] | None = None
        error: str | None = None
        if not ours:
            error = "not run (the agent alone was audited)"
        elif before:
            pipeline, error = _pipeline(
                before,
                tokens_before,
                window,
                summary_tokens,
                counter,
                model or "gpt-4o",
                before_marks,
            )
        else:
            error = "nothing before the compaction"
        ours_kept = _kept(facts, pipeline, cwd) if pipeline is not None else None
        kept_by_agent: int | None = None
        agent_after: int | None = None
        same_size: list[Message] | None = None
        our_summary: str | None = None
        forgotten: list[ForgottenFact] = []
        after_source: str | None = None
        if recorded.summary is None:
            # Encrypted (Codex): what the agent kept cannot be read, but its size can, from the
            # next call's usage; ours is compared at that size, not left out.
            agent_after = context_after(conversation, recorded.position)
            after_source = "recorded usage" if agent_after is not None else None
            if ours and agent_after is not None:
                same_size, our_summary = _at_size(before, agent_after, counter, before_marks)
        else:
            after_source = "counted"
            context = _agent_context(messages, recorded)
            agent_kept = _kept(facts, context, cwd)
            kept_by_agent = sum(agent_kept)
            agent_after = counter.count_messages(context)
            if ours:
                same_size, our_summary = _at_size(before, agent_after, counter, before_marks)
            forgotten = [
                ForgottenFact(
                    fact.category,
                    fact.text,
                    fact.source_index,
                    bool(ours_kept and ours_kept[position]),
                )
                for position, fact in enumerate(facts)
                if not agent_kept[position]
            ]
        events.append(
            AuditEvent(
                agent=recorded.agent,
                position=recorded.position,
                trigger=recorded.trigger,
                tokens_before=tokens_before,
                tokens_before_recorded=recorded.tokens_before is not None,
                summary=recorded.summary,
                summary_tokens=summary_tokens,
                compacted_from=start,
                facts_before=len(facts),
                kept_by_agent=kept_by_agent,
                kept_by_pipeline=sum(ours_kept) if ours_kept is not None else None,
                agent_tokens_after=agent_after,
                pipeline_tokens_after=(
                    counter.count_messages(pipeline) if pipeline is not None else None
                ),
                window=window,
                window_source=source,
                forgotten=forgotten,
                pipeline_error=error,
                line=recorded.line,
                kept_at_agent_size=sum(_kept(facts, same_size, cwd)) if same_size else None,
                tokens_at_agent_size=counter.count_messages(same_size) if same_size else None,
                pipeline_summary=our_summary,
                recorded_prompt=recorded_prompt(conversation, recorded.position),
                agent_tokens_after_source=after_source,
            )
        )
        start = position
    return Audit(file=conversation.source, format=conversation.format, events=events)


def _spellings(fact: Fact, cwd: str | None) -> list[str]:
    """The ways a summary may name the fact. A file is remembered when it is named relative to
    the project or by its file name (summaries rarely repeat absolute paths); everything else
    must appear as mined."""
    spellings = [fact.key]
    if fact.category == "files":
        path = fact.text.strip()
        if cwd and path.startswith(cwd.rstrip("/") + "/"):
            spellings.append(normalise(path[len(cwd.rstrip("/")) + 1 :]))
        name = path.rstrip("/").rsplit("/", 1)[-1]
        if "." in name and len(name) >= 5:
            spellings.append(normalise(name))
    return spellings


def _kept(facts: Sequence[Fact], messages: Sequence[Message], cwd: str | None) -> list[bool]:
    text = haystack(messages)
    return [any(s and s in text for s in _spellings(fact, cwd)) for fact in facts]


def _offset(facts: list[Fact], start: int) -> list[Fact]:
    return [Fact(f.category, f.text, f.source_index + start) for f in facts]


def summary_preview(summary: str | None, limit: int = 400) -> str:
    text = content_text({"content": summary}) if summary else ""
    return text if len(text) <= limit else text[: limit - 1] + "…"
