"""The input validation: what every message list passes before any phase.

It repairs what has one obvious repair (reported, never silent) and rejects what has none with an
`InvalidConversationError` naming the message index, because a guess there would corrupt the
conversation the user is trying to debug.

`check_from` runs the checks from any message on, so that `growing_conversation` can check only
what an agent appended (or what changed) and give what a full check gives.
"""

from __future__ import annotations

import json
import re
from typing import Any

from compaction.errors import InvalidConversationError
from compaction.input.call_ids import Pairing, Renaming
from compaction.input.parsed_arguments import keep, kept_object
from compaction.input.snapshot import Snapshot, snapshot
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
    checked: list[Message] = []
    repairs = check_from(as_message_list(messages), 0, checked, Passes())
    return checked, repairs


def as_message_list(messages: Any) -> list[Any] | tuple[Any, ...]:
    """The message list itself (also from `{"messages": [...]}`), or the error saying why not."""
    if isinstance(messages, dict) and isinstance(messages.get("messages"), list):
        messages = messages["messages"]
    if not isinstance(messages, list | tuple):
        raise InvalidConversationError(
            f"expected a list of messages, got {type(messages).__name__}"
        )
    if not messages:
        raise InvalidConversationError("the conversation is empty: there is nothing to compact")
    return messages


class Passes:
    """Where the three passes over a message list stand, so that they can resume there.

    The passes: each message on its own; tool results paired with calls by position; reused
    call ids renamed. The last two only look back, so resuming them where they stopped gives
    what a run over the whole list gives; each pass keeps its repairs apart, so that they come
    out in the same order too.
    """

    def __init__(self) -> None:
        self.each: list[str] = []
        self.paired: list[str] = []
        self.renamed: list[str] = []
        self.pairing = Pairing()
        self.renaming = Renaming()

    def repairs(self) -> list[str]:
        return [*self.each, *self.paired, *self.renamed]


def check_from(
    messages: list[Any] | tuple[Any, ...],
    start: int,
    checked: list[Message],
    passes: Passes,
    snapshots: list[Snapshot] | None = None,
) -> list[str]:
    """Check `messages[start:]`, appending them to `checked` (which holds the first `start`
    already checked), and return every repair so far. Raises InvalidConversationError.

    Given `snapshots`, each message's snapshot (of the message as given) is appended to it,
    taken by the same walk that looks for lone surrogates (input/snapshot.py)."""
    for index in range(start, len(messages)):
        checked.append(_validate_one(messages[index], index, passes.each, snapshots))
    return resume_passes(checked, start, passes)


def resume_passes(checked: list[Message], start: int, passes: Passes) -> list[str]:
    """The passes that look back (pairing results with calls, renaming reused ids), resumed over
    `checked[start:]`; every repair so far. Raises InvalidConversationError."""
    # One loop feeding both: pairing at a message reads only that message, which renaming has
    # not reached yet, and renaming reads it as pairing left it, as two loops had it. (Renaming
    # raises nothing, so an error is pairing's, at the same index.)
    pairing, paired, renaming, renamed = (
        passes.pairing,
        passes.paired,
        passes.renaming,
        passes.renamed,
    )
    for index in range(start, len(checked)):
        pairing.feed(checked, index, paired)
        renaming.feed(checked, index, renamed)
    return passes.repairs()


