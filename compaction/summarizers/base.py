"""The summariser interface and the request every summariser receives.

A summariser returns summary text or raises `SummarizationError` (classified by `kind`); the
Compactor, not the summariser, decides to fall back, so every summariser degrades the same way.
A summariser may expose `last_details` (a dict) after a call: model, token use, cost, attempts,
cooldown — the Compactor copies it into the summarize PhaseResult.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from compaction.deferred import LazyField, resolve_fields
from compaction.messages import Message
from compaction.summary import static_marker
from compaction.summary.items import SummaryItem
from compaction.summary.recorded import SessionRecord
from compaction.tokens import TokenCounter

OnToken = Callable[[str], None]


@dataclass
class SummaryRequest:
    """Everything a summariser may use.

    `turns` is the middle as Phase 1 left it, serialised (`serialized`) one block per message;
    `raw_turns` is the same middle before Phase 1, for summarisers that read it at no token cost;
    `prompt` is the full prompt ALGORITHM.md Phase 3 describes (first-time or iterative, with the
    focus block when a focus topic is given).
    """

    turns: list[Message]
    # `serialized` and `prompt` may be given as Deferreds (compaction/deferred.py): made when a
    # summariser reads them (a model's does; the extractive one never does). budget_tokens is a
    # LazyField only so that the required fields stay in their places.
    serialized: LazyField[str] = LazyField()
    budget_tokens: LazyField[int] = LazyField()
    prompt: LazyField[str] = LazyField()
    previous_summary: str | None = None
    focus: str | None = None
    latest_user_request: str | None = None
    raw_turns: list[Message] = field(default_factory=list)
    #: The first user request of the whole conversation (from the head), for the Goal section.
    first_user_request: str | None = None
    #: The model the conversation runs on (the LLM summariser's default).
    model: str = "gpt-4o"
    #: Raw text of the tail's tool outputs that Phase 1 cut to one line. They leave the context as
    #: surely as the middle does (only the one-liner stays), so a summariser may keep their facts.
    pruned_tail_outputs: list[str] = field(default_factory=list)
    #: The counter the Compactor measures everything with, so a summariser that fits its text to
    #: `budget_tokens` counts in the same units (and `counter="rough"` never loads tiktoken).
    counter: TokenCounter | None = None
    # -- provenance: where in the conversation each of the above is, so every item of the
    # summary can cite its messages by the indexes the app and the report show --------------
    #: The conversation index of each of `turns` (empty: a request built by hand, no citations).
    turn_indices: list[int] = field(default_factory=list)
    #: Each turn's mark (messages.Marks: which user turns the harness sent); empty: the turns'
    #: own `injected` keys, as a request built by hand may carry them.
    turn_marks: list[str | None] = field(default_factory=list)
    #: The conversation index of each of `pruned_tail_outputs`.
    pruned_tail_indices: list[int] = field(default_factory=list)
    latest_user_index: int | None = None
    first_user_index: int | None = None
    #: What of the first request the user typed (user_words.own_words): the rules it may give.
    first_user_words: str | None = None
    #: What the session file recorded beside the messages (the working directory).
    recorded: SessionRecord | None = None

    def __getstate__(self) -> dict[str, Any]:
        resolve_fields(self)
        return self.__dict__

    def conversation_index(self, turn: int) -> int | None:
        """The conversation index of a turn index (a tail output counts on after the turns;
        -1 is the opening request), or None when the request does not say."""
        if turn == -1:
            return self.first_user_index
        if not self.turn_indices:
            return None
        if 0 <= turn < len(self.turn_indices):
            return self.turn_indices[turn]
        tail = turn - len(self.turn_indices)
        if 0 <= tail < len(self.pruned_tail_indices):
            return self.pruned_tail_indices[tail]
        return None

    @property
    def iterative(self) -> bool:
        return self.previous_summary is not None

    @property
    def turn_count(self) -> int:
        return len(self.turns)


@runtime_checkable
class Summarizer(Protocol):
    """Anything with a `name` and `summarize(request, on_token=None) -> str`.

    A summariser that knows where each line came from may also set `last_items` after a call:
    each section's items with their sources (summary/items.py), in the order of the text's
    lines. Without it, the summary's `[#N]` citations are read instead (a model is asked to
    write them).
    """

    name: str

    def summarize(self, request: SummaryRequest, on_token: OnToken | None = None) -> str: ...


SourcedItems = dict[str, list[SummaryItem]]


class StaticSummarizer:
    """Always the static marker: the degraded summary, useful as a baseline and in teaching."""

    name = "static"

    def __init__(self) -> None:
        self.last_details: dict[str, Any] = {}

    def summarize(self, request: SummaryRequest, on_token: OnToken | None = None) -> str:
        text = static_marker(request.turn_count)
        if on_token is not None:
            on_token(text)
        return text
