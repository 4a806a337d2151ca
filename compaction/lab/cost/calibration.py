"""Our token counter against the provider's count, call by call, and the window the agent used.

At every call that records usage we know two sizes of the same context: the prompt the provider
counted, and what our counter measures for the messages the file holds up to that call (the
system messages, and everything since the agent's last compaction, whose summary opens it). The
difference has two parts, told apart by a straight line through the calls, provider ≈ hidden +
ratio × counted:
- `hidden`: what the file does not hold — the system prompt and the tool schemas (Claude Code
  writes neither): read at the first call, where the conversation is one short message;
- `ratio`: the counter's drift for the model's family (tiktoken is not Claude's tokenizer).

The correction turns the lab's counts into the provider's, so a window and a threshold mean what
they meant to the agent: `counter_window(window)` is how many *counted* tokens fit in a window
once the hidden part is in it.

The window itself: litellm's map gives a model's largest window (1,000,000 for claude-sonnet-4-6,
1,050,000 for gpt-5.4), not the one the agent worked in. Codex records its own
(`model_context_window`); for the others the compactions the agent made say it: Claude Code
compacted at 167,094 tokens, which is 17% of 1,000,000 but 84% of 200,000. `effective_window`
takes the recorded one, else the smallest common window the recorded triggers fit under (at most
95% of it, as agents trigger before the limit), and says when that differs from litellm's.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from compaction.errors import ConfigError
from compaction.formats.conversation import Conversation, ModelCall
from compaction.messages import Message
from compaction.tokens import TokenCounter, count_each, make_counter

#: Windows models are sold with; an inferred window is one of them.
COMMON_WINDOWS = (
    8_192,
    16_384,
    32_768,
    65_536,
    128_000,
    131_072,
    200_000,
    258_400,
    272_000,
    400_000,
    1_000_000,
    1_048_576,
)
#: Windows of model families litellm's bundled map may not know yet (newer releases).
FAMILY_WINDOWS: tuple[tuple[str, int], ...] = (
    ("claude", 200_000),
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("gemini", 1_048_576),
)
#: Agents trigger compaction before the limit: the highest trigger share the inference accepts.
MAX_TRIGGER_SHARE = 0.95


def segment_start(conversation: Conversation, position: int) -> int:
    """Where the agent's context at `position` begins: its last compaction's summary, or 0."""
    starts = [c.position for c in conversation.compactions if c.position <= position]
    return max(starts, default=0)


def agent_context(conversation: Conversation, position: int) -> list[Message]:
    """The messages the file holds of the agent's context at a call placed at `position`."""
    start = segment_start(conversation, position)
    messages = conversation.messages
    systems = [m for m in messages[:start] if m.get("role") == "system"]
    return [*systems, *messages[start:position]]


@dataclass(frozen=True)
class CallCalibration:
    number: int
    position: int
    segment: int  # where the agent's context began (0, or its last compaction's summary)
    recorded: int  # the provider's prompt
    counted: int  # ours, over the messages the file holds

    @property
    def difference(self) -> int:
        return self.recorded - self.counted

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "position": self.position,
            "segment": self.segment,
            "recorded": self.recorded,
            "counted": self.counted,
            "difference": self.difference,
        }


