"""The same session priced under other compaction policies, by the cache model.

Every scenario makes the calls the agent made — at the same moments, with the same outputs — and
differs only in the context each call carries: what the agent's own record shows, what our
pipeline would have kept (with given settings), what each peer's policy would have kept. The
cache model turns each sequence of contexts into reads, writes and fresh input; the session's
prices turn them into dollars. A compaction a replay makes costs its summary call too (the
messages it summarised sent fresh, the summary as output: an LLM summariser's call, even though
the lab's replay writes the summary offline).

The replays run at the window the agent really worked in (`calibration.effective_window`),
converted to our counter's tokens with the hidden part left out, so a 200K window means for our
pipeline what it meant for the agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from compaction.config import CompactionConfig
from compaction.formats.conversation import Conversation, ModelCall
from compaction.input.checks import validate_messages
from compaction.lab.cost.cache import CacheOutcome, CacheRules, Request, simulate_cache
from compaction.lab.cost.calibration import Calibration, EffectiveWindow
from compaction.lab.cost.ledger import SessionCost
from compaction.lab.cost.pricing import Price, PriceBook
from compaction.lab.cost.requests import replay_requests, warm_prefix
from compaction.lab.timeline import Timeline, simulate, simulate_peer
from compaction.tokens import TokenCounter

PARTS = ("fresh", "write", "read", "output")


@dataclass
class Scenario:
    """One policy's session: its calls through the cache, in tokens and dollars."""

    name: str
    kind: str  # "record" (as billed), "model" (the record through the cache model), "ours", "peer"
    calls: int
    summary_calls: int
    compactions: int
    tokens: dict[str, int]
    usd: float | None
    usd_by_part: dict[str, float | None]
    summary_usd: float | None = None
    peak_prompt: int = 0
    cumulative: list[float] = field(default_factory=list)  # USD after each call (not summaries)
    note: str = ""

    @property
    def hit_ratio(self) -> float | None:
        prompt = self.tokens["fresh"] + self.tokens["write"] + self.tokens["read"]
        return self.tokens["read"] / prompt if prompt else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "calls": self.calls,
            "summary_calls": self.summary_calls,
            "compactions": self.compactions,
            "tokens": dict(self.tokens),
            "usd": self.usd,
            "usd_by_part": dict(self.usd_by_part),
            "summary_usd": self.summary_usd,
            "cache_hit_ratio": self.hit_ratio,
            "peak_prompt": self.peak_prompt,
            "note": self.note,
        }


def recorded_scenario(cost: SessionCost) -> Scenario:
    """The agent's session as its provider billed it (the ledger)."""
    tokens = {part: cost.tokens(part) for part in PARTS}
    by_part = {part: cost.total(part) for part in PARTS}
    cumulative = [value or 0.0 for value in cost.cumulative()]
    note = f"{cost.unpriced} call(s) at unknown price" if cost.unpriced else ""
    return Scenario(
        name="agent, as billed",
        kind="record",
        calls=len(cost.calls),
        summary_calls=0,
        compactions=len(cost.compactions),
        tokens=tokens,
        usd=cost.total(),
        usd_by_part=by_part,
        peak_prompt=max((c.prompt_tokens for c in cost.calls), default=0),
        cumulative=cumulative,
        note=note,
    )


