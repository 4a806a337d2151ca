"""The requests the cache model replays: the agent's own calls, and the same calls under a replay.

The agent's record: at each call that records usage, the context is the hidden part (system
prompt and tool schemas, one block whose size the calibration measured) followed by the messages
the file holds since the agent's last compaction. Block sizes are our counts scaled so the
request totals exactly the prompt the provider counted: the model is given the sizes the
provider saw and has to predict only how they split into cache reads, writes and fresh input.

A replay (our pipeline, a peer): the same calls, at the same times with the same outputs, but
each sees the context the replay had built by then — what a compaction left plus what came after,
or the masked view for observation masking. Sizes are our counts through the calibration
(provider ≈ hidden + ratio × counted). Each compaction the replay made adds its summary call:
the messages it summarised, sent fresh, and the summary as output.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from compaction.formats.conversation import Conversation, ModelCall
from compaction.lab.cost.cache import Block, Request
from compaction.lab.cost.calibration import Calibration, agent_context, segment_start
from compaction.lab.cost.ledger import timestamp_seconds
from compaction.lab.timeline import Timeline
from compaction.messages import Message, tool_calls
from compaction.tokens import TokenCounter

HIDDEN = "the agent's system prompt and tool schemas"
#: Injected turns after which an agent sends its conversation re-rendered, so that everything
#: after the system prompt is written to the cache again. Observed, not documented: in the
#: Claude Code 2.1.39 corpus session both background-task notifications were followed by a call
#: that read only the system prompt (21,460 tokens) and wrote the other 90K and 56K.
RERENDERS: dict[str, frozenset[str]] = {"claude-code": frozenset({"task-notification"})}
WARM = "the part of the system prompt cached before the session (by the agent's other sessions)"


def hidden_blocks(calibration: Calibration, warm: int) -> list[Block]:
    """The hidden part as blocks: what was already cached when the session began (`warm`, the
    first call's recorded cache read: the state the session found the cache in, which its own
    file cannot tell), then the rest. The agent marks a breakpoint after the last of them."""
    warm = min(max(warm, 0), calibration.hidden)
    blocks = [Block(WARM, warm)] if warm else []
    return [*blocks, Block(HIDDEN, calibration.hidden - warm)]


def warm_tokens(conversation: Conversation) -> int:
    """The first recorded call's cache read: the prefix already cached when the session began."""
    first = next((c for c in conversation.calls if c.input_tokens), None)
    return (first.cache_read_tokens or 0) if first is not None else 0


@dataclass
class Blocks:
    """Each message's content key, size and content-block count, computed once per message."""

    counter: TokenCounter
    _memo: dict[int, tuple[Message, str, int, int]] = field(default_factory=dict)

    def of(self, message: Message) -> tuple[str, int, int]:
        known = self._memo.get(id(message))
        if known is None or known[0] is not message:
            text = json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)
            key = hashlib.blake2b(text.encode(), digest_size=12).hexdigest()
            parts = 1
            if message.get("role") == "assistant":
                parts = max(len(tool_calls(message)) + bool(message.get("content")), 1)
            known = (message, key, self.counter.count_message(message), parts)
            self._memo[id(message)] = known
        return known[1], known[2], known[3]


def rerenders(format: str, count: int, marks: Mapping[int, str]) -> list[int]:
    """For each position of `count` messages, how many re-rendering turns (RERENDERS, by the
    kind the importer marked them with) came before it."""
    kinds = RERENDERS.get(format, frozenset())
    counts = [0]
    for index in range(count):
        counts.append(counts[-1] + (marks.get(index) in kinds))
    return counts


def _salted(blocks: list[tuple[str, int, int]], generation: int) -> list[tuple[str, int, int]]:
    if not generation:
        return blocks
    return [(f"{generation}|{key}", tokens, parts) for key, tokens, parts in blocks]


