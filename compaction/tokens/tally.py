"""Each message's tokens, counted exactly when asked, bounded until then: certified decisions.

A compaction's decisions each depend on a few counts: where the tail's token walk stops (the
last messages' counts), whether the context is over the threshold or the window (a sum against
a value), whether the summary paid for itself (the input's total against the output's), the
summary budget (the middle's total, clamped). Tokenising the whole input to make them costs more
than everything else a compaction does; most of them are settled by bounds (tokens/bounds.py)
long before every message is counted.

`TokenTally` is a `Sequence[int]` of the messages' exact counts, computed on first access (so a
walk from the end counts only what it walks over) and remembered, with:

- `at_least(value, indices)`: is the sum over `indices` at least `value`? Decided from what is
  known: exact counts where counted, else each message's bounds; while the bounds straddle the
  value, the messages whose bounds are widest are counted exactly (the fewest encodings that
  settle it), so the answer is always the one exact counts give.
- `deferred_total(...)`: the exact sum as a `Deferred` (compaction/deferred.py), for the figures
  a result reports and no decision needs: counted when someone reads them.
- `over(messages, changed)`: the tally of a phase's output, sharing the counts of the messages
  it left unchanged.

A counter this module knows no bounds for (a caller's own TokenCounter) counts each message
exactly when its bound is asked: decisions stay exact, only not cheaper.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from operator import itemgetter
from typing import overload

from compaction.config import CompactionConfig, whole_tokens
from compaction.deferred import Deferred
from compaction.messages import Message
from compaction.tokens import TokenCounter, count_each
from compaction.tokens.bounds import (
    LONGEST_TOKEN_BYTES,
    MESSAGE_OVERHEAD,
    TextBounds,
    bpe_bounds,
    bpe_message_bounds,
    bpe_message_lower,
    rough_bounds,
)

#: The first batch of messages counted to settle a straddling decision; each next one doubles.
FIRST_BATCH = 16
#: A decision over at least this many messages unknown first tries the pieces of its long ones
#: (`TokenTally._long_messages_reach`); below it, bounding each message costs next to nothing.
LONG_FIRST_FROM = 64
#: The messages raised by their pieces (bytes of the texts the counting rule counts): shorter
#: ones raise a lower sum by little more than their overhead. At 5,000 generated messages, 256
#: left a re-run's 80,000-token decision short of its value (76,527) after raising every longer
#: message, so that it bounded every message besides; 64 raised more than settling needed.
SIZEABLE_BYTES = 128
#: The try reads at most this many bytes of long text per token missing before it gives up.
GIVE_UP_FACTOR = 16


def text_bounds_for(counter: TokenCounter) -> TextBounds | None:
    """The bounds of one text's count for this counter: proven for our exact encodings, the
    count itself for the rough one; None for any other counter."""
    name = getattr(counter, "name", "")
    if name == "rough" and type(counter).__name__ == "RoughCounter":
        return rough_bounds
    longest = longest_token_bytes_for(counter)
    return bpe_bounds(longest) if longest is not None else None


def longest_token_bytes_for(counter: TokenCounter) -> int | None:
    """The longest token of this counter's encoding, in bytes, when it is one of our exact
    byte-level BPE counters; else None."""
    if getattr(counter, "name", "") != "tiktoken":
        return None
    return LONGEST_TOKEN_BYTES.get(str(getattr(counter, "encoding_name", "")))


class TokenTally(Sequence[int]):
    """The counts of `messages` by `counter`, each counted on first access (see the module)."""

    def __init__(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        exact: list[int | None] | None = None,
        bounds: list[tuple[int, int] | None] | None = None,
    ) -> None:
        self.messages = messages
        self.counter = counter
        self._exact: list[int | None] = exact if exact is not None else [None] * len(messages)
        # Each message's bounds once worked out (a caller that follows a growing conversation
        # passes the same lists on every call, so each message is bounded once).
        self._bounds: list[tuple[int, int] | None] = (
            bounds if bounds is not None else [None] * len(self._exact)
        )
        # The rough counter's bound is its count, and computing it costs a length: a decision
        # counts every message it must look at, in one batch, rather than bounding them.
        self._counts_cheaply = text_bounds_for(counter) is rough_bounds
        # Our exact encodings: each message bounded in one pass (bounds.bpe_message_bounds).
        # Any other counter (the rough one, a caller's own) has its count for its bound.
        self._longest_token_bytes = longest_token_bytes_for(counter)
        # A phase's output tally (`over`) tells the tally it came from what it learns of the
        # messages both share: that one is kept for a re-run (input/growing.py), this one not.
        self._parent: TokenTally | None = None
        self._changed: Collection[int] = ()
        #: The messages whose lower bound was raised by their pieces (`_raise_lower_bounds`).
        self._raised: set[int] = set()

    def _learned(
        self, index: int, count: int | None, bounds: tuple[int, int] | None, raised: bool = False
    ) -> None:
        parent = self._parent
        if parent is not None and index not in self._changed:
            if count is not None:
                parent._exact[index] = count
            if bounds is not None:
                parent._bounds[index] = bounds
            if raised:
                parent._raised.add(index)

    # -- the sequence: exact counts, on access --------------------------------------------------

    def __len__(self) -> int:
        return len(self._exact)

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> list[int]: ...

    def __getitem__(self, index: int | slice) -> int | list[int]:
        if isinstance(index, slice):
            positions = range(*index.indices(len(self._exact)))
            self.count_exactly(positions)
            return [self._exact[i] for i in positions]  # type: ignore[misc]
        count = self._exact[index]
        if count is None:
            count = self._exact[index] = self.counter.count_message(self.messages[index])
            self._learned(index, count, None)
        return count

    def __iter__(self) -> Iterator[int]:
        self.count_exactly(range(len(self._exact)))
        return iter(self._exact)  # type: ignore[arg-type]

    def count_exactly(self, positions: Iterable[int]) -> None:
        """Count exactly every message of `positions` not yet counted, as one batch (a large
        batch is encoded on every core)."""
        exact = self._exact
        missing = [i for i in positions if exact[i] is None]
        if not missing:
            return
        counts = count_each(self.counter, [self.messages[i] for i in missing])
        for position, count in zip(missing, counts, strict=True):
            exact[position] = count
            if self._parent is not None:
                self._learned(position, count, None)

    def known(self) -> list[int | None]:
        """Each message's count where already counted, else None (a copy)."""
        return list(self._exact)

    # -- sums: exact, deferred, decided -------------------------------------------------------

    def total(self, positions: Iterable[int] | None = None) -> int:
        """The exact sum over `positions` (every message by default): counts what it must."""
        chosen = range(len(self._exact)) if positions is None else list(positions)
        self.count_exactly(chosen)
        exact = self._exact
        return sum(exact[i] for i in chosen)  # type: ignore[misc]

    def deferred_total(self, positions: Iterable[int] | None = None) -> Deferred[int]:
        """`total(positions)`, computed when first read."""
        chosen = None if positions is None else list(positions)
        return Deferred(lambda: self.total(chosen))

    def bounds(self, index: int) -> tuple[int, int]:
        """(lower, upper) of message `index`'s count; (count, count) once it is counted."""
        count = self._exact[index]
        if count is not None:
            return count, count
        found = self._bounds[index]
        if found is None:
            longest = self._longest_token_bytes
            if longest is None:  # no bounds for this counter: its count is the bound
                count = self[index]
                return count, count
            # Without the counter's memory of texts: a message not counted in this tally is
            # seldom counted there, and looking its texts up would hash each of them.
            found = self._bounds[index] = bpe_message_bounds(self.messages[index], longest)
            if self._parent is not None:
                self._learned(index, None, found)
        return found

    def at_least(self, value: int, positions: Iterable[int] | None = None) -> bool:
        """sum(counts over `positions`) >= value, decided as exact counts decide it."""
        exact = self._exact
        if positions is None or (isinstance(positions, range) and positions.step == 1):
            # A run of messages (nearly every decision): when all are counted, C adds them up.
            run = exact if positions is None else exact[positions.start : positions.stop]
            if None not in run:
                return sum(run) >= value  # type: ignore[arg-type]
        chosen = range(len(exact)) if positions is None else positions
        lower = 0
        unknown: list[int] = []
        for index in chosen:
            count = exact[index]
            if count is None:
                unknown.append(index)
            else:
                lower += count
        # Every message costs its overhead at least: often that settles it without a look.
        if lower + MESSAGE_OVERHEAD * len(unknown) >= value:
            return True
        if self._counts_cheaply:
            self.count_exactly(unknown)
            return lower + sum(map(exact.__getitem__, unknown)) >= value  # type: ignore[arg-type]
        if (
            self._longest_token_bytes is not None
            and len(unknown) >= LONG_FIRST_FROM
            and self._long_messages_reach(unknown, lower, value)
        ):
            return True
        upper = lower
        widths: list[tuple[int, int, int, int]] = []
        known_bounds, messages = self._bounds, self.messages
        longest = self._longest_token_bytes
        learns = self._parent is not None
        for index in unknown:
            found = known_bounds[index]  # bounded already (a re-run): no call for it
            if found is None:
                if longest is None:
                    found = self.bounds(index)
                else:
                    # `bounds(index)` inlined: a cold decision over a middle bounds thousands.
                    found = known_bounds[index] = bpe_message_bounds(messages[index], longest)
                    if learns:
                        self._learned(index, None, found)
            low, high = found
            lower += low
            upper += high
            if high > low:
                widths.append((high - low, index, low, high))
        if lower >= value:
            return True
        if upper < value:
            return False
        # The widest first: the fewest counts that settle it. By width alone (equal widths stay
        # in message order): comparing whole tuples cost 0.7 ms at 4,800 messages, this 0.2.
        widths.sort(key=itemgetter(0), reverse=True)
        if self._longest_token_bytes is not None:
            lower = self._raise_lower_bounds(widths, lower, value)
            if lower >= value:
                return True
            widths.sort(key=itemgetter(0), reverse=True)
        start, size = 0, FIRST_BATCH
        rose = fell = 0  # how far the counts so far raised the lower sum and lowered the upper
        while True:
            batch = widths[start : start + size]
            start += size
            self.count_exactly(index for _, index, _, _ in batch)
            for _, index, low, high in batch:
                count = exact[index]
                assert count is not None
                lower += count - low
                upper += count - high
                rose += count - low
                fell += high - count
            if lower >= value:
                return True
            if upper < value:
                return False
            size = _next_batch(
                widths, start, size, rose / (rose + fell), value - lower, upper - value
            )

    def _long_messages_reach(self, unknown: list[int], lower: int, value: int) -> bool:
        """True when the `unknown` messages reach `value` from `lower`, read in order, each
        bounded (bounds.bpe_message_bounds) and each long one (SIZEABLE_BYTES of text) raised by
        its pieces (bounds.bpe_message_lower), every message not read yet counted at its
        overhead: a decision that the long messages settle, settled without bounding every
        message. A middle of 4,806 pruned messages reached the summary budget's 40,000 tokens
        this way after reading 1,342 of them and raising 431, where bounding each one first
        (a call each, then the pieces of the widest) cost ~3x more.

        It stops as soon as the sum is reached, or once it has read GIVE_UP_FACTOR bytes of
        long text per token missing at the start (~6 characters raise the lower sum by one
        token on code and prose; a text without whitespace raises it by less). In whatever
        order the long messages are read, their pieces cost about the same per token they
        raise. What it bounded stays known: the full decision after it reads those bounds, and
        raises none of them again."""
        longest = self._longest_token_bytes
        assert longest is not None
        messages, known_bounds, raised = self.messages, self._bounds, self._raised
        learns = self._parent is not None
        floor = lower + MESSAGE_OVERHEAD * len(unknown)  # each message costs its overhead
        budget = GIVE_UP_FACTOR * (value - floor)
        for index in unknown:
            found = known_bounds[index]
            if found is None:
                message = messages[index]
                found = known_bounds[index] = bpe_message_bounds(message, longest)
                low, high = found
                if high - MESSAGE_OVERHEAD >= SIZEABLE_BYTES:
                    found = (max(low, bpe_message_lower(message, longest)), high)
                    known_bounds[index] = found
                    raised.add(index)
                    budget -= high
                if learns:
                    self._learned(index, None, found, raised=index in raised)
            floor += found[0] - MESSAGE_OVERHEAD
            if floor >= value:
                return True
            if budget <= 0:
                return False
        return False

    def _raise_lower_bounds(
        self, widths: list[tuple[int, int, int, int]], lower: int, value: int
    ) -> int:
        """Before a straddling decision counts anything exactly: raise the lower bounds of the
        widest messages by their pieces (bounds.bpe_message_lower, ~1/16 of counting them) until
        the lower sum reaches `value` or none is left; `widths` (widest first) are updated in
        place, and the new lower sum returned. Bytes / 128 is a loose floor (~4% of the count
        on code and prose, ~70% by pieces): a middle of 5,000 generated messages was counted
        402 messages deep to show that it reached 80,000 tokens, which its pieces show alone."""
        longest = self._longest_token_bytes
        assert longest is not None
        raised, known_bounds, messages = self._raised, self._bounds, self.messages
        for position, (_, index, low, high) in enumerate(widths):
            if index in raised:
                continue
            better = bpe_message_lower(messages[index], longest)
            raised.add(index)
            if better > low:
                known_bounds[index] = (better, high)
                widths[position] = (high - better, index, better, high)
                lower += better - low
            if self._parent is not None:
                self._learned(index, None, known_bounds[index], raised=True)
            if lower >= value:
                break
        return lower

    # -- the tally of a phase's output ----------------------------------------------------------

    def over(self, messages: Sequence[Message], changed: Collection[int]) -> TokenTally:
        """The tally of `messages`, a phase's output with the same positions as these messages,
        where only the positions in `changed` differ: the others keep their counts."""
        exact = list(self._exact)
        for index in changed:
            exact[index] = None
        bounds = list(self._bounds)
        for index in changed:
            bounds[index] = None
        tally = TokenTally(messages, self.counter, exact, bounds)
        tally._parent, tally._changed = self, changed
        tally._raised = self._raised.difference(changed)
        return tally


