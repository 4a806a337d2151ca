"""Token counters: exact (tiktoken, offline, cached per content) and rough (characters / 4).

The exact counter's encodings are built from rank files this package ships (encodings.py): no
download, no litellm, nothing written to the environment.

Counting rule (ALGORITHM.md): content text + tool-call names and arguments + `tool_call_id` + 4
tokens of per-message overhead; each image part counts 1,600 tokens.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from compaction.cache import COUNTER_SHARE, MAX_COUNTERS, CompactionCache, current_cache
from compaction.errors import TokenizerError
from compaction.messages import Message, image_count, tool_calls
from compaction.tokens.encodings import load_encoding

MESSAGE_OVERHEAD = 4
IMAGE_TOKENS = 1_600
#: Below this many characters (~250K tokens) a batch is encoded on one thread: starting a pool
#: and sharing the work costs more than it saves.
PARALLEL_MIN_CHARS = 1_000_000
MAX_ENCODE_THREADS = 4

_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens of messages. Implementations cache per content string."""

    name: str

    def count_message(self, message: Message) -> int: ...

    def count_messages(self, messages: Sequence[Message]) -> int: ...


def encoding_name_for(model: str) -> str:
    """o200k_base for the gpt-4o/4.1/5/o-series, cl100k_base for everything else."""
    bare = model.rsplit("/", 1)[-1].lower()
    if bare.startswith(_O200K_PREFIXES):
        return "o200k_base"
    return "cl100k_base"


#: A counter's own bound when no cache gives it one (a counter made alone, outside a Compactor).
DEFAULT_COUNTER_BYTES = 8 * 1024 * 1024
#: What a remembered count costs beyond its text's characters (the dict slot, the int).
_ENTRY_BYTES = 100


class _CachedCounter:
    """Shared message arithmetic; subclasses provide `_count_text` for one string.

    Counts are remembered per text within `max_bytes` (the texts' characters plus a cost per
    entry): the texts are the caller's messages, and remembering them without a bound kept every
    conversation an agent server ever compacted alive. Past the bound the oldest quarter goes;
    lookups stay a plain dict's (the hot path of every compaction)."""

    name = "base"

    def __init__(self, max_bytes: int = DEFAULT_COUNTER_BYTES) -> None:
        self._cache: dict[str, int] = {}
        self.max_bytes = max_bytes
        self._bytes = 0
        self._evict_lock = threading.Lock()

    def _count_text(self, text: str) -> int:
        raise NotImplementedError

    @property
    def nbytes(self) -> int:
        return self._bytes

    def _remember(self, text: str, count: int) -> None:
        if text not in self._cache:
            self._bytes += len(text) + _ENTRY_BYTES
        self._cache[text] = count
        if self._bytes > self.max_bytes:
            self._evict()

    def _evict(self) -> None:
        """Drop the oldest entries until three quarters of the bound is left."""
        with self._evict_lock:
            target = self.max_bytes * 3 // 4
            cache = self._cache
            while self._bytes > target and cache:
                text = next(iter(cache))
                del cache[text]
                self._bytes -= len(text) + _ENTRY_BYTES

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        cached = self._cache.get(text)
        if cached is None:
            cached = self._count_text(text)
            self._remember(text, cached)
        return cached

    def count_message(self, message: Message) -> int:
        total = MESSAGE_OVERHEAD
        content = message.get("content")
        if isinstance(content, str):
            total += self.count_text(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict):
                    text = part.get("text")
                    if isinstance(text, str):
                        total += self.count_text(text)
            total += IMAGE_TOKENS * image_count(message)
        for call in tool_calls(message):
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                name = function.get("name")
                arguments = function.get("arguments")
                if isinstance(name, str):
                    total += self.count_text(name)
                if isinstance(arguments, str):
                    total += self.count_text(arguments)
        call_id = message.get("tool_call_id")
        if isinstance(call_id, str):
            total += self.count_text(call_id)
        return total

    def count_messages(self, messages: Sequence[Message]) -> int:
        return sum(self.count_message(message) for message in messages)

    def counts(self, messages: Sequence[Message]) -> list[int]:
        """Each message's tokens; the texts not yet cached are counted first, as one batch."""
        self._count_batch(self._uncached_texts(messages))
        return [self.count_message(message) for message in messages]

    def _uncached_texts(self, messages: Sequence[Message]) -> list[str]:
        """Every distinct text of `messages` that count_message would count and has not yet."""
        cache = self._cache
        found: dict[str, None] = {}  # insertion-ordered and distinct
        for message in messages:
            content = message.get("content")
            texts: list[Any] = [content] if isinstance(content, str) else []
            if isinstance(content, list):
                texts.extend(part.get("text") for part in content if isinstance(part, dict))
            for call in tool_calls(message):
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict):
                    texts.extend((function.get("name"), function.get("arguments")))
            texts.append(message.get("tool_call_id"))
            for text in texts:
                if isinstance(text, str) and text and text not in cache:
                    found[text] = None
        return list(found)

    def _count_batch(self, texts: list[str]) -> None:
        """Count and cache `texts`; here one by one, a subclass may do better."""
        for text in texts:
            self._remember(text, self._count_text(text))

    def cache_size(self) -> int:
        return len(self._cache)