@dataclass
class Calibration:
    """provider ≈ hidden + ratio × counted, over the calls that record a prompt.

    The ratio comes from how both sizes *grow* between consecutive calls of one context (the
    hidden part cancels out there); the hidden part from the first call. After a compaction the
    file may hold less of the context than before (Codex's replacement history is encrypted, a
    forked thread's inherited history is not in its file): each context gets its own offset in
    `offsets`, and `hidden` stays the first one, what the agent sends before any conversation.
    """

    rows: list[CallCalibration]
    counter: str
    hidden: int  # tokens the file does not show (system prompt, tool schemas)
    hidden_source: str
    ratio: float  # provider tokens per counted token
    offsets: dict[int, int] = field(default_factory=dict)  # segment start -> its hidden part
    notes: list[str] = field(default_factory=list)

    @property
    def available(self) -> bool:
        return bool(self.rows)

    def to_provider(self, counted: int, segment: int | None = None) -> int:
        hidden = self.offsets.get(segment, self.hidden) if segment is not None else self.hidden
        return round(hidden + self.ratio * counted)

    def counter_window(self, window: int) -> int:
        """How many counted tokens fit in `window` provider tokens with the hidden part in."""
        return max(int((window - self.hidden) / self.ratio), 1)

    def error(self) -> float | None:
        """The mean absolute error of the correction, as a share of the recorded prompts."""
        if not self.rows:
            return None
        errors = [abs(self.to_provider(r.counted, r.segment) - r.recorded) for r in self.rows]
        return sum(errors) / max(sum(r.recorded for r in self.rows), 1)

    def hidden_line(self) -> str:
        if not self.rows:
            return "no call records a prompt: the hidden part cannot be measured"
        return (
            f"≈ {self.hidden:,} tokens the session file does not show ({self.hidden_source}); "
            f"the provider counts {self.ratio:.3f} token(s) per {self.counter} token"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "counter": self.counter,
            "hidden_tokens": self.hidden,
            "hidden_source": self.hidden_source,
            "ratio": round(self.ratio, 4),
            "offsets": {str(k): v for k, v in self.offsets.items()},
            "fit_error": self.error(),
            "calls": [row.to_dict() for row in self.rows],
            "notes": self.notes,
        }


def _tools_tokens(conversation: Conversation, counter: TokenCounter) -> int:
    if not conversation.tools:
        return 0
    count_text = getattr(counter, "count_text", None)
    text = json.dumps(conversation.tools, ensure_ascii=False)
    return int(count_text(text)) if callable(count_text) else len(text) // 4


def counted_contexts(
    conversation: Conversation, calls: list[ModelCall], counter: TokenCounter
) -> list[int]:
    """Our count of the agent's context at each call (tool schemas the file records included)."""
    messages = conversation.messages
    each = count_each(counter, messages)
    prefix = [0]
    for tokens in each:
        prefix.append(prefix[-1] + tokens)
    tools = _tools_tokens(conversation, counter)
    system_at = [0]
    for message, tokens in zip(messages, each, strict=True):
        system_at.append(system_at[-1] + (tokens if message.get("role") == "system" else 0))
    out = []
    for call in calls:
        position = min(max(call.position, 0), len(messages))
        start = segment_start(conversation, position)
        out.append(tools + system_at[start] + prefix[position] - prefix[start])
    return out


def _drift(rows: list[CallCalibration], notes: list[str]) -> float:
    """Provider tokens per counted token, from the growth between consecutive calls of one
    context (the hidden part is in both, so it cancels)."""
    grown_recorded = grown_counted = 0
    for before, after in itertools.pairwise(rows):
        if before.segment == after.segment and after.counted > before.counted:
            grown_recorded += after.recorded - before.recorded
            grown_counted += after.counted - before.counted
    if grown_counted < 1_000:
        notes.append("too little growth between calls to measure the counter's drift: 1.0 used")
        return 1.0
    ratio = grown_recorded / grown_counted
    if not 0.5 <= ratio <= 2.0:
        notes.append(
            f"the measured drift {ratio:.2f} is implausible for a tokenizer; 1.0 is used (the "
            "file may not hold what the agent sent)"
        )
        return 1.0
    return ratio


def calibrate(conversation: Conversation, counter: TokenCounter | None = None) -> Calibration:
    """The correction from our counts to the provider's; see the module doc and Calibration."""
    counter = counter or make_counter()
    name = f"{getattr(counter, 'name', type(counter).__name__)}"
    calls = [c for c in conversation.calls if c.input_tokens]
    counted = counted_contexts(conversation, calls, counter)
    rows = [
        CallCalibration(
            number,
            call.position,
            segment_start(conversation, call.position),
            int(call.input_tokens or 0),
            tokens,
        )
        for number, (call, tokens) in enumerate(zip(calls, counted, strict=True))
    ]
    if not rows:
        return Calibration(
            [], name, 0, "no usage recorded", 1.0, notes=["no call records a prompt"]
        )
    notes: list[str] = []
    ratio = _drift(rows, notes)
    offsets: dict[int, int] = {}
    for row in rows:
        if row.segment not in offsets:
            offsets[row.segment] = max(round(row.recorded - ratio * row.counted), 0)
    first = rows[0]
    hidden = offsets[first.segment]
    source = f"seen in the first call's usage, line {calls[0].line}"
    if first.recorded < first.counted:
        notes.append(
            f"the first call's prompt ({first.recorded:,}) is smaller than what the file holds "
            f"before it ({first.counted:,} counted): the file may hold more than the agent sent"
        )
    changed = [
        f"{offsets[segment]:,} from message {segment}"
        for segment in offsets
        if abs(offsets[segment] - hidden) > max(hidden * 0.5, 5_000)
    ]
    if changed:
        notes.append(
            "after a compaction the file holds a different share of the agent's context (hidden "
            f"part {', '.join(changed)}): the agent's compacted history is not in the file"
        )
    return Calibration(rows, name, hidden, source, ratio, offsets, notes)


