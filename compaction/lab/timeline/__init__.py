"""Replay a whole session as the agent lived it, with automatic compaction at the threshold.

A single compaction says little about an agent's life: what matters is the sawtooth — the context
filling up, being compacted, filling again — and what each successive summary kept. `simulate`
replays a conversation message by message through ONE `Compactor` (so the second compaction is an
iterative update of the first summary, and anti-thrash counts across events) and records the
context size after every step and every compaction event.

When compaction may run (the rule, documented because it decides where events land):
- the context has reached `threshold_tokens`, and
- the step is a point where the agent would call the model: the next message of the transcript
  is not a tool result. While a tool group's results are still arriving, the agent does not call
  the model, so it does not compact either; it compacts once the group's last result is in.
  (A call whose result never comes does not block compaction: the next non-tool message ends the
  group, and Phase 5 stubs the missing result.)
- Over the window, compaction runs even while anti-thrash suspends it (`forced` on the event):
  the provider would reject the call, and an agent compacts on that error. Every compaction that
  runs ends with Fit, so no turn after one is over the window — unless the system prompt and the
  latest request alone exceed it, which the event says (`request_exceeds_window`, `cannot_fit`).

`simulate_peer` replays the same way with a peer's trigger and policy (lab/peers/): when would
hermes have compacted, when would OpenHands, and what did each leave? See its docstring.

Cost is linear in the session plus the compactions: a running token total is kept with the shared
cached counter (only the appended message is counted; after a compaction the total is the
result's `tokens_after`). Once anti-thrash suspends automatic compaction, the Compactor would skip
at every later step; those steps are folded into the one skipped event (its `attempts`) without
calling the Compactor again. Consecutive skips for the same reason are folded the same way.

The parts: `records` (Step, TimelineEvent, Timeline, and where a compaction may land),
`replay` (`simulate`) and `peer_replay` (`simulate_peer`).
"""

from compaction.lab.timeline.peer_replay import RETRY_GROWTH, simulate_peer
from compaction.lab.timeline.records import (
    EFFECTIVE,
    FALLBACK,
    INEFFECTIVE,
    OUTCOMES,
    SKIPPED,
    Step,
    Timeline,
    TimelineEvent,
    conversation_messages,
    may_compact_after,
)
from compaction.lab.timeline.replay import simulate

__all__ = [
    "EFFECTIVE",
    "FALLBACK",
    "INEFFECTIVE",
    "OUTCOMES",
    "RETRY_GROWTH",
    "SKIPPED",
    "Step",
    "Timeline",
    "TimelineEvent",
    "conversation_messages",
    "may_compact_after",
    "simulate",
    "simulate_peer",
]
