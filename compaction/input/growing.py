"""`validate_messages` without re-checking what was already checked and has not changed.

Two callers check the same messages again and again: an agent, which appends a message and asks
`should_compress` after each (`GrowingConversation`, one per Compactor), and a re-run of the same
conversation with other budgets, where each run is a new Compactor given the same
CompactionCache (`check_once`, one conversation per cache; the command line tells it, with
`remember_checked`, that its importer's messages are checked already). Both reuse the earlier
result only for messages that are the same objects *and* still equal to a snapshot taken when
they were checked, so an edit in place is always seen.

Both keep structural copies, which `==` compares with the messages in C (input/snapshot.py),
taken by the check's own walk of each message. (The cache's check kept flat fingerprints, a
little cheaper to take, but taking them again to compare cost every re-run ~7 ms at 5,000
messages, the copies' comparison ~0.5 ms.)
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Hashable
from typing import Any

from compaction.cache import CompactionCache, current_cache
from compaction.errors import InvalidConversationError
from compaction.input.checks import (
    Passes,
    arguments_notes,
    as_message_list,
    check_from,
    resume_passes,
    validate_messages,
)
from compaction.input.snapshot import Snapshot, snapshot
from compaction.messages import Message
from compaction.tokens import TokenCounter
from compaction.tokens.tally import TokenTally


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
        through `check_once`, which remembers one conversation in the running compaction's cache
        (a re-run with other budgets is a new Compactor), and nothing is reused from this object.
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

    def adopt(self, messages: list[Message]) -> bool:
        """Remember `messages` as checked without checking each one again: a compaction's own
        output, which an agent takes as its context and appends to. Its messages are checked
        ones or were built by the phases, and `validate_messages` changes nothing in such a list
        (tests hold compress to that): it only says again which arguments a provider would
        reject, and that is said here too. The passes that look back run over them as well, so
        that what is appended next is paired and renamed against them. If those passes would
        repair anything, nothing is adopted (False) and the next call checks every message."""
        self._reset()
        passes = self._passes
        try:
            self._checked.extend(messages)
            arguments_notes(self._checked, 0, passes.each)
            resume_passes(self._checked, 0, passes)
            repaired = bool(passes.paired or passes.renamed)
        except (InvalidConversationError, KeyError, TypeError):  # not a checked conversation
            repaired = True
        if repaired or not self._remember:
            self._reset()
            return False
        self._inputs.extend(messages)
        self._snapshots.extend(map(snapshot, messages))
        return True

    def remembers_start_of(self, messages: list[Any] | tuple[Any, ...]) -> bool:
        """True when `messages` begin with every message this object remembers, unchanged."""
        return self._unchanged_prefix(messages) > 0

    def forget(self) -> None:
        """Drop what was remembered (and the copies that kept it checkable)."""
        self._reset()

    def holds(self, messages: Any) -> bool:
        """True when `messages` are exactly the messages last checked, all unchanged."""
        return (
            isinstance(messages, list | tuple)
            and len(messages) > 0
            and self._unchanged_prefix(messages) == len(messages)
        )

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
            and all(taken == copy for copy, taken in self._repaired)
        ):
            return known
        return 0

    def _extend(self, messages: list[Any] | tuple[Any, ...], start: int) -> list[str]:
        checked = self._checked
        # Snapshots are taken by the check's own walk of each message (input/snapshot.py).
        taken: list[Snapshot] | None = [] if self._remember else None
        repairs = check_from(messages, start, checked, self._passes, taken)
        if taken is not None:
            new = messages[start:]
            self._inputs.extend(new)
            self._snapshots.extend(taken)
            self._repaired.extend(
                (copy, snapshot(copy))
                for copy, given in zip(checked[start:], new, strict=True)
                if copy is not given
            )
        return repairs


class LastConversation:
    """The conversation a one-shot compress saw last, with its messages' token counts per
    counter: kept in a CompactionCache (`cache.conversation`), so a re-run with other budgets —
    each run a new Compactor given the same cache — checks and counts nothing again. Remembered
    from the first sighting by the snapshots its check's walk takes, so the first re-run reuses
    the check as the later ones do. One conversation at a time: it never grows with their number."""

    MAX_COUNTERS = 4  # a Compactor with its own counter each time must not grow this without end

    def __init__(self) -> None:
        self.conversation = GrowingConversation()
        # id(counter) -> its tally of the conversation (counts made on demand, kept for re-runs)
        self.counts: dict[int, tuple[TokenCounter, TokenTally]] = {}
        self.generation = 0  # bumped whenever the remembered messages start over
        #: What the phases work out of the conversation that no budget changes (Phase 1's plan:
        #: phases/prune.py), kept for a re-run: a new one whenever the conversation changes, and
        #: handed out only with the conversation's own tally (`memo_for`).
        self.memo: dict[Hashable, Any] = {}
        self.lock = threading.Lock()  # Streamlit runs sessions in threads

    def check(self, messages: Any) -> tuple[list[Message], list[str], int]:
        """(checked, repairs, how many were reused); the messages are remembered from now on.
        The caller holds `lock`."""
        checked, repairs, reused = self.conversation.check(messages)
        if reused == 0:  # remembered afresh: no earlier count holds
            self.counts.clear()
            self.generation += 1
        if reused != len(checked):  # not the very conversation the memo was made of
            self.memo = {}
        return checked, repairs, reused


def _last(cache: CompactionCache | None) -> LastConversation | None:
    owner = cache if cache is not None else current_cache()
    if owner is None:
        return None
    if not isinstance(owner.conversation, LastConversation):
        owner.conversation = LastConversation()
    return owner.conversation


def check_once(
    messages: Any, cache: CompactionCache | None = None
) -> tuple[list[Message], list[str], int]:
    """`validate_messages(messages)` (plus how many messages were reused), reusing the last
    conversation checked this way with this cache (or the running compaction's) when its
    messages come back unchanged; without a cache, a check in full that remembers nothing."""
    last = _last(cache)
    if last is None:
        checked, repairs = validate_messages(messages)
        return checked, repairs, 0
    with last.lock:
        return last.check(messages)


def check_and_count_once(
    messages: Any, counter: TokenCounter, cache: CompactionCache | None = None
) -> tuple[list[Message], list[str], TokenTally]:
    """(checked messages, repairs, each one's tokens) as `validate_messages` gives them and as
    a TokenTally counts them (on demand: tokens/tally.py), reusing the last conversation's check
    and tally while its messages come back unchanged (a longer conversation reuses the counts
    of the messages it begins with): what one run counted, a re-run does not count again."""
    last = _last(cache)
    if last is None:
        checked, repairs = validate_messages(messages)
        return checked, repairs, TokenTally(checked, counter)
    with last.lock:
        checked, repairs, reused = last.check(messages)
        entry = last.counts.get(id(counter))
        earlier = entry[1] if entry is not None and entry[0] is counter else None
        if earlier is not None and reused == len(earlier) == len(checked):
            return checked, repairs, earlier  # the same conversation: the same tally
        known = earlier.known()[:reused] if earlier is not None else []
        tally = TokenTally(checked, counter, known + [None] * (len(checked) - len(known)))
        if id(counter) not in last.counts and len(last.counts) >= last.MAX_COUNTERS:
            del last.counts[next(iter(last.counts))]  # the counter stored first
        last.counts[id(counter)] = (counter, tally)
    return checked, repairs, tally


def remember_checked(messages: list[Message], cache: CompactionCache) -> bool:
    """Tell `cache` that `messages` are already checked: an importer's output, which has just
    passed `validate_messages` (and to which validating again changes nothing), about to be
    compressed once with this cache, as the command line does. The compress then checks none of
    them again (~16 us a message). False, and nothing remembered, if they need a repair."""
    last = _last(cache)
    assert last is not None
    with last.lock:
        last.counts.clear()
        last.generation += 1
        last.memo = {}
        return last.conversation.adopt(messages)


def memo_for(tally: TokenTally, cache: CompactionCache | None = None) -> dict[Hashable, Any] | None:
    """Where phases keep what they work out of the conversation `tally` counts, for a re-run of
    it with other budgets: the memo of the conversation the cache remembers, when `tally` is
    that conversation's (check_and_count_once hands out a kept tally only for messages it found
    unchanged); else None (nothing is kept)."""
    owner = cache if cache is not None else current_cache()
    last = owner.conversation if owner is not None else None
    if not isinstance(last, LastConversation):
        return None
    with last.lock:
        if any(kept is tally for _, kept in last.counts.values()):
            return last.memo
    return None
