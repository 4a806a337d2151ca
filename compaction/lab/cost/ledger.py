"""What a session cost, from the provider's usage it records: per call, per turn, cumulative.

Each call splits into four parts priced apart — fresh input, cache writes (5-minute and 1-hour
TTLs at their own rates), cache reads, output — at the rates of the call's model (long-context
rates when its prompt passes the model's tier). A call whose model has no price, or that records
no usage, has no dollars: its parts are None and the session's total says how many calls it
leaves out; nothing unknown is added as $0.

A recorded compaction is priced too: the agent's summary call when the file holds it (a call
placed on the summary message itself, as OpenCode records it), and the cache it invalidated —
the part of the next call's prompt that was not read from the cache (written, or sent fresh),
priced against what reading it would have cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from compaction.formats.conversation import Conversation, ModelCall, RecordedCompaction
from compaction.lab.cost.pricing import UNKNOWN_PRICE, Price, PriceBook
from compaction.messages import Message, is_injected

PARTS = ("fresh", "write", "read", "output")


def timestamp_seconds(value: str | None) -> float | None:
    """An ISO-8601 timestamp as epoch seconds (None when absent or unreadable)."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass(frozen=True)
class CallCost:
    """One recorded call, its tokens split by how they were billed, and their dollars."""

    number: int  # its place among the session's calls
    call: ModelCall
    turn: int  # the user turn it answered (0 before the first user message)
    fresh_tokens: int
    write_tokens: int
    write_1h_tokens: int
    read_tokens: int
    output_tokens: int
    fresh_usd: float | None = None
    write_usd: float | None = None
    read_usd: float | None = None
    output_usd: float | None = None
    price_source: str | None = None

    @property
    def priced(self) -> bool:
        return self.fresh_usd is not None

    @property
    def usd(self) -> float | None:
        parts = (self.fresh_usd, self.write_usd, self.read_usd, self.output_usd)
        return None if any(p is None for p in parts) else sum(p or 0.0 for p in parts)

    @property
    def prompt_tokens(self) -> int:
        return self.fresh_tokens + self.write_tokens + self.read_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "position": self.call.position,
            "line": self.call.line,
            "model": self.call.model,
            "timestamp": self.call.timestamp,
            "turn": self.turn,
            "prompt_tokens": self.prompt_tokens,
            "fresh_tokens": self.fresh_tokens,
            "cache_write_tokens": self.write_tokens,
            "cache_write_1h_tokens": self.write_1h_tokens,
            "cache_read_tokens": self.read_tokens,
            "output_tokens": self.output_tokens,
            "fresh_usd": self.fresh_usd,
            "cache_write_usd": self.write_usd,
            "cache_read_usd": self.read_usd,
            "output_usd": self.output_usd,
            "usd": self.usd,
            "price": self.price_source or UNKNOWN_PRICE,
        }


def price_call(number: int, call: ModelCall, turn: int, price: Price | None) -> CallCost:
    prompt = call.input_tokens or 0
    read = min(call.cache_read_tokens or 0, prompt)
    write = min(call.cache_write_tokens or 0, prompt - read)
    write_1h = min(call.cache_write_1h_tokens or 0, write)
    fresh = prompt - read - write
    output = call.output_tokens or 0
    base = CallCost(number, call, turn, fresh, write, write_1h, read, output)
    if price is None or call.input_tokens is None:
        return base
    rates = price.rates_for(prompt)
    return CallCost(
        number,
        call,
        turn,
        fresh,
        write,
        write_1h,
        read,
        output,
        fresh_usd=fresh * rates.input,
        write_usd=(write - write_1h) * rates.cache_write + write_1h * rates.cache_write_1h,
        read_usd=read * rates.cache_read,
        output_usd=output * rates.output,
        price_source=price.source,
    )