class TiktokenCounter(_CachedCounter):
    """Exact counts with the model's tiktoken encoding, loaded offline."""

    name = "tiktoken"

    def __init__(self, model: str = "gpt-4o", max_bytes: int = DEFAULT_COUNTER_BYTES) -> None:
        super().__init__(max_bytes)
        self.model = model
        self.encoding_name = encoding_name_for(model)
        encoding = load_encoding(self.encoding_name)
        # Special-token text inside a transcript is content, not a control token.
        self._encode: Callable[[str], list[int]] = lambda text: encoding.encode(
            text, disallowed_special=()
        )

    def _count_text(self, text: str) -> int:
        return len(self._encode(text))

    def _count_batch(self, texts: list[str]) -> None:
        """Encode a large batch on every core: tiktoken's encoder releases the GIL, so threads
        run it in parallel. A small batch is not worth a thread pool (nor is one core)."""
        # The size first: an agent counts one appended message per call, and asking the OS
        # for its core count on each of those calls cost more than encoding the message.
        if sum(map(len, texts)) < PARALLEL_MIN_CHARS:
            super()._count_batch(texts)
            return
        workers = min(_cores(), MAX_ENCODE_THREADS)
        if workers < 2:
            super()._count_batch(texts)
            return
        from concurrent.futures import ThreadPoolExecutor  # only a large batch needs a pool

        encode = self._encode

        def lengths(chunk: list[str]) -> list[int]:
            return [len(encode(text)) for text in chunk]

        # Interleaved chunks, so that each thread gets a fair share of the long outputs.
        chunks = [texts[start::workers] for start in range(workers)]
        with ThreadPoolExecutor(workers, thread_name_prefix="tokens") as pool:
            for chunk, counted in zip(chunks, pool.map(lengths, chunks), strict=True):
                for text, count in zip(chunk, counted, strict=True):
                    self._remember(text, count)


@functools.cache
def _cores() -> int:
    """The machine's cores, asked once (os.cpu_count reads /proc on every call)."""
    return os.cpu_count() or 1


class RoughCounter(_CachedCounter):
    """Characters / 4, rounded up: the estimate many agents use, to compare against.

    It remembers nothing: a length divided is cheaper than looking the text up (the lookup
    hashes the whole text the first time), and nothing kept means no memory to bound."""

    name = "rough"

    def _count_text(self, text: str) -> int:
        return -(-len(text) // 4)  # math.ceil(len(text) / 4) without the float

    def count_text(self, text: str) -> int:
        return -(-len(text) // 4)

    def count_message(self, message: Message) -> int:
        """The counting rule of `_CachedCounter.count_message`, with each text's count inline."""
        content = message.get("content")
        if isinstance(content, str):
            total = MESSAGE_OVERHEAD - (-len(content) // 4)
        else:
            total = MESSAGE_OVERHEAD
            if isinstance(content, list):
                for part in content:
                    if isinstance(part, dict):
                        text = part.get("text")
                        if isinstance(text, str):
                            total -= -len(text) // 4
                total += IMAGE_TOKENS * image_count(message)
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            for call in calls:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict):
                    name = function.get("name")
                    arguments = function.get("arguments")
                    if isinstance(name, str):
                        total -= -len(name) // 4
                    if isinstance(arguments, str):
                        total -= -len(arguments) // 4
        call_id = message.get("tool_call_id")
        if isinstance(call_id, str):
            total -= -len(call_id) // 4
        return total

    def counts(self, messages: Sequence[Message]) -> list[int]:
        return [self.count_message(message) for message in messages]


def count_each(counter: TokenCounter, messages: Sequence[Message]) -> list[int]:
    """Each message's tokens, in one batch when the counter can (ours encode a large batch on
    every core); any other TokenCounter one message at a time."""
    batch = getattr(counter, "counts", None)
    if callable(batch):
        return list(batch(messages))
    return [counter.count_message(message) for message in messages]


def counter_key(kind: str, model: str) -> tuple[str, str]:
    """Counters of one kind and encoding count alike: (kind, encoding name or "")."""
    if kind not in ("tiktoken", "rough"):
        raise TokenizerError(f"unknown counter {kind!r}; choose 'tiktoken' or 'rough'")
    return kind, encoding_name_for(model) if kind == "tiktoken" else ""


def new_counter(
    kind: str = "tiktoken", model: str = "gpt-4o", max_bytes: int = DEFAULT_COUNTER_BYTES
) -> TokenCounter:
    """A counter of its own, remembering counts within `max_bytes`."""
    counter_key(kind, model)  # the same clear error for an unknown kind
    if kind == "tiktoken":
        return TiktokenCounter(model, max_bytes)
    return RoughCounter(max_bytes)


def make_counter(
    kind: str = "tiktoken", model: str = "gpt-4o", cache: CompactionCache | None = None
) -> TokenCounter:
    """The counter of `kind` for `model`: the given cache's (or the running compaction's), so
    its counts are remembered with the rest of what that cache holds; else one of its own."""
    key = counter_key(kind, model)
    owner = cache if cache is not None else current_cache()
    if owner is None:
        return new_counter(kind, model)
    with owner.lock:
        counter = owner.counters.get(key)
        if counter is None:
            if len(owner.counters) >= MAX_COUNTERS:  # a third kind: the oldest goes
                del owner.counters[next(iter(owner.counters))]
            share = int(owner.max_bytes * COUNTER_SHARE)
            counter = owner.counters[key] = new_counter(kind, model, share)
        return counter