def _next_batch(
    widths: list[tuple[int, int, int, int]],
    start: int,
    size: int,
    rise_share: float,
    to_rise: int,
    to_fall: int,
) -> int:
    """How many of the next widest messages (`widths[start:]`) to count, after a batch of `size`
    left the decision open: about as many as settle it if each closes its bounds' gap as the
    ones counted so far did (`rise_share` of its width raising the lower sum by `to_rise`, the
    rest lowering the upper sum to below the value, `to_fall` away), and a tenth more. Doubling
    each batch (as before) counted up to twice what a decision needed: on 5,000 generated
    messages the summary budget's decision counted 112 messages, where ~65 settle it. At least
    FIRST_BATCH, at most twice the last batch, so the rounds stay few."""
    need_rise, need_fall = to_rise * 1.1, (to_fall + 1) * 1.1
    limit = min(len(widths), start + 2 * size)
    covered = 0
    end = start
    while end < limit:
        covered += widths[end][0]
        end += 1
        if covered * rise_share >= need_rise or covered * (1 - rise_share) >= need_fall:
            break
    return max(end - start, FIRST_BATCH)


def total_of(tokens: Sequence[int]) -> int | Deferred[int]:
    """The sum of `tokens`: deferred for a tally (a figure to report), else computed."""
    if isinstance(tokens, TokenTally):
        return tokens.deferred_total()
    return sum(tokens)


