"""One session's cost, everything the CLI and the app show: the recorded calls priced, the
hidden prompt and the counter's drift, the agent's window, each compaction's price, the cache
model's error against the record, and the what-ifs (our pipeline, a cache-aware setting, each
peer) priced by the same model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction.config import CompactionConfig
from compaction.formats.conversation import Conversation
from compaction.lab.cost.cache import CacheRules, simulate_cache
from compaction.lab.cost.calibration import (
    Calibration,
    EffectiveWindow,
    calibrate,
    effective_window,
)
from compaction.lab.cost.check import CacheCheck, check_cache, session_rules
from compaction.lab.cost.ledger import SessionCost, session_cost
from compaction.lab.cost.pricing import UNKNOWN_PRICE, Price, PriceBook
from compaction.lab.cost.requests import (
    record_requests,
    warm_prefix,
    warm_tokens,
    with_agent_summaries,
)
from compaction.lab.cost.whatif import (
    Scenario,
    WhatIfInputs,
    ours,
    peer,
    price_book_model,
    priced,
    recorded_scenario,
)
from compaction.tokens import TokenCounter, make_counter

AGENT_MODELLED = "agent, cache model"


def default_configs() -> dict[str, CompactionConfig]:
    """Our pipeline's scenarios: the defaults, and the same with `cache_aware`."""
    return {
        "ours (default)": CompactionConfig(),
        "ours (cache-aware)": CompactionConfig(cache_aware=True),
    }


@dataclass
class CostReport:
    file: str | None
    format: str
    model: str | None
    price: Price | None
    cost: SessionCost
    calibration: Calibration
    window: EffectiveWindow
    rules: CacheRules
    check: CacheCheck | None
    scenarios: list[Scenario] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def scenario(self, name: str) -> Scenario | None:
        return next((s for s in self.scenarios if s.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "format": self.format,
            "model": self.model,
            "price": self.price.to_dict() if self.price is not None else UNKNOWN_PRICE,
            "cost": self.cost.to_dict(),
            "calibration": self.calibration.to_dict(),
            "window": self.window.to_dict(),
            "cache_rules": self.rules.to_dict(),
            "cache_model": self.check.to_dict() if self.check is not None else None,
            "scenarios": [s.to_dict() for s in self.scenarios],
            "notes": self.notes,
        }


def cost_report(
    conversation: Conversation,
    prices: PriceBook | None = None,
    counter: TokenCounter | None = None,
    what_if: bool = True,
    configs: Mapping[str, CompactionConfig] | None = None,
    peers: Sequence[str] | None = None,
) -> CostReport:
    """The whole cost report of one conversation (see the module docstring).

    `what_if`: replay the session under `configs` (default: ours, and ours cache-aware) and
    `peers` (default: every peer) — each a full replay, so the slow part."""
    prices = prices or PriceBook()
    counter = counter or make_counter()
    cost = session_cost(conversation, prices)
    calibration = calibrate(conversation, counter)
    window = effective_window(conversation)
    model, price = price_book_model(conversation, prices)
    rules = session_rules(conversation)
    notes = list(calibration.notes)
    if conversation.metadata.get("forked_from_id"):
        notes.append(
            "a forked thread: the hidden part at its first call includes the history it "
            "inherited from its parent, which its own file does not hold"
        )
    report = CostReport(
        file=conversation.source,
        format=conversation.format,
        model=model,
        price=price,
        cost=cost,
        calibration=calibration,
        window=window,
        rules=rules,
        check=None,
        notes=notes,
    )
    if not calibration.available:
        report.notes.append("no call records a prompt: no cache model and no what-ifs")
        return report
    warm = warm_tokens(conversation)
    requests = record_requests(conversation, calibration, counter)
    report.check, _ = check_cache(conversation, requests, rules, warm_prefix(calibration, warm))
    report.scenarios.append(recorded_scenario(cost))
    modelled = with_agent_summaries(conversation, requests, calibration, counter)
    outcomes = simulate_cache(modelled, rules, warm_prefix(calibration, warm))
    note = "with the agent's summary calls modelled" if len(modelled) > len(requests) else ""
    report.scenarios.append(
        priced(
            AGENT_MODELLED,
            "model",
            modelled,
            outcomes,
            price,
            rules,
            len(conversation.compactions),
            note,
        )
    )
    if not what_if:
        return report
    inputs = WhatIfInputs(conversation, calibration, window, rules, price, counter, warm)
    for name, config in (configs or default_configs()).items():
        report.scenarios.append(ours(inputs, name, config))
    if peers is None:
        from compaction.lab.peers import PEER_NAMES

        peers = PEER_NAMES
    for name in peers:
        report.scenarios.append(peer(inputs, name))
    return report
