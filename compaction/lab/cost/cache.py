"""A prefix-cache model per provider: which part of each request is read from the cache, which
part is written to it, which is sent fresh.

A request is a sequence of blocks (the hidden system prompt and tool schemas, then one block per
message), each with a content key and a size in the provider's tokens, and the time it was sent.
The model is deterministic: the same requests give the same answer.

Anthropic (explicit caching; docs.anthropic.com, "Prompt caching"):
- Only prefixes ending at a `cache_control` breakpoint are written (at most 4 per request). An
  agent like Claude Code marks the end of the system prompt and tools, and the last message, so
  the whole request is written except what a cache entry already holds.
- A read looks for an entry at the breakpoint and at earlier block boundaries, up to about 20
  content blocks back ("the system checks for cache hits at all previous content block
  boundaries up to approximately 20 blocks before each explicit breakpoint"); the longest wins.
- An entry lives for its TTL after its last use: 5 minutes, or 1 hour when the agent asks
  (`cache_creation.ephemeral_1h_input_tokens` in the usage says which). Writes cost 1.25× the
  input rate (2× at 1 hour), reads 0.1×.
- A prefix shorter than the model's minimum is not cached: 1,024 tokens (Sonnet and most
  models), 4,096 (Opus 4.5/4.6, Haiku 4.5), 2,048 (Haiku 3.x).

OpenAI (automatic caching; platform.openai.com, "Prompt caching"):
- Every prompt of 1,024 tokens or more is cached; a later prompt reads the longest prefix it
  shares with a cached one, in steps of 128 tokens. No write premium, no write is reported.
- Entries live "5 to 10 minutes of inactivity", up to an hour off-peak: 10 minutes here. Routing
  is by a hash of the prompt's start and not guaranteed: real sessions miss now and then, which
  this model cannot foresee (its error per call shows where).

Gemini (implicit caching; ai.google.dev, "Context caching"):
- On by default for Gemini 2.5 and newer: a request sharing a prefix with a recent one is read
  from the cache at a discount, with "no cost saving guarantee"; the minimum prefix is 1,024
  tokens (Flash) or 4,096 (Pro). The lifetime is not published: 5 minutes here.

Any other provider (a model the map does not place, a local or proxied model): no cache.

Timestamps decide expiry; a request without one, or earlier than the one before (a clock that
goes backwards), lets no time pass.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

ANTHROPIC = "anthropic"
OPENAI = "openai"
GEMINI = "gemini"
NO_CACHE = "none"
MINUTE = 60.0


@dataclass(frozen=True)
class Block:
    """A piece of a request: its content key, its size in provider tokens, its content blocks."""

    key: str
    tokens: int
    parts: int = 1


@dataclass(frozen=True)
class Request:
    """One model call as the cache sees it."""

    blocks: tuple[Block, ...]
    at: float | None = None  # epoch seconds
    output_tokens: int = 0
    #: Block indices after which the agent marks a breakpoint (Anthropic); empty: the last block.
    breakpoints: tuple[int, ...] = ()
    label: str = ""

    @property
    def tokens(self) -> int:
        return sum(block.tokens for block in self.blocks)


@dataclass(frozen=True)
class CacheOutcome:
    read: int
    write: int
    fresh: int

    @property
    def prompt(self) -> int:
        return self.read + self.write + self.fresh

    def to_dict(self) -> dict[str, int]:
        return {"read": self.read, "write": self.write, "fresh": self.fresh}


@dataclass(frozen=True)
class CacheRules:
    """How one provider caches (see the module docstring for the sources)."""

    provider: str
    min_tokens: int = 1_024
    ttl_s: float = 5 * MINUTE
    granularity: int = 1
    lookback_blocks: int = 20
    max_breakpoints: int = 4

    def describe(self) -> str:
        if self.provider == NO_CACHE:
            return "no prompt cache"
        ttl = f"{self.ttl_s / MINUTE:g} min"
        kind = "explicit breakpoints" if self.provider == ANTHROPIC else "automatic prefix"
        return f"{self.provider}: {kind}, min {self.min_tokens:,} tokens, TTL {ttl}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "min_tokens": self.min_tokens,
            "ttl_s": self.ttl_s,
            "granularity": self.granularity,
            "lookback_blocks": self.lookback_blocks,
        }


def provider_of(model: str | None, litellm_provider: str | None = None) -> str:
    """The cache family of a model: anthropic, openai, gemini, or none (no cache modelled)."""
    name = (model or "").lower()
    if "claude" in name:
        return ANTHROPIC
    if "gemini" in name:
        return GEMINI
    bare = name.rsplit("/", 1)[-1]
    if bare.startswith(("gpt-", "o1", "o3", "o4", "codex", "chatgpt")):
        return OPENAI
    if (litellm_provider or "").lower() == "openai":
        return OPENAI
    return NO_CACHE


def rules_for(
    model: str | None, one_hour: bool = False, litellm_provider: str | None = None
) -> CacheRules:
    """The rules of `model`'s provider; `one_hour`: the agent writes with the 1-hour TTL."""
    provider = provider_of(model, litellm_provider)
    name = (model or "").lower()
    if provider == ANTHROPIC:
        minimum = 1_024
        if any(tag in name for tag in ("opus-4-5", "opus-4-6", "haiku-4-5")):
            minimum = 4_096
        elif "haiku-3" in name or "3-haiku" in name or "3-5-haiku" in name:
            minimum = 2_048
        return CacheRules(ANTHROPIC, minimum, (60 if one_hour else 5) * MINUTE)
    if provider == OPENAI:
        return CacheRules(OPENAI, 1_024, 10 * MINUTE, granularity=128)
    if provider == GEMINI:
        minimum = 4_096 if "pro" in name else 1_024
        return CacheRules(GEMINI, minimum, 5 * MINUTE)
    return CacheRules(NO_CACHE, min_tokens=0, ttl_s=0.0)