def later_if(lazy: bool, compute: Callable[[], int]) -> int | Deferred[int]:
    """`compute()` now, or deferred when `lazy` (the counts it reads are a tally's)."""
    return Deferred(compute) if lazy else compute()


def at_least(tokens: Sequence[int], value: int, positions: Iterable[int] | None = None) -> bool:
    """sum(tokens over positions) >= value: a tally decides it from bounds, a list adds up."""
    if isinstance(tokens, TokenTally):
        return tokens.at_least(value, positions)
    chosen: Iterable[int] = range(len(tokens)) if positions is None else positions
    return sum(tokens[i] for i in chosen) >= value


def summary_budget(
    config: CompactionConfig, tokens: Sequence[int], positions: Sequence[int]
) -> int:
    """`config.summary_budget(the middle's tokens)`, the middle being `positions` of `tokens`:
    the clamp settles it whenever the middle is surely above the point where the budget reaches
    its maximum (or surely below where it leaves its minimum), so only a middle in between is
    counted exactly."""
    if not isinstance(tokens, TokenTally):
        return config.summary_budget(sum(tokens[i] for i in positions))
    ratio = config.summary_ratio
    reaches_max = smallest_where(lambda m: whole_tokens(m * ratio) >= config.summary_max_tokens)
    if tokens.at_least(reaches_max, positions):
        return config.summary_budget(reaches_max)  # the maximum, as any larger middle gives
    leaves_min = smallest_where(lambda m: whole_tokens(m * ratio) > config.summary_min_tokens)
    if not tokens.at_least(leaves_min, positions):
        return config.summary_min_tokens
    return config.summary_budget(tokens.total(positions))


def smallest_where(holds: Callable[[int], bool], start: int = 0) -> int:
    """The smallest whole number m >= start for which `holds(m)`, which must be monotone (false
    up to some m, true from there on) and true for some m."""
    low, high = start, max(start, 1)
    while not holds(high):
        low, high = high, high * 2
    while low < high:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle + 1
    return low
