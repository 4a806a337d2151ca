"""The two input checks over tool-call ids, run after each message has been checked alone.

`Pairing` gives a tool result without `tool_call_id` the id its position implies; `Renaming`
gives a call that reuses an earlier call's id (and the result answering it) a fresh one. Both
look only back, one message at a time, so a conversation that grows resumes them where they
stopped (`message_input.Passes`). (Split from message_input.py.)
"""

from __future__ import annotations

from collections import deque
from typing import Any

from compaction.errors import InvalidConversationError
from compaction.messages import Message, tool_calls


class Pairing:
    """Give a tool result without `tool_call_id` the id its position implies, when unambiguous.

    The n-th result after an assistant message answers its n-th call (the legacy positional
    convention); anything else has no safe answer and is rejected. Fed one index at a time, in
    order, so that a growing conversation resumes where it stopped.

    Nearly every result carries its id, and then nothing is read but that id: the calls of the
    latest assistant message and the ids answered since are only kept (a list each), and the
    calls still awaiting a result (`_PendingCalls`) are worked out when a result without an id
    first asks for them.
    """

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] | None = None  # None: no call awaits a result
        self.answered: list[str] = []  # the ids results gave since those calls
        self.pending: _PendingCalls | None = None  # made from both when first needed

    def feed(self, messages: list[Message], index: int, repairs: list[str]) -> None:
        message = messages[index]
        role = message.get("role")
        if role == "assistant":
            calls = tool_calls(message)
            self.calls = calls or None
            self.answered, self.pending = [], None
            return
        if role != "tool":
            self.calls = self.pending = None
            return
        call_id = message.get("tool_call_id")
        if isinstance(call_id, str) and call_id:
            if self.pending is not None:
                self.pending.answer(call_id)
            elif self.calls is not None:
                self.answered.append(call_id)
            return
        pending = self._pending()
        guessed = pending.take_first() if pending is not None else None
        if guessed is None:
            raise InvalidConversationError(
                "tool message has no tool_call_id and no preceding call it could answer", index
            )
        copy = dict(message)
        copy["tool_call_id"] = guessed
        messages[index] = copy
        repairs.append(
            f"message {index}: tool message had no tool_call_id; paired by position "
            f"with call {guessed!r}"
        )

    def _pending(self) -> _PendingCalls | None:
        """The latest calls still awaiting a result, made once from the calls and the answers
        given so far (the ids are read from the calls as they were fed: renaming copies a
        message it renames, it never edits the calls' list)."""
        if self.pending is None and self.calls is not None:
            self.pending = _PendingCalls([str(call.get("id")) for call in self.calls])
            for call_id in self.answered:
                self.pending.answer(call_id)
            self.answered = []
        return self.pending


class _PendingCalls:
    """The calls of one assistant message still awaiting a result, in call order.

    A list with `remove(id)` and `pop(0)` gave the same answers, but each costs the length of the
    list: one message with 20,000 parallel calls answered in reverse order took seconds.
    Answering by id and taking the first unanswered call are amortised O(1) here.
    """

    def __init__(self, call_ids: list[str]) -> None:
        self._ids = call_ids
        self._answered = [False] * len(call_ids)
        self._first = 0  # every call before this one is answered
        self._positions: dict[str, deque[int]] = {}
        for position, call_id in enumerate(call_ids):
            self._positions.setdefault(call_id, deque()).append(position)

    def answer(self, call_id: str) -> None:
        """Mark the first unanswered call with this id answered (nothing if there is none)."""
        positions = self._positions.get(call_id)
        if positions:
            self._answered[positions.popleft()] = True

    def take_first(self) -> str | None:
        """The id of the first unanswered call, now marked answered; None when all are."""
        while self._first < len(self._ids) and self._answered[self._first]:
            self._first += 1
        if self._first == len(self._ids):
            return None
        call_id = self._ids[self._first]
        self._answered[self._first] = True
        # The first unanswered call overall is also the first unanswered one with its id.
        self._positions[call_id].popleft()
        return call_id


class Renaming:
    """Give a call that reuses an earlier call's id (and the result answering it) a fresh id.

    Real agents reuse ids (tau-bench, SWE-agent trajectories). Providers reject a request with the
    same id on two calls, and Phase 5 could only keep one of the two, dropping a real call and its
    output. Results are matched first in, first out: the n-th result carrying an id answers the
    n-th call that carried it, which is the only reading under which both pairs make sense.
    """

    def __init__(self) -> None:
        self.used: set[str] = set()
        # id as written -> the id (renamed or not) awaiting a result, or a queue of them when
        # more than one does (seldom: a deque for every call cost more than the rest of this)
        self.waiting: dict[str, str | deque[str]] = {}
        # The suffix to try next for each reused id. Every suffix below it is already taken
        # (`used` only grows), so starting there finds the same smallest free suffix as counting
        # from 2, without rescanning: a session reusing one id on every call stays linear.
        self.next_suffix: dict[str, int] = {}

    def feed(self, messages: list[Message], index: int, repairs: list[str]) -> None:
        message = messages[index]
        waiting = self.waiting
        if message.get("role") == "tool":
            written = str(message.get("tool_call_id"))
            queue = waiting.get(written)
            if queue is None:
                return
            # An id answered is forgotten: the dict holds what waits.
            if isinstance(queue, str):
                actual = queue
                del waiting[written]
            else:
                actual = queue.popleft()
                if not queue:
                    del waiting[written]
            if actual != written:
                messages[index] = {**message, "tool_call_id": actual}
            return
        calls = tool_calls(message)
        if not calls:
            return
        used = self.used
        renamed_calls: list[dict[str, Any]] | None = None  # a copy only once a call is renamed
        for position, call in enumerate(calls):
            call_id = str(call.get("id"))
            fresh = call_id
            if call_id in used:
                suffix = self.next_suffix.get(call_id, 2)
                while f"{call_id}_{suffix}" in used:
                    suffix += 1
                self.next_suffix[call_id] = suffix + 1
                fresh = f"{call_id}_{suffix}"
                repairs.append(
                    f"message {index}: tool_calls[{position}] reused the id {call_id!r} of an "
                    f"earlier call; renamed {fresh!r} (with the result that answers it)"
                )
                if renamed_calls is None:
                    renamed_calls = list(calls)
                renamed_calls[position] = {**call, "id": fresh}
            used.add(fresh)
            queue = waiting.get(call_id)
            if queue is None:
                waiting[call_id] = fresh
            elif isinstance(queue, str):
                waiting[call_id] = deque((queue, fresh))
            else:
                queue.append(fresh)
        if renamed_calls is not None:
            messages[index] = {**message, "tool_calls": renamed_calls}