def _chain(blocks: Sequence[Block]) -> tuple[list[str], list[int], list[int]]:
    """Prefix keys, cumulative tokens and cumulative content blocks after each block."""
    keys: list[str] = []
    tokens: list[int] = []
    parts: list[int] = []
    key, total, count = "", 0, 0
    for block in blocks:
        key = f"{hash((key, block.key)):x}"
        total += block.tokens
        count += block.parts
        keys.append(key)
        tokens.append(total)
        parts.append(count)
    return keys, tokens, parts


@dataclass
class _Sequence:
    keys: list[str]
    tokens: list[int]
    expires: float


@dataclass
class PrefixCache:
    """The cache's state while requests go by; `send` answers one request."""

    rules: CacheRules
    entries: dict[str, tuple[int, float]] = field(default_factory=dict)  # Anthropic
    sequences: list[_Sequence] = field(default_factory=list)  # automatic caching
    now: float = 0.0
    max_sequences: int = 64

    def seed(self, blocks: Sequence[Block], at: float | None) -> None:
        """A prefix already in the cache before the first request (another session's)."""
        if not blocks:
            return
        if at is not None:
            self.now = max(self.now, at)
        keys, tokens, _ = _chain(blocks)
        expires = self.now + self.rules.ttl_s
        if self.rules.provider == ANTHROPIC:
            self.entries[keys[-1]] = (tokens[-1], expires)
        elif self.rules.provider != NO_CACHE:
            self.sequences.append(_Sequence(keys, tokens, expires))

    def send(self, request: Request) -> CacheOutcome:
        if request.at is not None:
            self.now = max(self.now, request.at)  # a clock that goes backwards lets no time pass
        total = request.tokens
        if self.rules.provider == NO_CACHE or not request.blocks:
            return CacheOutcome(0, 0, total)
        if self.rules.provider == ANTHROPIC:
            return self._explicit(request, total)
        return self._automatic(request, total)

    def _live(self, key: str) -> bool:
        entry = self.entries.get(key)
        return entry is not None and entry[1] >= self.now

    def _explicit(self, request: Request, total: int) -> CacheOutcome:
        keys, tokens, parts = _chain(request.blocks)
        last = len(keys) - 1
        marks = sorted({b for b in request.breakpoints if 0 <= b <= last} or {last})
        marks = marks[-self.rules.max_breakpoints :]
        read, hit = 0, -1
        for mark in marks:
            for index in range(mark, -1, -1):
                if parts[mark] - parts[index] > self.rules.lookback_blocks:
                    break
                if self._live(keys[index]):
                    if tokens[index] > read:
                        read, hit = tokens[index], index
                    break
        expires = self.now + self.rules.ttl_s
        if hit >= 0:
            self.entries[keys[hit]] = (tokens[hit], expires)  # a read refreshes the entry
        cacheable = [m for m in marks if tokens[m] >= self.rules.min_tokens]
        written_to = read
        for mark in cacheable:
            if tokens[mark] > read:
                self.entries[keys[mark]] = (tokens[mark], expires)
                written_to = max(written_to, tokens[mark])
            elif self._live(keys[mark]):
                self.entries[keys[mark]] = (tokens[mark], expires)
        write = written_to - read
        return CacheOutcome(read, write, total - read - write)

    def _automatic(self, request: Request, total: int) -> CacheOutcome:
        keys, tokens, _ = _chain(request.blocks)
        self.sequences = [s for s in self.sequences if s.expires >= self.now]
        shared = 0
        for sequence in self.sequences:
            common = _common_prefix(sequence.keys, keys)
            if common:
                shared = max(shared, tokens[common - 1])
        step = self.rules.granularity
        read = shared // step * step
        if total < self.rules.min_tokens or read < self.rules.min_tokens:
            read = 0
        expires = self.now + self.rules.ttl_s
        if total >= self.rules.min_tokens:
            kept = [s for s in self.sequences if _common_prefix(s.keys, keys) < len(s.keys)]
            kept.append(_Sequence(keys, tokens, expires))
            self.sequences = kept[-self.max_sequences :]
        return CacheOutcome(read, 0, total - read)


def _common_prefix(cached: list[str], keys: list[str]) -> int:
    """How many leading blocks two requests share. Prefix keys chain every block before them,
    so equal keys at i mean equal blocks up to i: a binary search finds the end."""
    high = min(len(cached), len(keys))
    if not high or cached[0] != keys[0]:
        return 0
    positions = range(high)
    # The first index whose keys differ (keys agree on every index before it).
    first_differing = bisect.bisect_left(positions, True, key=lambda i: cached[i] != keys[i])
    return first_differing


def simulate_cache(
    requests: Sequence[Request], rules: CacheRules, warm: Sequence[Block] = ()
) -> list[CacheOutcome]:
    """Each request's read, write and fresh tokens under `rules`, in order; `warm` is a prefix
    the cache already held when the first request came (see `record_requests`)."""
    cache = PrefixCache(rules)
    cache.seed(warm, requests[0].at if requests else None)
    return [cache.send(request) for request in requests]
