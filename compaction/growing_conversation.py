"""`validate_messages` without re-checking what was already checked and has not changed.

Two callers check the same messages again and again: an agent, which appends a message and asks
`should_compress` after each (`GrowingConversation`, one per Compactor), and a re-run of the same
conversation with other budgets, where each run is a new Compactor (`check_once`, one per
process). Both reuse the earlier result only for messages that are the same objects *and* still
equal to a structural copy taken when they were checked, so an edit in place is always seen.
"""

from __future__ import annotations

import operator
import threading
from typing import Any

from compaction.message_input import Passes, as_message_list, check_from
from compaction.messages import Message


class GrowingConversation:
    """`validate_messages` for a conversation that grows by appending, as an agent's does.

    An agent asks `should_compress` after every message it appends; checking the whole list
    each time made the loop quadratic (every call re-scanned every earlier message for lone
    surrogates and re-parsed every tool call's arguments). `check` gives exactly what
    `validate_messages` gives, but re-checks only the messages after the longest prefix it has
    already checked — and a message counts as already checked only when it is the same object
    *and* still equal to a structural copy taken when it was checked, so an edit in place (a
    streamed reply growing, a call appended) is seen and re-checked. The three passes resume
    where they stopped (see `message_input.Passes`).
    """

    def __init__(self, remember: bool = True) -> None:
        self._remember = remember  # False: a one-shot check, no copies kept for the next call
        self._reset()

    def _reset(self) -> None:
        self._inputs: list[Any] = []  # the messages as given (kept alive: identity is compared)
        self._snapshots: list[Any] = []  # structural copies of them, leaves shared
        self._checked: list[Message] = []
        # Repaired messages are copies that this object hands out again: a caller that edits
        # one in place must not get its edit back as a check's result (see _unchanged_prefix).
        self._repaired: list[tuple[Message, Any]] = []
        self._passes = Passes()

    def check(self, messages: Any, remember: bool = True) -> tuple[list[Message], list[str], int]:
        """(checked messages, repairs, how many leading messages were reused unchanged).

        `remember=False` (a compress) reuses what an earlier call remembered but remembers
        nothing new here: when more than the remembered prefix must be checked, the check goes
        through `check_once`, which remembers one conversation for the whole process (a re-run
        with other budgets is a new Compactor), and nothing is reused from this object.
        """
        messages = as_message_list(messages)
        reused = self._unchanged_prefix(messages)
        if not remember and reused < len(messages):
            checked, repairs, _ = check_once(messages)
            return checked, repairs, 0
        if reused == 0:
            self._reset()  # a new conversation, or an earlier message changed: start over
        try:
            repairs = self._extend(messages, reused)
        except BaseException:
            self._reset()  # half-extended state would lie to the next call
            raise
        return list(self._checked), repairs, reused

    def _unchanged_prefix(self, messages: list[Any] | tuple[Any, ...]) -> int:
        """len(checked) when every checked message is still there, unchanged; else 0."""
        known = len(self._inputs)
        if not known or len(messages) < known:
            return 0
        # Both comparisons run in C: `is` per message, then `==` against the copy, which stops
        # at each shared leaf (a string is compared by identity first) and so costs the
        # structure, not the text. (Equal numbers of another type, 1 for 1.0, count as the same.)
        if (
            all(map(operator.is_, self._inputs, messages))
            and all(map(operator.eq, self._snapshots, messages))
            and all(copy == snapshot for copy, snapshot in self._repaired)
        ):
            return known
        return 0

    def _extend(self, messages: list[Any] | tuple[Any, ...], start: int) -> list[str]:
        checked = self._checked
        repairs = check_from(messages, start, checked, self._passes)
        if self._remember:
            new = messages[start:]
            self._inputs.extend(new)
            self._snapshots.extend(_structure_copy(message) for message in new)
            self._repaired.extend(
                (copy, _structure_copy(copy))
                for copy, given in zip(checked[start:], new, strict=True)
                if copy is not given
            )
        return repairs


def _structure_copy(node: Any) -> Any:
    """`node` with every dict and list copied and every other value shared: equal to the node
    until someone edits one of its dicts or lists in place."""
    if isinstance(node, dict):
        return {key: _structure_copy(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_structure_copy(item) for item in node]
    return node


# The conversation a one-shot check saw last, in this process. A sweep, the app's sliders or a
# user's second try compact the same messages again with other budgets, each time through a new
# Compactor; checking them again gave the same result every time. One conversation is kept (its
# messages stay alive, plus a structural copy of their dicts and lists: about 1% of a cold
# compress to take, and the check it saves is about 3%, on every later run).
_LAST_CHECKED = GrowingConversation()
_LAST_CHECKED_LOCK = threading.Lock()  # Streamlit runs sessions in threads


def check_once(messages: Any) -> tuple[list[Message], list[str], int]:
    """`validate_messages(messages)` (plus how many messages were reused), reusing the last
    conversation checked this way in this process when its messages come back unchanged."""
    with _LAST_CHECKED_LOCK:
        return _LAST_CHECKED.check(messages)
