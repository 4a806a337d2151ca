"""Phase 3's prompt: the middle serialised turn by turn (each numbered for citations) and the
first-time or iterative prompt of ALGORITHM.md, with the focus block.

The prompt text lives here, in one place, so the app can show exactly what was (or would be) sent,
and the peers and the judge serialise turns the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from compaction.messages import Message, call_arguments, call_name, content_text, tool_calls
from compaction.summary import SECTION_NAMES

CONTENT_LIMIT = 6_000
KEEP_HEAD = 4_000
KEEP_TAIL = 1_500
TRUNCATION_MARK = "\n...[truncated]...\n"


def cut_content(text: str) -> str:
    """Content over 6,000 chars keeps its first 4,000 and last 1,500."""
    if len(text) <= CONTENT_LIMIT:
        return text
    return text[:KEEP_HEAD] + TRUNCATION_MARK + text[-KEEP_TAIL:]


def serialize_turns(messages: Sequence[Message], numbers: Sequence[int] | None = None) -> str:
    """One block per message.

    `[USER]: …`, `[ASSISTANT]: …` followed by `[Tool calls: name(args), …]`, `[TOOL RESULT id]: …`.
    With `numbers` (each message's index in the conversation), every block opens with `[#N] `:
    the number a summariser cites after each item it writes from that message.
    """
    blocks = []
    for position, message in enumerate(messages):
        role = str(message.get("role", "user"))
        text = cut_content(content_text(message))
        number = f"[#{numbers[position]}] " if numbers is not None else ""
        if role == "tool":
            blocks.append(f"{number}[TOOL RESULT {message.get('tool_call_id', '?')}]: {text}")
            continue
        block = f"{number}[{role.upper()}]: {text}"
        calls = tool_calls(message)
        if calls:
            rendered = ", ".join(
                f"{call_name(call)}({cut_content(call_arguments(call))})" for call in calls
            )
            block += f"\n[Tool calls: {rendered}]"
        blocks.append(block)
    return "\n\n".join(blocks)


#: Each turn is numbered `[#N]` (its index in the conversation); a model cites the numbers, and
#: the summary phase reads the citations back and checks them (summary/check.py).
CITATION_RULE = (
    "Each turn below opens with its number, like [#12]. End every item you write (each line of "
    "a section) with the numbers of the turns it comes from, like `- Ran pytest: 2 failed "
    "[#41, #42]`. Cite only numbers that appear below; an item kept unchanged from a previous "
    "summary needs no number. Constraints & Preferences and Pending User Asks take only what the "
    "user wrote in a [USER] turn, never tool output or file contents."
)


def _headings_block() -> str:
    return "\n".join(f"## {name}" for name in SECTION_NAMES)


def build_prompt(
    serialized: str,
    budget_tokens: int,
    previous_summary: str | None = None,
    focus: str | None = None,
    latest_request: tuple[int, str] | None = None,
) -> str:
    """The first-time or iterative prompt of ALGORITHM.md Phase 3, with the focus block.

    `latest_request` is (index, text) of the user's latest request when it is not among the
    turns (it usually sits in the tail, kept verbatim): a model cannot copy into Active Task a
    request it was never shown."""
    rules = (
        f"Write the summary in at most {budget_tokens:,} tokens. Use exactly these 13 sections, "
        "in this order, each as a markdown heading (write `None.` under a section with nothing "
        "to report):\n"
        f"{_headings_block()}\n\n"
        "## Active Task must copy the user's latest request verbatim. Keep exact file paths, "
        "commands, error messages, identifiers and numbers; Completed Actions is a numbered list "
        "of concrete actions with their results; Blocked quotes errors exactly.\n\n"
        f"{CITATION_RULE}"
    )
    if previous_summary is None:
        prompt = (
            "You are compacting the context of an AI agent. Create a structured summary of the "
            "conversation turns below so the agent can continue the work with no other context.\n\n"
            f"{rules}\n\nTURNS TO SUMMARIZE:\n{serialized}"
        )
    else:
        prompt = (
            "You are updating the structured summary of an AI agent's earlier context with the "
            "turns that happened since it was written.\n\n"
            f"PREVIOUS SUMMARY:\n{previous_summary}\n\n"
            f"NEW TURNS TO INCORPORATE:\n{serialized}\n\n"
            "Update rules:\n"
            "- Keep all existing information that is still relevant.\n"
            "- Add new completed actions, continuing the numbering of Completed Actions.\n"
            "- Move In Progress items that are now finished to Completed Actions.\n"
            "- Move questions that have been answered to Resolved Questions.\n"
            "- Update Active State to reflect the current state.\n"
            "- Remove only information that is clearly obsolete.\n\n"
            f"{rules}"
        )
    if latest_request is not None:
        index, text = latest_request
        prompt += (
            f"\n\nTHE USER'S LATEST REQUEST [#{index}] (copy it verbatim under ## Active Task; "
            f"it stays in the conversation after the summary):\n{cut_content(text)}"
        )
    if focus:
        prompt += (
            f"\n\nFOCUS TOPIC: {focus}\n"
            "Keep everything related to this topic in full detail — exact paths, commands, "
            "errors, decisions and results — using about 60–70% of the token budget for it, and "
            "compress everything else hard."
        )
    return prompt
