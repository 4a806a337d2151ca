"""Token counters: exact (tiktoken, offline) and rough (characters / 4), both cached per content.

tiktoken downloads its encoding files on first use, which cannot work offline. litellm ships
copies named by tiktoken's cache key, so we point tiktoken's cache at litellm's folder — found with
`importlib.util.find_spec`, which locates litellm without paying for its multi-second import.

Counting rule (ALGORITHM.md): content text + tool-call names and arguments + `tool_call_id` + 4
tokens of per-message overhead; each image part counts 1,600 tokens.
"""

from __future__ import annotations

import binascii
import contextlib
import functools
import importlib.util
import math
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from compaction.errors import TokenizerError
from compaction.messages import Message, image_count, tool_calls

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


def _litellm_tokenizer_dir() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location) / "litellm_core_utils" / "tokenizers"
        if folder.is_dir():
            return folder
    return None


_ENCODINGS: dict[str, Any] = {}
_ENCODINGS_LOCK = threading.Lock()


def load_encoding(name: str) -> Any:
    """A tiktoken Encoding loaded from litellm's bundled files (never the network)."""
    with _ENCODINGS_LOCK:
        if name in _ENCODINGS:
            return _ENCODINGS[name]
        folder = _litellm_tokenizer_dir()
        if folder is None:
            raise TokenizerError(
                "litellm is not installed, so its bundled tiktoken files are missing; "
                "install litellm or use the rough counter (--counter rough)"
            )
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
        # litellm resets TIKTOKEN_CACHE_DIR on its first token_counter call unless this is set.
        os.environ["CUSTOM_TIKTOKEN_CACHE_DIR"] = str(folder)
        import tiktoken

        try:
            with _faster_rank_files():
                encoding = tiktoken.get_encoding(name)
        except Exception as exc:
            raise TokenizerError(
                f"could not load the {name} encoding from {folder} ({exc}); "
                "use the rough counter (--counter rough)"
            ) from exc
        _ENCODINGS[name] = encoding
        return encoding


@contextlib.contextmanager
def _faster_rank_files() -> Iterator[None]:
    """tiktoken's encoding constructors, reading their rank files with `read_ranks`.

    Loading o200k took ~0.4 s of CPU, half of it tiktoken's parser decoding 200,000 lines one
    by one in Python: the command line pays it on every run. The constructors call
    `load_tiktoken_bpe` by the name they imported, so that name is swapped for the length of
    the call (under _ENCODINGS_LOCK); `read_ranks` gives the same dict (tested), or defers to
    tiktoken's own parser when the file is not the plain "token rank" lines it expects.
    """
    try:
        import tiktoken_ext.openai_public as constructors  # type: ignore[import-untyped]
    except ImportError:  # another tiktoken layout: its own parser, as before
        yield
        return
    original = constructors.load_tiktoken_bpe
    constructors.load_tiktoken_bpe = read_ranks
    try:
        yield
    finally:
        constructors.load_tiktoken_bpe = original


def read_ranks(tiktoken_bpe_file: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """tiktoken.load.load_tiktoken_bpe, parsing the whole file in a few C-level passes.

    The file (its hash checked by tiktoken's reader) is lines of "base64-token rank": split on
    whitespace it alternates tokens and ranks. Anything else falls back to tiktoken's parser,
    which also says what is wrong with the file.
    """
    from tiktoken.load import load_tiktoken_bpe, read_file_cached

    fields = read_file_cached(tiktoken_bpe_file, expected_hash).split()
    lines = len(fields) // 2
    try:
        if len(fields) % 2:
            raise ValueError("not token-rank pairs")
        ranks = dict(
            zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True)
        )
    except (ValueError, binascii.Error):
        ranks = {}
    if len(ranks) != lines or not lines:
        return load_tiktoken_bpe(tiktoken_bpe_file, expected_hash)
    return ranks


class _CachedCounter:
    """Shared message arithmetic; subclasses provide `_count_text` for one string."""

    name = "base"

    def __init__(self) -> None:
        self._cache: dict[str, int] = {}

    def _count_text(self, text: str) -> int:
        raise NotImplementedError

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        cached = self._cache.get(text)
        if cached is None:
            cached = self._count_text(text)
            self._cache[text] = cached
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
            self._cache[text] = self._count_text(text)

    def cache_size(self) -> int:
        return len(self._cache)


class TiktokenCounter(_CachedCounter):
    """Exact counts with the model's tiktoken encoding, loaded offline."""

    name = "tiktoken"

    def __init__(self, model: str = "gpt-4o") -> None:
        super().__init__()
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
                self._cache.update(zip(chunk, counted, strict=True))


@functools.cache
def _cores() -> int:
    """The machine's cores, asked once (os.cpu_count reads /proc on every call)."""
    return os.cpu_count() or 1


class RoughCounter(_CachedCounter):
    """Characters / 4, rounded up: the estimate many agents use, to compare against."""

    name = "rough"

    def _count_text(self, text: str) -> int:
        return math.ceil(len(text) / 4)


def count_each(counter: TokenCounter, messages: Sequence[Message]) -> list[int]:
    """Each message's tokens, in one batch when the counter can (ours encode a large batch on
    every core); any other TokenCounter one message at a time."""
    batch = getattr(counter, "counts", None)
    if callable(batch):
        return list(batch(messages))
    return [counter.count_message(message) for message in messages]


_SHARED: dict[tuple[str, str], _CachedCounter] = {}
_SHARED_LOCK = threading.Lock()


def make_counter(kind: str = "tiktoken", model: str = "gpt-4o") -> TokenCounter:
    """A process-wide shared counter, so every run over the same content reuses its cache."""
    if kind not in ("tiktoken", "rough"):
        raise TokenizerError(f"unknown counter {kind!r}; choose 'tiktoken' or 'rough'")
    key = (kind, encoding_name_for(model) if kind == "tiktoken" else "")
    with _SHARED_LOCK:
        counter = _SHARED.get(key)
        if counter is None:
            counter = TiktokenCounter(model) if kind == "tiktoken" else RoughCounter()
            _SHARED[key] = counter
        return counter