def _scaled(blocks: list[tuple[str, int, int]], target: int) -> list[Block]:
    """Blocks whose sizes are `blocks`' counts scaled to add up to `target` exactly."""
    counted = sum(tokens for _, tokens, _ in blocks)
    if not blocks:
        return []
    scale = target / counted if counted else 0.0
    out: list[Block] = []
    running = 0.0
    given = 0
    for key, tokens, parts in blocks:
        running += tokens * scale
        size = round(running) - given
        given += size
        out.append(Block(key, size, parts))
    return out


def record_requests(
    conversation: Conversation, calibration: Calibration, counter: TokenCounter
) -> list[Request]:
    """One request per call that records a prompt, as the agent sent it (see the module doc)."""
    maker = Blocks(counter)
    requests = []
    head = hidden_blocks(calibration, warm_tokens(conversation))
    generations = rerenders(conversation.format, len(conversation.messages), conversation.marks)
    for number, call in enumerate(c for c in conversation.calls if c.input_tokens):
        prompt = int(call.input_tokens or 0)
        segment = segment_start(conversation, call.position)
        offset = min(calibration.offsets.get(segment, calibration.hidden), prompt)
        hidden = min(calibration.hidden, offset)
        blocks = list(head) if hidden == calibration.hidden else [Block(HIDDEN, hidden)]
        system_end = len(blocks) - 1
        if offset > hidden:
            # The agent's context holds more than the file shows here (a compacted history the
            # file keeps encrypted, a fork's inherited one): one block of its own per context.
            blocks.append(Block(f"unseen context from message {segment}", offset - hidden))
        messages = [maker.of(m) for m in agent_context(conversation, call.position)]
        generation = generations[min(call.position, len(generations) - 1)]
        blocks += _scaled(_salted(messages, generation), prompt - offset)
        requests.append(
            Request(
                tuple(blocks),
                at=timestamp_seconds(call.timestamp),
                output_tokens=call.output_tokens or 0,
                breakpoints=(system_end, len(blocks) - 1),
                label=f"call {number}",
            )
        )
    return requests


def replay_contexts(
    messages: Sequence[Message], timeline: Timeline, wanted: set[int]
) -> dict[int, list[Message]]:
    """The replay's context after each step in `wanted` (what the model sees after message i):
    what the last compaction left plus what came after, or the masked view for a policy that
    masks at every call (observation masking)."""
    contexts: dict[int, list[Message]] = {}
    if timeline.trigger == "none":
        from compaction.lab.peers.observation_masking import ObservationMasking, masked

        window_turns = ObservationMasking().window_turns
        view: list[Message] = []
        turns: list[list[int]] = []
        for index, message in enumerate(messages):
            view.append(message)
            role = message.get("role")
            if role == "tool" and turns:
                turns[-1].append(index)
            elif role == "assistant":
                turns.append([])
                leaving = len(turns) - 1 - window_turns
                if leaving >= 0:
                    for result in turns[leaving]:
                        view[result] = masked(messages[result])
            if index in wanted:
                contexts[index] = list(view)
        return contexts
    context: list[Message] = []
    for step in timeline.steps:
        event = timeline.events[step.event] if step.event is not None else None
        if event is not None and not event.skipped and event.step == step.index:
            context = list(event.result.messages)
        else:
            context.append(messages[step.index])
        if step.index in wanted:
            contexts[step.index] = list(context)
    return contexts


def _summary_tokens(timeline: Timeline, counter: TokenCounter) -> dict[int, tuple[int, int]]:
    """For each step at which the replay compacted: (tokens summarised, summary tokens)."""
    out: dict[int, tuple[int, int]] = {}
    for event in timeline.compactions:
        result = event.result
        summary = result.summary.text if result.summary is not None else ""
        written = counter.count_message({"role": "user", "content": summary}) if summary else 0
        details = next((p.details for p in result.phases if p.name == "summarize"), {})
        middle = details.get("middle_tokens")
        summarised = (
            int(middle)
            if isinstance(middle, int)
            else max(event.tokens_before - event.tokens_after + written, 0)
        )
        if written or summarised:
            out[event.step] = (summarised, written)
    return out