def _validate_one(
    message: Any, index: int, repairs: list[str], snapshots: list[Snapshot] | None = None
) -> Message:
    if not isinstance(message, dict):
        raise InvalidConversationError(
            f"expected a message object, got {type(message).__name__}", index
        )
    role = message.get("role")
    if role not in ROLES:
        raise InvalidConversationError(
            f"unknown role {role!r}; expected one of {', '.join(ROLES)}", index
        )
    message = _replace_lone_surrogates(message, index, repairs, snapshots)
    copy: Message | None = None  # made by the first repair (`_writable`), then edited

    content = message.get("content")
    if "content" in message and not _content_ok(content):
        if isinstance(content, int | float | bool):
            copy = _writable(copy, message)
            copy["content"] = str(content)
            repairs.append(f"message {index}: numeric content converted to text")
        else:
            raise InvalidConversationError(
                f"content must be a string, null or a list of parts, got {type(content).__name__}",
                index,
            )
    elif isinstance(content, list) and any(isinstance(part, str) for part in content):
        copy = _writable(copy, message)
        copy["content"] = [
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
            copy = _writable(copy, message)
            copy["tool_calls"] = fixed_calls
        if not calls:
            copy = _writable(copy, message)
            del copy["tool_calls"]
            repairs.append(f"message {index}: empty tool_calls list removed")

    if role == "tool":
        call_id = message.get("tool_call_id")
        if call_id is not None and not isinstance(call_id, str):
            copy = _writable(copy, message)
            copy["tool_call_id"] = str(call_id)
            repairs.append(f"message {index}: tool_call_id converted to a string")
        if content is None:
            copy = _writable(copy, message)
            copy["content"] = ""
            repairs.append(f"message {index}: tool result with no content given empty text")
    return copy if copy is not None else message


def _writable(copy: Message | None, message: Message) -> Message:
    """The message's copy to repair: `copy` once made, else a new one (the input is never
    edited). A function, not a closure over the two: a closure made per message cost ~1 ms at
    5,000 messages, and nearly every message needs no copy."""
    return copy if copy is not None else dict(message)


def _replace_lone_surrogates(
    message: Message, index: int, repairs: list[str], snapshots: list[Snapshot] | None
) -> Message:
    """`message`, or a copy with every lone surrogate (in any string, keys included) replaced
    by U+FFFD and the count reported: the one repair that lets the text be written at all.
    Given `snapshots`, the message's snapshot is appended to it (the same walk)."""
    try:
        if snapshots is None:
            holds = _holds_surrogates(message)
        else:
            suspects: list[Any] = []  # what may hold one: strings not ASCII, tuples, odd keys
            snapshots.append(snapshot(message, suspects))
            holds = any(map(_holds_surrogates, suspects))
        if not holds:
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


# Tuples of types, not unions (`dict | list`): a union is built anew each time a check meets it,
# and these are met at every value of every message.
_NESTED = (dict, list, tuple)
_SEQUENCES = (list, tuple)
_PARTS = (dict, str)


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
            elif isinstance(value, _NESTED) and _holds_surrogates(value):
                return True
        return False
    if isinstance(node, _SEQUENCES):
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
        return all(isinstance(part, _PARTS) for part in content)
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
    note = arguments_note(fixed["function"]["arguments"], index, position)
    if note is not None:
        repairs.append(note)
    return fixed, changed


def arguments_note(arguments: str, index: int, position: int) -> str | None:
    """What the check says of arguments a provider would reject, or None when they are fine.

    They are kept as written (the user is debugging this conversation, and a guess at what was
    meant would corrupt it), but said aloud: a provider rejects the request.
    """
    problem = arguments_problem(arguments)
    if problem is None:
        return None
    return f"message {index}: tool_calls[{position}] arguments {problem}; kept as written"


def arguments_notes(messages: list[Message], start: int, notes: list[str]) -> None:
    """`arguments_note` of every call of `messages[start:]` (already checked), into `notes`."""
    for index in range(start, len(messages)):
        for position, call in enumerate(tool_calls(messages[index])):
            note = arguments_note(call["function"]["arguments"], index, position)
            if note is not None:
                notes.append(note)


def arguments_problem(arguments: str) -> str | None:
    """Why a provider would reject these tool-call arguments (completing "arguments ..."), or
    None when they are a JSON object, the only arguments every provider accepts."""
    if kept_object(arguments) is not None:
        return None  # an object, parsed earlier in this compress (its output checked again)
    try:
        value = loads_json(arguments)
    except (ValueError, RecursionError):
        # Only arguments the strict parse rejects can be NaN or Infinity that Python's accepts:
        # asked after it, not before, valid arguments are not searched for them as well.
        if has_non_finite_numbers(arguments):
            return "hold NaN or Infinity, which is not valid JSON"
        return "are not valid JSON"
    if not isinstance(value, dict):
        kind = {list: "array", str: "string", bool: "boolean"}.get(type(value), "number")
        return f"are a JSON {'null' if value is None else kind}, not an object"
    keep(arguments, value)  # Phase 1 reads it again in this compress (input/parsed_arguments)
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