def priced(
    name: str,
    kind: str,
    requests: Sequence[Request],
    outcomes: Sequence[CacheOutcome],
    price: Price | None,
    rules: CacheRules,
    compactions: int,
    note: str = "",
) -> Scenario:
    """A request sequence's cache outcomes in tokens and (when `price` is known) dollars."""
    tokens = dict.fromkeys(PARTS, 0)
    usd = dict.fromkeys(PARTS, 0.0)
    summary_usd = 0.0
    cumulative: list[float] = []
    running = 0.0
    one_hour = rules.ttl_s >= 3600
    calls = summaries = peak = 0
    for request, outcome in zip(requests, outcomes, strict=True):
        parts = {
            "fresh": outcome.fresh,
            "write": outcome.write,
            "read": outcome.read,
            "output": request.output_tokens,
        }
        for part, value in parts.items():
            tokens[part] += value
        cost = 0.0
        if price is not None:
            rates = price.rates_for(outcome.prompt)
            write_rate = rates.cache_write_1h if one_hour else rates.cache_write
            split = {
                "fresh": outcome.fresh * rates.input,
                "write": outcome.write * write_rate,
                "read": outcome.read * rates.cache_read,
                "output": request.output_tokens * rates.output,
            }
            for part, dollars in split.items():
                usd[part] += dollars
            cost = sum(split.values())
        running += cost
        if request.label.startswith("summary"):
            summaries += 1
            summary_usd += cost
        else:
            calls += 1
            peak = max(peak, outcome.prompt)
            cumulative.append(running)
    known = price is not None
    return Scenario(
        name=name,
        kind=kind,
        calls=calls,
        summary_calls=summaries,
        compactions=compactions,
        tokens=tokens,
        usd=sum(usd.values()) if known else None,
        usd_by_part={part: (usd[part] if known else None) for part in PARTS},
        summary_usd=summary_usd if known else None,
        peak_prompt=peak,
        cumulative=cumulative if known else [],
        note=note,
    )


def replay_config(
    calibration: Calibration, window: EffectiveWindow, base: CompactionConfig | None = None
) -> CompactionConfig:
    """`base` (or the defaults) at the agent's window, in our counter's tokens."""
    base = base or CompactionConfig()
    return replace(base, context_length=calibration.counter_window(window.window))


@dataclass
class WhatIfInputs:
    """What every replayed scenario shares."""

    conversation: Conversation
    calibration: Calibration
    window: EffectiveWindow
    rules: CacheRules
    price: Price | None
    counter: TokenCounter
    warm: int

    @property
    def calls(self) -> list[ModelCall]:
        return [c for c in self.conversation.calls if c.input_tokens]


def replay_scenario(
    inputs: WhatIfInputs, name: str, kind: str, timeline: Timeline, note: str = ""
) -> Scenario:
    messages, _ = validate_messages(inputs.conversation.messages)
    requests = replay_requests(
        inputs.calls,
        messages,
        timeline,
        inputs.calibration,
        inputs.counter,
        warm=inputs.warm,
        format=inputs.conversation.format,
        marks=inputs.conversation.marks,
    )
    outcomes = simulate_cache(requests, inputs.rules, warm_prefix(inputs.calibration, inputs.warm))
    return priced(
        name,
        kind,
        requests,
        outcomes,
        inputs.price,
        inputs.rules,
        len(timeline.compactions),
        note,
    )


def ours(inputs: WhatIfInputs, name: str, config: CompactionConfig) -> Scenario:
    """Our pipeline with `config` (its window replaced by the agent's, in our tokens)."""
    config = replay_config(inputs.calibration, inputs.window, config)
    timeline = simulate(inputs.conversation, config)
    return replay_scenario(inputs, name, "ours", timeline)


def peer(inputs: WhatIfInputs, peer_name: str) -> Scenario:
    from compaction.lab.peers import PEERS

    config = replay_config(inputs.calibration, inputs.window)
    timeline = simulate_peer(inputs.conversation, PEERS[peer_name], config)
    return replay_scenario(inputs, f"peer: {peer_name}", "peer", timeline)


def by_name(scenarios: Sequence[Scenario]) -> dict[str, Scenario]:
    return {scenario.name: scenario for scenario in scenarios}


def price_book_model(
    conversation: Conversation, prices: PriceBook
) -> tuple[str | None, Price | None]:
    """The session's main model (the one most calls used) and its price."""
    models = [c.model for c in conversation.calls if c.model]
    model = max(set(models), key=models.count) if models else None
    if model is None:
        meta = conversation.metadata.get("model")
        model = meta if isinstance(meta, str) else None
    return model, prices.get(model)