def replay_requests(
    calls: Sequence[ModelCall],
    messages: Sequence[Message],
    timeline: Timeline,
    calibration: Calibration,
    counter: TokenCounter,
    warm: int = 0,
    format: str = "",
    marks: Mapping[int, str] | None = None,
) -> list[Request]:
    """The recorded calls under `timeline`'s policy, with a summary call per compaction
    (`format` and `marks`: the agent's and its importer's, for the turns after which the agent
    re-renders its context)."""
    maker = Blocks(counter)
    generations = rerenders(format, len(messages), marks or {})
    recorded = [c for c in calls if c.input_tokens]
    wanted = {min(max(c.position, 1), len(messages)) - 1 for c in recorded}
    contexts = replay_contexts(messages, timeline, wanted)
    summaries = _summary_tokens(timeline, counter)
    ratio = calibration.ratio
    requests: list[Request] = []
    done = -1  # the last step whose compaction is already in the requests
    for number, call in enumerate(recorded):
        position = min(max(call.position, 1), len(messages))
        at = timestamp_seconds(call.timestamp)
        for step in sorted(s for s in summaries if done < s < position):
            summarised, written = summaries[step]
            summary_block = Block(f"summary request at {step}", round(summarised * ratio))
            requests.append(
                Request(
                    (summary_block,),
                    at=at,
                    output_tokens=round(written * ratio),
                    label=f"summary at message {step}",
                )
            )
            done = step
        context = contexts[position - 1]
        blocks = hidden_blocks(calibration, warm)
        system_end = len(blocks) - 1
        generation = generations[min(position, len(generations) - 1)]
        for key, tokens, parts in _salted([maker.of(m) for m in context], generation):
            blocks.append(Block(key, round(tokens * ratio), parts))
        requests.append(
            Request(
                tuple(blocks),
                at=at,
                output_tokens=call.output_tokens or 0,
                breakpoints=(system_end, len(blocks) - 1),
                label=f"call {number}",
            )
        )
    return requests


def warm_prefix(calibration: Calibration, warm: int) -> list[Block]:
    """The blocks to seed the cache with: the part cached before the session began."""
    return [block for block in hidden_blocks(calibration, warm) if block.key == WARM]


#: The agent's summarisation instruction, appended to its context for the summary call.
INSTRUCTION_TOKENS = 600


def with_agent_summaries(
    conversation: Conversation,
    requests: list[Request],
    calibration: Calibration,
    counter: TokenCounter,
) -> list[Request]:
    """The record's requests with the agent's summary call modelled at each compaction.

    The session file rarely holds that call (Claude Code runs it as a subagent with its own
    file, Codex on its server). What it sends is known: the whole context it is about to compact
    with a summarisation instruction after it — Claude Code's `acompact` call read 166,758 of
    its 169,248 prompt tokens from the cache — and the summary comes back as output (its size
    from the recorded summary; 0 when the summary is encrypted)."""
    calls = [c for c in conversation.calls if c.input_tokens]
    out = list(requests)
    inserted = 0
    for compaction in sorted(conversation.compactions, key=lambda c: c.position):
        before = [i for i, call in enumerate(calls) if call.position < compaction.position]
        if not before:
            continue
        last = before[-1]
        prefix = requests[last]
        following = requests[last + 1] if last + 1 < len(requests) else None
        summary = compaction.summary or ""
        written = counter.count_message({"role": "user", "content": summary}) if summary else 0
        blocks = (*prefix.blocks, Block(f"summarise at {compaction.position}", INSTRUCTION_TOKENS))
        request = Request(
            blocks,
            at=following.at if following is not None else prefix.at,
            output_tokens=round(written * calibration.ratio),
            breakpoints=(prefix.breakpoints[0] if prefix.breakpoints else 0, len(blocks) - 1),
            label=f"summary at message {compaction.position}",
        )
        out.insert(last + 1 + inserted, request)
        inserted += 1
    return out
