"""The input validation: what every message list passes before any phase.

It repairs what has one obvious repair (reported, never silent) and rejects what has none with an
`InvalidConversationError` naming the message index, because a guess there would corrupt the
conversation the user is trying to debug.
"""

from __future__ import annotations

import json
import operator
import re
from collections import deque
from typing import Any

from compaction.errors import InvalidConversationError
from compaction.messages import (
    ROLES,
    Message,
    has_non_finite_numbers,
    loads_json,
    tool_calls,
)

#: A surrogate code point. JSON can write one alone (`"\\ud800"`) and Python's json reads it into
#: a str, but such a str cannot be encoded as UTF-8: every write of it (a file, the terminal)
#: fails. A pair written as two escapes is decoded into one character, so any left is lone.
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT_CHARACTER = "\ufffd"


def validate_messages(messages: Any) -> tuple[list[Message], list[str]]:
    """Check the input and return (messages to work on, repairs made).

    Repaired messages are shallow copies; the input list and dicts are never modified. Rejected
    input raises `InvalidConversationError` with the message index and what is wrong.
    """
    checked, repairs, _ = GrowingConversation(remember=False).check(messages)
    return checked, repairs


def _as_message_list(messages: Any) -> list[Any] | tuple[Any, ...]:
    if isinstance(messages, dict) and isinstance(messages.get("messages"), list):
        messages = messages["messages"]
    if not isinstance(messages, list | tuple):
        raise InvalidConversationError(
            f"expected a list of messages, got {type(messages).__name__}"
        )
    if not messages:
        raise InvalidConversationError("the conversation is empty: there is nothing to compact")
    return messages


class GrowingConversation:
    """`validate_messages` for a conversation that grows by appending, as an agent's does.

    An agent asks `should_compress` after every message it appends; checking the whole list
    each time made the loop quadratic (every call re-scanned every earlier message for lone
    surrogates and re-parsed every tool call's arguments). `check` gives exactly what
    `validate_messages` gives, but re-checks only the messages after the longest prefix it has
    already checked — and a message counts as already checked only when it is the same object
    *and* still equal to a structural copy taken when it was checked, so an edit in place (a
    streamed reply growing, a call appended) is seen and re-checked. The three passes (each
    message; results paired with calls by position; reused call ids renamed) only look back,
    so resuming them where they stopped gives what a full run gives; their repairs are kept
    apart so that they come out in the same order too.
    """

    def __init__(self, remember: bool = True) -> None:
        self._remember = remember  # False: a one-shot check, no copies kept for the next call
        self._reset()

    def _reset(self) -> None:
        self._inputs: list[Any] = []  # the messages as given (kept alive: identity is compared)
        self._snapshots: list[Any] = []  # structural copies of them, leaves shared
        self._checked: list[Message] = []
        self._repairs: tuple[list[str], list[str], list[str]] = ([], [], [])
        self._pairing = _Pairing()
        self._renaming = _Renaming()

    def check(self, messages: Any, remember: bool = True) -> tuple[list[Message], list[str], int]:
        """(checked messages, repairs, how many leading messages were reused unchanged).

        `remember=False` reuses what an earlier call remembered but remembers nothing new: a
        one-shot check then pays no copies for a next call that will never come.
        """
        messages = _as_message_list(messages)
        reused = self._unchanged_prefix(messages)
        if not remember and reused < len(messages):
            checked, repairs, _ = GrowingConversation(remember=False).check(messages)
            return checked, repairs, 0
        if reused == 0:
            self._reset()  # a new conversation, or an earlier message changed: start over
        try:
            self._extend(messages, reused)
        except BaseException:
            self._reset()  # half-extended state would lie to the next call
            raise
        one, pairing, renaming = self._repairs
        return list(self._checked), [*one, *pairing, *renaming], reused

    def _unchanged_prefix(self, messages: list[Any] | tuple[Any, ...]) -> int:
        """len(checked) when every checked message is still there, unchanged; else 0."""
        known = len(self._inputs)
        if not known or len(messages) < known:
            return 0
        # Both comparisons run in C: `is` per message, then `==` against the copy, which stops
        # at each shared leaf (a string is compared by identity first) and so costs the
        # structure, not the text. (Equal numbers of another type, 1 for 1.0, count as the same.)
        if all(map(operator.is_, self._inputs, messages)) and all(
            map(operator.eq, self._snapshots, messages)
        ):
            return known
        return 0

    def _extend(self, messages: list[Any] | tuple[Any, ...], start: int) -> None:
        one, pairing, renaming = self._repairs
        new = messages[start:]
        checked = self._checked
        for index, message in enumerate(new, start):
            checked.append(_validate_one(message, index, one))
        for index in range(start, len(checked)):
            self._pairing.feed(checked, index, pairing)
        for index in range(start, len(checked)):
            self._renaming.feed(checked, index, renaming)
        if self._remember:
            self._inputs.extend(new)
            self._snapshots.extend(_structure_copy(message) for message in new)


