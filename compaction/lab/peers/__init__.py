"""Peers' compaction policies in the lab, each implemented from ../shared/spec/PEERS.md (what the
peer's published code or documentation does, with its version; nobody's code):

- `hermes`: hermes-agent's ContextCompressor v0.18.2 (hermes.py);
- `codex`: Codex CLI's local compaction (compact.rs) — user messages verbatim within 20,000
  tokens + a summary (codex.py; its encrypted remote compaction has nothing to measure);
- `openhands`: OpenHands' V0 LLMSummarizingCondenser, an event-count trigger, with the prompt
  built as its ConversationMemory builds it (unmatched calls and results filtered; openhands.py);
- `gemini-cli`: Gemini CLI's chatCompressionService — the last 30% by characters, at the 0.5
  threshold of the version read (the default has since moved to 0.2; gemini_cli.py);
- `observation-masking`: JetBrains' masking of observations older than M turns
  (observation_masking.py).

Where a peer asks its own model for the summary, the lab uses our summariser: only the policy is
the peer's. `run_at_target` runs one at the lab's shared token target (evaluate), `make_peer`
builds one with its parameters changed (sweeps).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from compaction.errors import ConfigError
from compaction.lab.peers.base import (
    PEER_FATE_LABELS,
    PLACEHOLDER,
    TRUNCATED,
    Peer,
    PeerRun,
    PeerState,
    peer_fields,
)
from compaction.lab.peers.codex import Codex
from compaction.lab.peers.gemini_cli import GeminiCli
from compaction.lab.peers.hermes import Hermes
from compaction.lab.peers.observation_masking import ObservationMasking
from compaction.lab.peers.openhands import OpenHands
from compaction.messages import Message
from compaction.summarizers.base import Summarizer
from compaction.tokens import TokenCounter

#: Each peer at its published defaults, by the name the CLI and the pages use.
PEERS: dict[str, Peer] = {
    peer.name: peer for peer in (Hermes(), Codex(), OpenHands(), GeminiCli(), ObservationMasking())
}
PEER_NAMES: tuple[str, ...] = tuple(PEERS)


def get_peer(name: str) -> Peer:
    try:
        return PEERS[name]
    except KeyError:
        raise ConfigError(f"unknown peer {name!r}; choose from {', '.join(PEER_NAMES)}") from None


def make_peer(name: str, params: Mapping[str, Any] | None = None) -> Peer:
    """The peer called `name` with `params` changed; ConfigError naming a bad parameter."""
    peer = get_peer(name)
    if not params:
        return peer
    known = peer_fields(peer)
    unknown = [key for key in params if key not in known]
    if unknown:
        raise ConfigError(f"unknown parameter {name}.{unknown[0]}; {name} has {', '.join(known)}")
    converted: dict[str, Any] = {}
    for key, value in params.items():
        kind = type(known[key])
        if kind is int and isinstance(value, float) and value.is_integer():
            value = int(value)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ConfigError(f"{name}.{key} takes a {kind.__name__}, got {value!r}")
        converted[key] = value
    result: Peer = dataclasses.replace(peer, **converted)  # type: ignore[type-var]
    return result


def run_at_target(
    peer: Peer,
    messages: Sequence[Message],
    target_tokens: int,
    counter: TokenCounter,
    summarizer: Summarizer,
    marks: dict[int, str] | None = None,
) -> PeerRun:
    """One compaction by `peer`, forced, at the window whose trigger fires at `target_tokens`
    (so the peer's budgets derive from the same target as every other strategy's). `marks`:
    which user turns the harness sent (the conversation's)."""
    window = peer.window_for(target_tokens)
    return peer.compact(messages, window, counter, summarizer, PeerState(marks=marks))


__all__ = [
    "PEERS",
    "PEER_FATE_LABELS",
    "PEER_NAMES",
    "PLACEHOLDER",
    "TRUNCATED",
    "Codex",
    "GeminiCli",
    "Hermes",
    "ObservationMasking",
    "OpenHands",
    "Peer",
    "PeerRun",
    "PeerState",
    "get_peer",
    "make_peer",
    "run_at_target",
]
