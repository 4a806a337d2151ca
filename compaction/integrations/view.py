"""One conversation's compacted view, for an adapter whose framework holds its own messages.

A framework hands its adapter the conversation as it holds it before each model call. The view
turns what is new since the last call into canonical (OpenAI-format) messages through the
framework's `Codec`, appends it to the context it already compacted, asks its Compactor (one per
conversation, so `should_compress` checks and counts only what was appended), and when a
compaction runs, hands back the framework's own objects: the very object for every message the
compaction kept unchanged, the original patched for one it changed (a tool output cut to one
line, arguments shortened), a new one only for what it inserted (the summary, a stub result).

Two kinds of hook:
- persistent (Pydantic AI's history processor): what the adapter returns becomes the framework's
  history, so the next call starts with it;
- per call (LangChain's `wrap_model_call`, the Agents SDK's model-input filter): the framework
  keeps its full history and asks again with all of it; the view remembers how much of it the
  compacted context already covers and substitutes the compacted context for that prefix.

A list that does not begin with what the view last saw (another conversation, an edited or
rewound history) starts the view afresh, with a new Compactor: a stale summary must not leak
into another conversation.
"""

from __future__ import annotations

import operator
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from compaction.cache import CompactionCache
from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.integrations.recording import recorder_for
from compaction.messages import Message
from compaction.result import CompactionResult
from compaction.summarizers.base import Summarizer

Item = TypeVar("Item")
#: Recorder: called with (conversation key, framework, the context compacted, the result).
Recorder = Callable[[str, str, list[Message], CompactionResult], None]


class Codec(Protocol[Item]):
    """A framework's messages to canonical messages and back.

    `encode(items)` returns the canonical messages and, for each, what the framework held for it
    (`held`: opaque to the view, e.g. the message object, or its parts). `decode(messages, held,
    unchanged)` builds the framework's items for a compacted context: `held[i]` is what the
    message came from (None for a message compaction inserted), `unchanged[i]` whether it is
    exactly the canonical message it came from, so the original may be handed back as it is.
    Round trip: `decode(*encode(items), all unchanged) == items`, and encoding what `decode`
    built gives back the canonical messages it was given.
    """

    framework: str

    def encode(self, items: Sequence[Item]) -> tuple[list[Message], list[Any]]: ...

    def decode(
        self, messages: Sequence[Message], held: Sequence[Any], unchanged: Sequence[bool]
    ) -> list[Item]: ...


@dataclass
class AdapterSettings:
    """What every conversation of one adapter shares: the budgets, the summariser, the memory
    (one CompactionCache, bounded in bytes, for all its Compactors), the recorder, the attributes
    its compaction spans carry."""

    config: CompactionConfig = field(default_factory=CompactionConfig)
    summarizer: Summarizer | None = None
    cache: CompactionCache = field(default_factory=CompactionCache)
    recorder: Recorder | None = None
    focus: str | None = None
    span_attributes: dict[str, str | int | float | bool] = field(default_factory=dict)

    @classmethod
    def from_options(
        cls,
        config: CompactionConfig | None,
        summarizer: Summarizer | None,
        cache: CompactionCache | None,
        record_to: Any,
        focus: str | None,
        span_attributes: dict[str, str | int | float | bool] | None,
    ) -> AdapterSettings:
        """The settings from an adapter's keyword arguments (the same in every adapter)."""
        return cls(
            config=config or CompactionConfig(),
            summarizer=summarizer,
            cache=cache or CompactionCache(),
            recorder=recorder_for(record_to),
            focus=focus,
            span_attributes=dict(span_attributes or {}),
        )

    def compactor(self, key: str, framework: str) -> Compactor:
        compactor = Compactor(self.config, self.summarizer, cache=self.cache)
        compactor.span_attributes = {
            "gen_ai.conversation.id": key,
            "compaction.framework": framework,
            **self.span_attributes,
        }
        return compactor