def _structure_copy(node: Any) -> Any:
    """`node` with every dict and list copied and every other value shared: equal to the node
    until someone edits one of its dicts or lists in place."""
    if isinstance(node, dict):
        return {key: _structure_copy(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_structure_copy(item) for item in node]
    return node


def _validate_one(message: Any, index: int, repairs: list[str]) -> Message:
    if not isinstance(message, dict):
        raise InvalidConversationError(
            f"expected a message object, got {type(message).__name__}", index
        )
    role = message.get("role")
    if role not in ROLES:
        raise InvalidConversationError(
            f"unknown role {role!r}; expected one of {', '.join(ROLES)}", index
        )
    message = _replace_lone_surrogates(message, index, repairs)
    copy: Message | None = None

    def writable() -> Message:
        nonlocal copy
        if copy is None:
            copy = dict(message)
        return copy

    content = message.get("content")
    if "content" in message and not _content_ok(content):
        if isinstance(content, int | float | bool):
            writable()["content"] = str(content)
            repairs.append(f"message {index}: numeric content converted to text")
        else:
            raise InvalidConversationError(
                f"content must be a string, null or a list of parts, got {type(content).__name__}",
                index,
            )
    elif isinstance(content, list) and any(isinstance(part, str) for part in content):
        writable()["content"] = [
            {"type": "text", "text": part} if isinstance(part, str) else part for part in content
        ]
        repairs.append(f"message {index}: bare strings in the content list became text parts")

    if "tool_calls" in message and message["tool_calls"] is not None:
        calls = message["tool_calls"]
        if not isinstance(calls, list):
            raise InvalidConversationError(
                f"tool_calls must be a list, got {type(calls).__name__}", index
            )
        if role != "assistant" and calls:
            raise InvalidConversationError(f"a {role} message cannot carry tool_calls", index)
        fixed_calls = []
        changed = False
        for position, call in enumerate(calls):
            fixed, call_changed = _validate_call(call, index, position, repairs)
            fixed_calls.append(fixed)
            changed = changed or call_changed
        if changed:
            writable()["tool_calls"] = fixed_calls
        if not calls:
            del writable()["tool_calls"]
            repairs.append(f"message {index}: empty tool_calls list removed")

    if role == "tool":
        call_id = message.get("tool_call_id")
        if call_id is not None and not isinstance(call_id, str):
            writable()["tool_call_id"] = str(call_id)
            repairs.append(f"message {index}: tool_call_id converted to a string")
        if content is None:
            writable()["content"] = ""
            repairs.append(f"message {index}: tool result with no content given empty text")
    return copy if copy is not None else message


def _replace_lone_surrogates(message: Message, index: int, repairs: list[str]) -> Message:
    """`message`, or a copy with every lone surrogate (in any string, keys included) replaced
    by U+FFFD and the count reported: the one repair that lets the text be written at all."""
    try:
        if not _holds_surrogates(message):
            return message  # nearly every message: one read, no copy
        fixed, count = _without_surrogates(message)
    except RecursionError as exc:
        raise InvalidConversationError("the message is nested too deeply to read", index) from exc
    if not count:
        return message
    repairs.append(
        f"message {index}: {count} lone surrogate(s) (text that is not valid Unicode) "
        "replaced with U+FFFD"
    )
    return dict(fixed)


def _holds_surrogates(node: Any) -> bool:
    """True when a string anywhere in `node` (keys included) holds a lone surrogate.

    `str.isascii` reads a string at memory speed and settles most of them (a surrogate is not
    ASCII); only the rest go through the regular expression. Strings, the leaves nearly every
    node is, are tested in the loop rather than by a call each: this runs on every message.
    """
    if isinstance(node, str):
        return not node.isascii() and _SURROGATE.search(node) is not None
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(key, str):
                if not key.isascii() and _SURROGATE.search(key):
                    return True
            elif _holds_surrogates(key):
                return True
            if isinstance(value, str):
                if not value.isascii() and _SURROGATE.search(value):
                    return True
            elif isinstance(value, dict | list | tuple) and _holds_surrogates(value):
                return True
        return False
    if isinstance(node, list | tuple):
        return any(_holds_surrogates(part) for part in node)
    return False


def _without_surrogates(node: Any) -> tuple[Any, int]:
    """(node with lone surrogates replaced, how many); the node itself when it holds none."""
    if isinstance(node, str):
        return _SURROGATE.subn(REPLACEMENT_CHARACTER, node)
    if isinstance(node, dict):
        items = [
            (_without_surrogates(key), _without_surrogates(value)) for key, value in node.items()
        ]
        count = sum(key[1] + value[1] for key, value in items)
        return ({key[0]: value[0] for key, value in items} if count else node), count
    if isinstance(node, list | tuple):
        parts = [_without_surrogates(part) for part in node]
        count = sum(part[1] for part in parts)
        return ([part[0] for part in parts] if count else node), count
    return node, 0


def _content_ok(content: Any) -> bool:
    if content is None or isinstance(content, str):
        return True
    if isinstance(content, list):
        return all(isinstance(part, dict | str) for part in content)
    return False


def _validate_call(
    call: Any, index: int, position: int, repairs: list[str]
) -> tuple[dict[str, Any], bool]:
    if not isinstance(call, dict):
        raise InvalidConversationError(
            f"tool_calls[{position}] must be an object, got {type(call).__name__}", index
        )
    fixed = call
    changed = False
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        fixed = dict(fixed)
        # Deterministic, so the same input always compacts to the same output.
        fixed["id"] = f"call_missing_{index}_{position}"
        changed = True
        repairs.append(
            f"message {index}: tool_calls[{position}] had no id; assigned {fixed['id']!r}"
        )
    function = call.get("function")
    if not isinstance(function, dict):
        raise InvalidConversationError(
            f"tool_calls[{position}] has no 'function' object with a name and arguments", index
        )
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        new_function = dict(function)
        if arguments is None:
            new_function["arguments"] = "{}"
        else:
            try:
                new_function["arguments"] = json.dumps(arguments, ensure_ascii=False)
            except (TypeError, ValueError) as exc:
                raise InvalidConversationError(
                    f"tool_calls[{position}].function.arguments cannot be serialised: {exc}",
                    index,
                ) from exc
        fixed = dict(fixed) if fixed is call else fixed
        fixed["function"] = new_function
        changed = True
        repairs.append(
            f"message {index}: tool_calls[{position}] arguments were "
            f"{type(arguments).__name__}, serialised to a JSON string"
        )
    name = (fixed.get("function") or {}).get("name")
    if not isinstance(name, str) or not name:
        fixed = dict(fixed) if fixed is call else fixed
        fixed["function"] = {**fixed["function"], "name": "unknown"}
        changed = True
        repairs.append(f"message {index}: tool_calls[{position}] had no name; named 'unknown'")
    if fixed.get("type") is None:
        fixed = dict(fixed) if fixed is call else fixed
        fixed["type"] = "function"
        changed = True
    problem = arguments_problem(fixed["function"]["arguments"])
    if problem is not None:
        # Kept as written (the user is debugging this conversation, and a guess at what was
        # meant would corrupt it), but said aloud: a provider rejects the request.
        repairs.append(
            f"message {index}: tool_calls[{position}] arguments {problem}; kept as written"
        )
    return fixed, changed


def arguments_problem(arguments: str) -> str | None:
    """Why a provider would reject these tool-call arguments (completing "arguments ..."), or
    None when they are a JSON object, the only arguments every provider accepts."""
    if has_non_finite_numbers(arguments):
        return "hold NaN or Infinity, which is not valid JSON"
    try:
        value = loads_json(arguments)
    except (ValueError, RecursionError):
        return "are not valid JSON"
    if not isinstance(value, dict):
        kind = {list: "array", str: "string", bool: "boolean"}.get(type(value), "number")
        return f"are a JSON {'null' if value is None else kind}, not an object"
    return None


def rejected_arguments(messages: list[Message]) -> int:
    """How many tool calls in `messages` have arguments `arguments_problem` finds fault with."""
    return sum(
        1
        for message in messages
        for call in tool_calls(message)
        if isinstance(call, dict)
        and isinstance(function := call.get("function"), dict)
        and isinstance(arguments := function.get("arguments"), str)
        and arguments_problem(arguments) is not None
    )


class _Pairing:
    """Give a tool result without `tool_call_id` the id its position implies, when unambiguous.

    The n-th result after an assistant message answers its n-th call (the legacy positional
    convention); anything else has no safe answer and is rejected. Fed one index at a time, in
    order, so that a growing conversation resumes where it stopped.
    """

    def __init__(self) -> None:
        self.pending = _PendingCalls([])

    def feed(self, messages: list[Message], index: int, repairs: list[str]) -> None:
        message = messages[index]
        role = message.get("role")
        if role == "assistant":
            self.pending = _PendingCalls([str(call.get("id")) for call in tool_calls(message)])
            return
        if role != "tool":
            self.pending = _PendingCalls([])
            return
        call_id = message.get("tool_call_id")
        if isinstance(call_id, str) and call_id:
            self.pending.answer(call_id)
            return
        guessed = self.pending.take_first()
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


class _Renaming:
    """Give a call that reuses an earlier call's id (and the result answering it) a fresh id.

    Real agents reuse ids (tau-bench, SWE-agent trajectories). Providers reject a request with the
    same id on two calls, and Phase 5 could only keep one of the two, dropping a real call and its
    output. Results are matched first in, first out: the n-th result carrying an id answers the
    n-th call that carried it, which is the only reading under which both pairs make sense.
    """

    def __init__(self) -> None:
        self.used: set[str] = set()
        # id as written -> ids (renamed or not) awaiting a result
        self.waiting: dict[str, deque[str]] = {}
        # The suffix to try next for each reused id. Every suffix below it is already taken
        # (`used` only grows), so starting there finds the same smallest free suffix as counting
        # from 2, without rescanning: a session reusing one id on every call stays linear.
        self.next_suffix: dict[str, int] = {}

    def feed(self, messages: list[Message], index: int, repairs: list[str]) -> None:
        message = messages[index]
        if message.get("role") == "tool":
            written = str(message.get("tool_call_id"))
            queue = self.waiting.get(written)
            if not queue:
                return
            actual = queue.popleft()
            if actual != written:
                messages[index] = {**message, "tool_call_id": actual}
            return
        calls = tool_calls(message)
        if not calls:
            return
        used = self.used
        renamed_calls = []
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
            used.add(fresh)
            self.waiting.setdefault(call_id, deque()).append(fresh)
            renamed_calls.append(call if fresh == call_id else {**call, "id": fresh})
        if any(new is not old for new, old in zip(renamed_calls, calls, strict=True)):
            messages[index] = {**message, "tool_calls": renamed_calls}