@dataclass(frozen=True)
class CompactionCost:
    """One compaction the agent recorded, priced from the calls around it."""

    position: int
    trigger: str
    line: int | None
    tokens_before_recorded: int | None  # what the agent's own record says (preTokens, …)
    prompt_before: int | None  # the last call's prompt + output before it: the context compacted
    summary_call: CallCost | None
    next_call: CallCost | None
    uncached_after: int | None  # the next call's prompt not read from the cache
    invalidated_usd: float | None  # what that part cost above reading it from the cache
    note: str

    @property
    def uncached_share(self) -> float | None:
        if (
            self.next_call is None
            or self.uncached_after is None
            or not self.next_call.prompt_tokens
        ):
            return None
        return self.uncached_after / self.next_call.prompt_tokens

    @property
    def usd(self) -> float | None:
        """The summary call (when recorded) plus the invalidated cache."""
        if self.invalidated_usd is None:
            return None
        summary = self.summary_call.usd if self.summary_call is not None else 0.0
        return None if summary is None else summary + self.invalidated_usd

    def to_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "trigger": self.trigger,
            "line": self.line,
            "tokens_before_recorded": self.tokens_before_recorded,
            "prompt_before": self.prompt_before,
            "summary_call": self.summary_call.to_dict() if self.summary_call else None,
            "next_call": self.next_call.to_dict() if self.next_call else None,
            "uncached_after": self.uncached_after,
            "uncached_share": self.uncached_share,
            "invalidated_usd": self.invalidated_usd,
            "usd": self.usd,
            "note": self.note,
        }


@dataclass
class SessionCost:
    """Every recorded call priced, with the totals, the turns and what could not be priced."""

    calls: list[CallCost]
    compactions: list[CompactionCost]
    unknown_models: list[str]
    notes: list[str] = field(default_factory=list)

    def total(self, part: str | None = None) -> float | None:
        """USD over the priced calls (None when no call is priced)."""
        priced = [c for c in self.calls if c.priced]
        if not priced:
            return None
        key = {
            "fresh": "fresh_usd",
            "write": "write_usd",
            "read": "read_usd",
            "output": "output_usd",
        }
        if part is None:
            return sum(c.usd or 0.0 for c in priced)
        return sum(getattr(c, key[part]) or 0.0 for c in priced)

    def tokens(self, part: str) -> int:
        key = {"fresh": "fresh_tokens", "write": "write_tokens", "read": "read_tokens"}
        key["output"] = "output_tokens"
        key["prompt"] = "prompt_tokens"
        return sum(int(getattr(c, key[part])) for c in self.calls)

    @property
    def unpriced(self) -> int:
        return sum(1 for c in self.calls if not c.priced)

    @property
    def hit_ratio(self) -> float | None:
        """Cache reads as a share of all prompt tokens (None without prompts)."""
        prompt = self.tokens("prompt")
        return self.tokens("read") / prompt if prompt else None

    def cumulative(self) -> list[float | None]:
        """The running total after each call (None from the first unpriced call on is not
        useful, so unpriced calls add nothing and the note says how many there are)."""
        running = 0.0
        out: list[float | None] = []
        for cost in self.calls:
            running += cost.usd or 0.0
            out.append(running if cost.priced or running else None)
        return out

    def turns(self) -> list[dict[str, Any]]:
        """One row per user turn: its calls, tokens and dollars, and the running total."""
        rows: dict[int, dict[str, Any]] = {}
        for cost in self.calls:
            row = rows.setdefault(
                cost.turn, {"turn": cost.turn, "calls": 0, "prompt_tokens": 0, "usd": 0.0}
            )
            row["calls"] += 1
            row["prompt_tokens"] += cost.prompt_tokens
            row["usd"] += cost.usd or 0.0
        running = 0.0
        for row in rows.values():
            running += row["usd"]
            row["cumulative_usd"] = running
        return list(rows.values())

    def total_line(self) -> str:
        total = self.total()
        if total is None:
            models = ", ".join(self.unknown_models) or "the calls' models"
            return f"{UNKNOWN_PRICE} ({models}; --price MODEL=in,out,cache_write,cache_read)"
        left = f" (+ {self.unpriced} call(s) at {UNKNOWN_PRICE})" if self.unpriced else ""
        return f"${total:,.4f}{left}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": [c.to_dict() for c in self.calls],
            "compactions": [c.to_dict() for c in self.compactions],
            "usd": self.total(),
            "usd_by_part": {part: self.total(part) for part in PARTS},
            "tokens_by_part": {part: self.tokens(part) for part in (*PARTS, "prompt")},
            "cache_hit_ratio": self.hit_ratio,
            "unpriced_calls": self.unpriced,
            "unknown_models": self.unknown_models,
            "turns": self.turns(),
            "notes": self.notes,
        }