@dataclass(frozen=True)
class EffectiveWindow:
    """The window the agent worked in, where it came from, and litellm's figure beside it."""

    window: int
    source: str
    litellm_window: int | None
    triggers: tuple[int, ...] = ()  # the recorded contexts at which the agent compacted

    @property
    def trigger_share(self) -> float | None:
        return max(self.triggers) / self.window if self.triggers else None

    def differs(self) -> bool:
        return self.litellm_window is not None and self.litellm_window != self.window

    def line(self) -> str:
        text = f"{self.window:,} ({self.source})"
        share = self.trigger_share
        if share is not None:
            text += f"; the agent compacted at {share:.0%} of it"
        if self.differs() and self.litellm_window is not None:
            litellm_share = max(self.triggers) / self.litellm_window if self.triggers else None
            text += f"; litellm's map says {self.litellm_window:,}"
            if litellm_share is not None:
                text += f" (where the agent's compactions would read as {litellm_share:.0%})"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "window": self.window,
            "source": self.source,
            "litellm_window": self.litellm_window,
            "triggers": list(self.triggers),
            "trigger_share": self.trigger_share,
            "line": self.line(),
        }


def _litellm_window(model: str | None) -> int | None:
    if not model:
        return None
    from compaction.config import model_context_length

    try:
        return model_context_length(model)
    except ConfigError:
        return None


def recorded_triggers(conversation: Conversation) -> tuple[int, ...]:
    """The provider-counted context at each automatic compaction the agent recorded: its own
    figure (Claude Code's preTokens), else the last call's prompt + output before it."""
    triggers = []
    for compaction in conversation.compactions:
        if compaction.trigger == "manual":
            continue
        tokens = compaction.tokens_before
        if tokens is None:
            before = [c for c in conversation.calls if c.position < compaction.position]
            last = before[-1] if before else None
            if last is not None and last.input_tokens:
                tokens = last.input_tokens + (last.output_tokens or 0)
        if tokens:
            triggers.append(tokens)
    return tuple(triggers)


def effective_window(
    conversation: Conversation, model: str | None = None, use_litellm: bool = True
) -> EffectiveWindow:
    """See the module docstring; `model` defaults to the conversation's. `use_litellm=False`
    skips litellm's map (importing litellm costs seconds in each worker of a corpus scan)."""
    model = model or conversation.metadata.get("model")
    model = model if isinstance(model, str) else None
    litellm = _litellm_window(model) if use_litellm else None
    triggers = recorded_triggers(conversation)
    recorded = conversation.metadata.get("model_context_window")
    if isinstance(recorded, int) and recorded > 0:
        return EffectiveWindow(recorded, "recorded by the agent", litellm, triggers)
    if triggers:
        needed = max(triggers) / MAX_TRIGGER_SHARE
        window = next((w for w in COMMON_WINDOWS if w >= needed), None)
        if window is not None and (litellm is None or window < litellm):
            count = len(triggers)
            return EffectiveWindow(
                window,
                f"inferred from {count} recorded compaction(s)",
                litellm,
                triggers,
            )
    if litellm is not None:
        return EffectiveWindow(litellm, "litellm", litellm, triggers)
    lowered = (model or "").lower()
    for prefix, window in FAMILY_WINDOWS:
        if prefix in lowered:
            return EffectiveWindow(window, "model family", None, triggers)
    prompts = [c.input_tokens or 0 for c in conversation.calls]
    largest = max([*prompts, *triggers, 0])
    window = next(
        (w for w in COMMON_WINDOWS if w >= largest / MAX_TRIGGER_SHARE), COMMON_WINDOWS[-1]
    )
    return EffectiveWindow(window, "assumed from the largest recorded prompt", None, triggers)