class ConversationView(Generic[Item]):
    """The compacted context of one conversation, as the framework's items."""

    def __init__(
        self, codec: Codec[Item], settings: AdapterSettings, key: str, persistent: bool
    ) -> None:
        self.codec = codec
        self.settings = settings
        self.key = key
        self.persistent = persistent
        self.compactions = 0
        self.last_result: CompactionResult | None = None
        #: Held while the view compacts: a framework may call from several threads.
        self.lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self.compactor = self.settings.compactor(self.key, self.codec.framework)
        self._messages: list[Message] = []  # the compacted context, canonical
        self._held: list[Any] = []  # what the framework held for each of them
        self._items: list[Item] = []  # the compacted context as the framework's items
        self._seen: list[Item] = []  # the framework's list the view last saw (or returned)

    def _continues(self, items: Sequence[Item]) -> bool:
        """Whether `items` begins with what the view last saw: the same objects (the usual
        case, checked at C speed), else equal ones (a history read back from storage)."""
        seen = self._seen
        if len(items) < len(seen):
            return False
        if all(map(operator.is_, seen, items)):
            return True
        return all(a is b or a == b for a, b in zip(seen, items, strict=False))

    def messages_for_model(self, items: Sequence[Item]) -> list[Item]:
        """The items to send the model now: the compacted context plus what is new, compacted
        again when the Compactor says it is time."""
        if not self._continues(items):
            self._reset()
        new = list(items[len(self._seen) :])
        messages, held = self.codec.encode(new)
        candidate = self._messages + messages
        candidate_held = self._held + held
        candidate_items = self._items + new
        result = None
        if candidate and self.compactor.should_compress(candidate):
            result = self.compactor.compress(candidate, focus=self.settings.focus)
        if result is not None and not result.skipped:
            self._items = self._decode(result, candidate, candidate_held)
            self._messages, self._held = self.codec.encode(self._items)
            self.compactions += 1
            self.last_result = result
            if self.settings.recorder is not None:
                self.settings.recorder(self.key, self.codec.framework, candidate, result)
        else:
            self._messages, self._held, self._items = candidate, candidate_held, candidate_items
        self._seen = list(self._items) if self.persistent else list(items)
        return list(self._items)

    def _decode(
        self, result: CompactionResult, candidate: list[Message], held: list[Any]
    ) -> list[Item]:
        origins: list[int | None] = (
            list(result.phases[-1].origins) if result.phases else list(range(len(candidate)))
        )
        sources = [held[o] if o is not None and o < len(held) else None for o in origins]
        unchanged = [
            o is not None and o < len(candidate) and message == candidate[o]
            for message, o in zip(result.messages, origins, strict=True)
        ]
        return self.codec.decode(result.messages, sources, unchanged)


class Views(Generic[Item]):
    """An adapter's conversations by key, least recently used first out: an adapter serving
    many conversations keeps at most `max_conversations` Compactors (the memory of a process
    must not grow with the number of conversations it has served)."""

    def __init__(
        self,
        codec: Codec[Item],
        settings: AdapterSettings,
        persistent: bool,
        max_conversations: int,
    ) -> None:
        if max_conversations < 1:
            raise ValueError(f"max_conversations must be at least 1, got {max_conversations}")
        self.codec = codec
        self.settings = settings
        self.persistent = persistent
        self.max_conversations = max_conversations
        self._views: OrderedDict[str, ConversationView[Item]] = OrderedDict()

    def get(self, key: str) -> ConversationView[Item]:
        view = self._views.get(key)
        if view is None:
            view = ConversationView(self.codec, self.settings, key, self.persistent)
            self._views[key] = view
            while len(self._views) > self.max_conversations:
                self._views.popitem(last=False)
        else:
            self._views.move_to_end(key)
        return view

    def __len__(self) -> int:
        return len(self._views)

    def __iter__(self) -> Any:
        return iter(list(self._views.values()))


def conversation_key(messages: Sequence[Message]) -> str:
    """A key for a conversation the framework names no id for: a digest of its first user
    message (the same opening request, the same conversation; the view starts afresh when the
    rest does not continue)."""
    import hashlib

    first = next((m for m in messages if m.get("role") == "user"), messages[0] if messages else {})
    text = repr(first.get("content"))
    return "first-request:" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]