def _turns(
    messages: Sequence[Message], marks: Mapping[int, str], calls: Sequence[ModelCall]
) -> list[int]:
    """The user turn of each call: how many of the user's own messages came before it (a user
    message the importer marked as the harness's is not a turn)."""
    starts = [
        index
        for index, message in enumerate(messages)
        if message.get("role") == "user" and not is_injected(message, marks.get(index))
    ]
    out = []
    for call in calls:
        out.append(sum(1 for start in starts if start < call.position))
    return out


def _compaction_cost(
    compaction: RecordedCompaction, costs: list[CallCost], prices: PriceBook
) -> CompactionCost:
    before = next((c for c in reversed(costs) if c.call.position < compaction.position), None)
    # OpenCode places its summary call on the summary message itself.
    summary = next((c for c in costs if c.call.position == compaction.position), None)
    after = next((c for c in costs if c.call.position > compaction.position), None)
    prompt_before = before.prompt_tokens + before.output_tokens if before is not None else None
    uncached = invalidated = None
    if after is not None:
        uncached = after.fresh_tokens + after.write_tokens
        price = prices.get(after.call.model)
        if price is not None and after.fresh_usd is not None and after.write_usd is not None:
            rates = price.rates_for(after.prompt_tokens)
            invalidated = after.fresh_usd + after.write_usd - uncached * rates.cache_read
    if summary is not None:
        note = "the summary call is recorded on the summary message"
    else:
        note = "the agent's summary call is not in this file"
        if compaction.agent == "claude-code":
            note += " (Claude Code runs it as an `acompact` subagent, in its own file)"
        elif compaction.agent == "codex":
            note += " (Codex compacts on the server and records no usage for it)"
    if after is None:
        note += "; no call after it records usage"
    elif invalidated is None:
        note += f"; the next call's model has {UNKNOWN_PRICE}"
    return CompactionCost(
        position=compaction.position,
        trigger=compaction.trigger,
        line=compaction.line,
        tokens_before_recorded=compaction.tokens_before,
        prompt_before=prompt_before,
        summary_call=summary,
        next_call=after,
        uncached_after=uncached,
        invalidated_usd=invalidated,
        note=note,
    )


def session_cost(conversation: Conversation, prices: PriceBook | None = None) -> SessionCost:
    """Every call the conversation records, priced; notes for what cannot be."""
    prices = prices or PriceBook()
    calls = list(conversation.calls)
    turns = _turns(conversation.messages, conversation.marks, calls)
    costs = [
        price_call(number, call, turn, prices.get(call.model))
        for number, (call, turn) in enumerate(zip(calls, turns, strict=True))
    ]
    notes: list[str] = []
    unknown = prices.unknown([call.model for call in calls])
    if unknown:
        notes.append(
            f"{UNKNOWN_PRICE} for {', '.join(unknown)}: litellm's bundled map does not know "
            "it; give one with --price MODEL=in,out,cache_write,cache_read (per million tokens)"
        )
    nameless = sum(1 for call in calls if not call.model)
    if nameless:
        notes.append(f"{nameless} call(s) name no model: {UNKNOWN_PRICE}")
    missing = sum(1 for call in calls if call.input_tokens is None)
    if missing:
        notes.append(f"{missing} call(s) record no prompt tokens: not priced")
    if not calls:
        notes.append("this file records no provider usage: nothing to price")
    notes += _clock_notes(calls)
    if conversation.report is not None:
        notes += conversation.report.usage_notes
    compactions = [
        _compaction_cost(compaction, costs, prices)
        for compaction in sorted(conversation.compactions, key=lambda c: c.position)
    ]
    return SessionCost(costs, compactions, unknown, notes)


def _clock_notes(calls: Sequence[ModelCall]) -> list[str]:
    backwards: list[int] = []
    undated = 0
    previous: float | None = None
    for number, call in enumerate(calls):
        stamp = timestamp_seconds(call.timestamp)
        if stamp is None:
            undated += 1
            continue
        if previous is not None and stamp < previous:
            backwards.append(call.line or number)
        previous = stamp
    notes = []
    if backwards:
        notes.append(
            f"the clock goes backwards at {len(backwards)} call(s) (first: line {backwards[0]}): "
            "the cache model lets no time pass there (no entry expires)"
        )
    if undated:
        notes.append(
            f"{undated} call(s) have no timestamp: the cache model lets no entry expire before them"
        )
    return notes
