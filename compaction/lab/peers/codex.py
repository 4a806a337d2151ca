"""codex: OpenAI Codex CLI's local compaction (codex-rs `compact.rs`), from ../shared/spec/PEERS.md.

The policy, as PEERS.md describes it:

- Trigger: `model_auto_compact_token_limit`: by version 256,000 tokens fixed, or 90% of the
  window. The default here is 90% of the window (`limit_ratio`); `fixed_limit` > 0 sets the fixed
  limit instead.
- The new history: the initial context rebuilt (the instructions, AGENTS.md, the environment),
  then **every earlier real user message verbatim**, taken newest first within
  `user_budget_tokens` 20,000 tokens (the oldest one that overflows is truncated to what is left;
  older ones are not kept), in their original order, then the summary as a user message that
  opens with a handoff preamble. **Every assistant message, tool call and tool result is
  dropped** (they reach the new context only through the summary), so orphans cannot occur.
- In a transcript the initial context is the opening system / developer messages and the user
  messages Codex injects itself (`<environment_context>`, `<user_instructions>`, the AGENTS.md
  block); being rebuilt, each kind appears once, its latest copy. Earlier summaries are no real
  user messages: they are summarised again.
- If the compaction request overflows, Codex drops the oldest history item and retries: our
  summariser has no request limit, so this never happens here.
- This is Codex's local compaction, which is where Codex compacts now: the maintainers say it
  "moved locally using the same endpoint as normal turns" (openai/codex #24923, PEERS.md). The
  remote v2 path (PR #22809: a `compaction_trigger` item sent, an encrypted `compaction` item
  returned, the `compacted` record of a rollout) and OpenAI's API's inline compaction
  (`context_management: [{type: "compaction", compact_threshold: …}]`, whose item is "not
  intended to be human-interpretable") are not modelled: neither has a summary the lab could
  read or measure. A session that recorded one is audited and scanned with its summary
  "not readable" (lab/audit.py, lab/corpus/).

Codex asks the model itself for a handoff summary (goal, progress and decisions, constraints and
preferences, remaining steps, critical data); the lab writes it with ours, given the budget our
pipeline's defaults would give (`default_summary_budget`): only the policy above is Codex's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from compaction.lab.peers.base import (
    TRUNCATED,
    PeerRun,
    PeerState,
    check_ranges,
    default_summary_budget,
    is_real_user,
    leading_system_end,
    text_tokens,
    unchanged,
    write_summary,
)
from compaction.messages import Message, content_text, with_content
from compaction.result import Fate
from compaction.summarizers.base import Summarizer
from compaction.tokens import TokenCounter

#: Our words for the handoff (Codex's own preamble text is not copied).
HANDOFF_PREAMBLE = (
    "[HANDOFF FROM A PREVIOUS MODEL] Another model worked on this task before you and wrote the "
    "summary below of what it did and learned. Build on it rather than redoing the work; the "
    "user's earlier messages are above, verbatim."
)
TRUNCATION_MARK = "\n…[earlier part truncated to fit the user-message budget]"
#: How Codex's own injected context starts, when it is sent as a user message.
INJECTED_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")


def is_injected_context(message: Message) -> bool:
    return message.get("role") == "user" and content_text(message).lstrip().startswith(
        INJECTED_PREFIXES
    )


def truncate_to(text: str, tokens: int, counter: TokenCounter) -> str:
    """`text` cut (its beginning kept) to at most `tokens` tokens including the mark."""
    if tokens <= 0:
        return ""
    keep = len(text)
    while keep > 0:
        size = text_tokens(counter, text[:keep] + TRUNCATION_MARK)
        keep = int(keep * min(0.9, tokens / max(1, size)))
        candidate = text[:keep] + TRUNCATION_MARK
        if text_tokens(counter, candidate) <= tokens:
            return candidate
    return ""


@dataclass(frozen=True)
class Codex:
    """Codex CLI's local compaction (codex-rs compact.rs; see the module doc)."""

    name: ClassVar[str] = "codex"
    version: ClassVar[str] = (
        "Codex CLI local compaction, codex-rs compact.rs (as PEERS.md describes it, 2026)"
    )
    trigger_kind: ClassVar[str] = "tokens"
    estimate: ClassVar[str | None] = None

    limit_ratio: float = 0.90
    fixed_limit: int = 0
    user_budget_tokens: int = 20_000

    def __post_init__(self) -> None:
        check_ranges(
            self,
            {"limit_ratio": (0.01, 1.0), "fixed_limit": (0, None), "user_budget_tokens": (0, None)},
        )

    def threshold(self, window: int) -> int:
        return self.fixed_limit if self.fixed_limit > 0 else int(window * self.limit_ratio)

    def window_for(self, target_tokens: int) -> int:
        return math.ceil(target_tokens / self.limit_ratio)

    def should_compact(
        self, tokens: int, messages: Sequence[Message], window: int, state: PeerState
    ) -> bool:
        del messages, state
        return tokens >= self.threshold(window)

    def compact(
        self,
        messages: Sequence[Message],
        window: int,
        counter: TokenCounter,
        summarizer: Summarizer,
        state: PeerState | None = None,
    ) -> PeerRun:
        del window
        state = state if state is not None else PeerState()
        original = list(messages)
        tokens_before = counter.count_messages(original)
        n = len(original)
        system_end = leading_system_end(original)
        if system_end >= n:
            return unchanged(self.name, original, tokens_before, "nothing but the initial context")
        fates: dict[int, str] = {}
        # The initial context, rebuilt: the system prompt and the latest copy of each injection.
        latest_injection: dict[str, int] = {}
        for index in range(system_end, n):
            if is_injected_context(original[index]):
                opening = content_text(original[index]).lstrip()
                kind = next(p for p in INJECTED_PREFIXES if opening.startswith(p))
                latest_injection[kind] = index
        initial = [*range(system_end), *sorted(latest_injection.values())]
        initial_set = set(initial)
        users = [
            i
            for i in range(system_end, n)
            if i not in initial_set
            and is_real_user(original[i])
            and not is_injected_context(original[i])
        ]
        kept: dict[int, Message] = {}
        left = self.user_budget_tokens
        for index in reversed(users):
            if left <= 0:
                break
            cost = counter.count_message(original[index])
            if cost <= left:
                kept[index] = dict(original[index])
                left -= cost
                continue
            # The oldest message that overflows is truncated to what is left, and the walk ends.
            overhead = cost - text_tokens(counter, content_text(original[index]))
            text = truncate_to(content_text(original[index]), left - overhead, counter)
            if text:
                kept[index] = with_content(original[index], text)
                fates[index] = TRUNCATED
            break
        summaries = [
            i
            for i in range(system_end, n)
            if original[i].get("role") == "user" and not is_real_user(original[i])
        ]
        previous = state.previous_summary
        if summaries and previous is None:
            previous = content_text(original[summaries[-1]])
        folded = [i for i in range(system_end, n) if i not in initial_set and i not in summaries]
        folded_tokens = sum(counter.count_message(original[i]) for i in folded)
        budget = default_summary_budget(folded_tokens)
        text, parsed, fallback = write_summary(
            [original[i] for i in folded],
            [original[i] for i in folded],
            budget,
            summarizer,
            counter,
            original,
            previous,
            marks=state.marks if state is not None else None,
        )
        summary_message: Message = {"role": "user", "content": f"{HANDOFF_PREAMBLE}\n\n{text}"}
        output = [dict(original[i]) for i in initial]
        origins: list[int | None] = list(initial)
        for index in sorted(kept):
            output.append(kept[index])
            origins.append(index)
        output.append(summary_message)
        origins.append(None)
        for index in range(n):
            if index in initial_set or (index in kept and index not in fates):
                fates[index] = Fate.KEPT
            elif index in summaries:
                fates[index] = Fate.PREVIOUS_SUMMARY_REPLACED
            else:
                fates.setdefault(index, Fate.FOLDED_INTO_SUMMARY)
        state.compactions += 1
        if parsed is not None:
            state.previous_summary = text
        dropped_users = len(users) - len(kept)
        notes = [
            f"{len(kept)} of {len(users)} user messages kept verbatim within "
            f"{self.user_budget_tokens:,} tokens"
            + (f" ({dropped_users} older ones only in the summary)" if dropped_users else ""),
            f"{sum(1 for i in folded if original[i].get('role') != 'user')} assistant and tool "
            "messages dropped (only the summary carries them)",
        ]
        return PeerRun(
            peer=self.name,
            messages=output,
            origins=origins,
            fates=fates,
            tokens_before=tokens_before,
            tokens_after=counter.count_messages(output),
            summary_text=text,
            summary=parsed,
            fallback=fallback,
            notes=notes,
            details={
                "initial_context": len(initial),
                "user_messages": len(users),
                "users_kept": len(kept),
                "summary_budget": budget,
                "summarizer": getattr(summarizer, "name", type(summarizer).__name__),
            },
        )
