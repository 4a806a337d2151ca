"""Provider validity: would OpenAI or Anthropic accept this message list as a request?

Compaction that saves tokens but produces a request the provider rejects with a 400 is worse than
no compaction, and naive strategies (head + tail) do exactly that by cutting tool groups. This
module checks a canonical (OpenAI-format) list against each provider's rules and reports every
problem with the message index and a stable rule id, so the CLI, the evaluation and the Inspect
page can name what is wrong and where. It never raises on odd messages: anything in the list it
cannot read is itself a problem. What it does raise on is an argument that is no message list at
all (a string would otherwise be checked character by character, a dict key by key).

Severity policy (why some rules are warnings):
- ``error``: the provider rejects the request (HTTP 400), or an exporter cannot build it at all.
- ``warning``: the provider accepts it but changes its meaning. Anthropic *merges* consecutive
  same-role turns (so two user messages in a row become one turn — accepted, but the model sees one
  message); OpenAI accepts a system message that is not first, although many OpenAI-compatible
  servers' chat templates reject it; Anthropic has no mid-conversation system turn, so our exporter
  sends a late system message as user text in place (accepted, but no longer a system
  instruction). The compaction summary is held to a stricter standard: a summary that Anthropic
  would merge into a neighbouring turn, or that sits in the middle as a system message, breaks the
  "reference only" framing, so those are errors.

Anthropic is modelled through the canonical list the exporter converts: a ``tool`` message becomes
a ``tool_result`` block in a user turn, so tool results count as the user side for alternation,
and results must directly follow the assistant message whose calls they answer (Anthropic wants
them in the very next message; OpenAI wants them before any other role) — one adjacency rule.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from compaction.errors import InvalidConversationError
from compaction.messages import content_text, image_count, loads_json
from compaction.summary import SUMMARY_PREFIX

Provider = Literal["openai", "anthropic"]
Severity = Literal["error", "warning"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic")

#: Every rule id with what it means (the UI and the CLI's help show these).
RULES: dict[str, str] = {
    "empty-conversation": "the request has no messages",
    "system-only": "only system messages: Anthropic's messages list would be empty",
    "invalid-message": "an entry is not a message object with a known role",
    "invalid-content": "content that is not a string, null or a list of content-part objects",
    "tool-calls-not-list": "tool_calls that is not a list of calls",
    "system-not-first": "a system (or developer) message that is not the first message",
    "first-not-user": "the first message after the system prompt is not a user message",
    "consecutive-same-role": "two turns of the same side in a row (the provider merges them)",
    "empty-user": "a user message with no text and no image",
    "empty-assistant": "an assistant message with neither content nor tool calls",
    "tool-call-missing-id": "a tool call without an id",
    "tool-call-missing-name": "a tool call without a function name",
    "tool-arguments-invalid-json": "tool-call arguments that are not valid JSON",
    "tool-arguments-not-object": "tool-call arguments that are JSON but not an object",
    "duplicate-tool-call-id": "the same tool-call id on more than one call",
    "tool-call-unanswered": "a tool call with no tool result",
    "tool-result-missing-id": "a tool result without a tool_call_id",
    "tool-result-without-call": "a tool result whose call appears nowhere",
    "tool-result-before-call": "a tool result that comes before its call",
    "tool-result-not-adjacent": "a tool result separated from the assistant message of its call",
    "duplicate-tool-result": "a second tool result for the same call",
    "summary-as-system": "the compaction summary sent as a system message after the first",
    "summary-breaks-alternation": "the compaction summary would be merged into a neighbouring turn",
}

_SYSTEM_ROLES = ("system", "developer")
_KNOWN_ROLES = ("system", "developer", "user", "assistant", "tool")


@dataclass(frozen=True)
class Problem:
    """One thing the provider would reject (error) or silently change (warning)."""

    index: int | None  # the message's position in the list; None for the list itself
    rule: str
    message: str
    severity: Severity = "error"

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "rule": self.rule,
            "message": self.message,
            "severity": self.severity,
        }

    def __str__(self) -> str:
        where = f"message {self.index}" if self.index is not None else "conversation"
        return f"{where}: {self.severity} [{self.rule}] {self.message}"


def errors(problems: Sequence[Problem]) -> list[Problem]:
    """Only the problems the provider would reject."""
    return [problem for problem in problems if problem.severity == "error"]


def is_valid(problems: Sequence[Problem]) -> bool:
    """True when no problem is an error (warnings do not make a request invalid)."""
    return not errors(problems)


def is_summary(message: dict[str, Any]) -> bool:
    return content_text(message).startswith(SUMMARY_PREFIX)


def request_messages(request: Any) -> list[Any]:
    """The canonical message list of `request`: a list (or tuple) of messages as it is, or a
    request object with a `messages` list.

    A request object's `system` field (where Anthropic keeps the prompt) becomes the leading
    system message, and an Anthropic request (tool_use/tool_result blocks, or a top-level
    `system`) is read through the Anthropic importer, so problem indices then count the canonical
    messages, as `compaction validate` does for a file. Anything else raises
    InvalidConversationError saying what was expected.
    """
    if isinstance(request, list | tuple):
        return list(request)
    if isinstance(request, dict) and isinstance(request.get("messages"), list):
        # Imported here: the formats package loads every importer, which a plain list never needs.
        from compaction.formats import anthropic
        from compaction.formats.source import Document

        document = Document(text="", kind="json", value=request)
        if anthropic.sniff(document)[0]:
            return list(anthropic.load(document)[0].messages)
        system = anthropic.system_text(request.get("system")) if request.get("system") else ""
        leading = [{"role": "system", "content": system}] if system else []
        return [*leading, *request["messages"]]
    shown = "a dict without a 'messages' list" if isinstance(request, dict) else None
    raise InvalidConversationError(
        "validate() expects a list of messages or a request object with a 'messages' list, "
        f"got {shown or type(request).__name__}"
    )


def validate(messages: Any, provider: str = "openai") -> list[Problem]:
    """Every problem of `messages` for `provider`, ordered by message index then rule.

    `messages` is a list of canonical messages or a request object (see request_messages).
    """
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
    messages = request_messages(messages)
    if not messages:
        return [Problem(None, "empty-conversation", RULES["empty-conversation"])]
    problems: list[Problem] = []
    usable: list[tuple[int, dict[str, Any]]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in _KNOWN_ROLES:
            shown = message.get("role") if isinstance(message, dict) else type(message).__name__
            problems.append(
                Problem(index, "invalid-message", f"not a message with a known role ({shown!r})")
            )
            continue
        usable.append((index, message))
    anthropic = provider == "anthropic"
    if anthropic and usable and all(m["role"] in _SYSTEM_ROLES for _, m in usable):
        # The exporter lifts every leading system message into the system parameter, which
        # leaves Anthropic an empty messages list: a 400, like an empty request.
        problems.append(
            Problem(
                None,
                "system-only",
                "only system messages: Anthropic takes them as the system prompt and its "
                "messages list would be empty; it needs at least one user message",
            )
        )
    problems += _check_system(usable, anthropic)
    problems += _check_contents(usable, anthropic)
    problems += _check_calls(usable, anthropic)
    if anthropic:
        problems += _check_alternation(usable)
    order = {rule: position for position, rule in enumerate(RULES)}
    problems.sort(key=lambda p: (-1 if p.index is None else p.index, order.get(p.rule, 99)))
    return problems


def _check_system(usable: list[tuple[int, dict[str, Any]]], anthropic: bool) -> list[Problem]:
    # Anthropic takes the system prompt as a top-level parameter: only a leading one can go there.
    # A later one is exported as user text (accepted, meaning changed: a warning); the summary in
    # that position is an error, because compaction itself chose to put it there.
    severity: Severity = "error" if anthropic else "warning"
    where = " (exported to Anthropic as user text)" if anthropic else ""
    problems = []
    for position, (index, message) in enumerate(usable):
        if message["role"] not in _SYSTEM_ROLES or position == 0:
            continue
        if is_summary(message):
            problems.append(
                Problem(
                    index,
                    "summary-as-system",
                    "the compaction summary is a system message in the middle of the "
                    "conversation; send it as a user or assistant turn",
                    severity,
                )
            )
        else:
            problems.append(
                Problem(
                    index,
                    "system-not-first",
                    f"a {message['role']} message at position {index}; only the first message "
                    f"may be a system prompt{where}",
                    "warning",
                )
            )
    return problems


def _content_shape_problem(index: int, message: dict[str, Any]) -> Problem | None:
    """Content neither provider can take: an object, a number, or a list of non-objects."""
    content = message.get("content")
    if content is None or isinstance(content, str):
        return None
    if isinstance(content, list):
        for position, part in enumerate(content):
            if not isinstance(part, dict):
                return Problem(
                    index,
                    "invalid-content",
                    f"content[{position}] is a {type(part).__name__}, not a content-part object",
                )
        return None
    return Problem(
        index,
        "invalid-content",
        f"content is a {type(content).__name__}; expected a string, null or a list of parts",
    )


def _check_contents(usable: list[tuple[int, dict[str, Any]]], anthropic: bool) -> list[Problem]:
    problems = []
    for index, message in usable:
        role = message["role"]
        shape = _content_shape_problem(index, message)
        calls = message.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            problems.append(
                Problem(
                    index,
                    "tool-calls-not-list",
                    f"tool_calls is a {type(calls).__name__}, not a list of calls",
                )
            )
        if shape is not None:
            problems.append(shape)  # its emptiness cannot be judged: reported once, as shape
            continue
        has_content = bool(content_text(message).strip()) or image_count(message) > 0
        if role == "user" and not has_content:
            # OpenAI accepts an empty user string; Anthropic rejects empty content blocks.
            problems.append(
                Problem(
                    index,
                    "empty-user",
                    "user message has no text",
                    "error" if anthropic else "warning",
                )
            )
        elif role == "assistant" and not has_content and not message.get("tool_calls"):
            problems.append(
                Problem(index, "empty-assistant", "assistant message has no content and no calls")
            )
    return problems


def _check_call_shape(index: int, position: int, call: Any) -> list[Problem]:
    where = f"tool_calls[{position}]"
    if not isinstance(call, dict):
        return [Problem(index, "tool-call-missing-id", f"{where} is not an object")]
    problems = []
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        problems.append(Problem(index, "tool-call-missing-id", f"{where} has no id"))
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    name = function.get("name")
    if not isinstance(name, str) or not name:
        problems.append(Problem(index, "tool-call-missing-name", f"{where} has no function name"))
    arguments = function.get("arguments")
    if isinstance(arguments, dict):
        return problems  # an object not yet serialised: exporters send it as is
    if not isinstance(arguments, str):
        problems.append(
            Problem(
                index,
                "tool-arguments-invalid-json",
                f"{where} arguments are {type(arguments).__name__}, not a JSON string",
            )
        )
        return problems
    try:
        value = loads_json(arguments)
    except (ValueError, RecursionError) as exc:
        problems.append(
            Problem(
                index,
                "tool-arguments-invalid-json",
                f"{where} ({name}) arguments are not valid JSON: {exc}",
            )
        )
        return problems
    if not isinstance(value, dict):
        problems.append(
            Problem(
                index,
                "tool-arguments-not-object",
                f"{where} ({name}) arguments are a JSON {type(value).__name__}, not an object",
            )
        )
    return problems


def _check_calls(usable: list[tuple[int, dict[str, Any]]], anthropic: bool) -> list[Problem]:
    """Pairing of calls and results: ids, duplicates, order and adjacency.

    A result answers a call of the assistant message it directly follows. An id reused by a
    later assistant message is an error for Anthropic (tool_use ids must be unique in a request)
    but only a warning for OpenAI, which pairs results per assistant message: tau-bench and
    SWE-agent transcripts recorded against the OpenAI API reuse ids across turns.
    """
    problems: list[Problem] = []
    sites: dict[str, list[int]] = {}  # call id -> indices of the assistant messages carrying it
    for index, message in usable:
        if message["role"] != "assistant" or not isinstance(message.get("tool_calls"), list):
            continue
        for position, call in enumerate(message["tool_calls"]):
            problems += _check_call_shape(index, position, call)
            call_id = call.get("id") if isinstance(call, dict) else None
            if not isinstance(call_id, str) or not call_id:
                continue
            previous = sites.setdefault(call_id, [])
            if previous:
                same = previous[-1] == index
                problems.append(
                    Problem(
                        index,
                        "duplicate-tool-call-id",
                        f"call id {call_id!r} is already used by "
                        + ("another call of this message" if same else f"message {previous[-1]}"),
                        "error" if same or anthropic else "warning",
                    )
                )
            if not previous or previous[-1] != index:
                previous.append(index)

    answered: set[tuple[int, str]] = set()  # (assistant index, call id) pairs with a result
    block: int | None = None  # the assistant message whose results may follow here
    for index, message in usable:
        role = message["role"]
        if role != "tool":
            has_calls = role == "assistant" and bool(message.get("tool_calls"))
            block = index if has_calls else None
            continue
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            problems.append(Problem(index, "tool-result-missing-id", "tool result has no id"))
            continue
        places = sites.get(call_id, [])
        if block is not None and block in places and (block, call_id) not in answered:
            answered.add((block, call_id))
            continue
        earlier = [place for place in places if place < index]
        open_earlier = [place for place in earlier if (place, call_id) not in answered]
        if earlier and not open_earlier:
            problems.append(
                Problem(
                    index,
                    "duplicate-tool-result",
                    f"call {call_id!r} of message {earlier[-1]} already has a result",
                )
            )
        elif not places:
            problems.append(
                Problem(
                    index, "tool-result-without-call", f"no assistant message calls {call_id!r}"
                )
            )
        elif not earlier:
            answered.add((places[0], call_id))  # reported once, here, not also as unanswered
            problems.append(
                Problem(
                    index,
                    "tool-result-before-call",
                    f"answers {call_id!r}, which is called later, by message {places[0]}",
                )
            )
        else:
            answered.add((open_earlier[-1], call_id))  # answered, only in the wrong place
            problems.append(
                Problem(
                    index,
                    "tool-result-not-adjacent",
                    f"answers {call_id!r} from message {open_earlier[-1]}, but other messages "
                    "come between them; results must directly follow their call",
                )
            )
    for call_id, places in sites.items():
        for place in places:
            if (place, call_id) not in answered:
                problems.append(
                    Problem(place, "tool-call-unanswered", f"call {call_id!r} has no tool result")
                )
    return problems


def _side(role: str) -> str:
    # Anthropic has two roles: tool results travel inside user turns.
    return "assistant" if role == "assistant" else "user"


def _check_alternation(usable: list[tuple[int, dict[str, Any]]]) -> list[Problem]:
    problems: list[Problem] = []
    # As the exporter sends it: the leading system messages become the system parameter, and a
    # later one is user text in place (so it separates two assistant turns, and merges with a user
    # turn).
    leading = next(
        (pos for pos, (_, m) in enumerate(usable) if m["role"] not in _SYSTEM_ROLES), len(usable)
    )
    late_systems = {index for index, m in usable[leading:] if m["role"] in _SYSTEM_ROLES}
    turns = [
        (index, {**message, "role": "user"} if index in late_systems else message)
        for index, message in usable[leading:]
    ]
    if not turns:
        return problems
    first_index, first = turns[0]
    if first["role"] != "user":
        problems.append(
            Problem(
                first_index,
                "first-not-user",
                f"the first turn is a {first['role']} message; Anthropic requires a user "
                "message first",
            )
        )
    for (previous_index, previous), (index, message) in itertools.pairwise(turns):
        side = _side(message["role"])
        if side != _side(previous["role"]):
            continue
        # Results after their call's results, or a user turn after results, are one user turn
        # with tool_result blocks first: that is the normal Anthropic shape, not a merge.
        if previous["role"] == "tool":
            continue
        if message["role"] == "tool":
            continue  # already reported by the pairing rules when it is misplaced
        if is_summary(message) or is_summary(previous):
            summary_index = index if is_summary(message) else previous_index
            other = previous_index if summary_index == index else index
            if summary_index in late_systems:
                continue  # already reported as summary-as-system
            problems.append(
                Problem(
                    summary_index,
                    "summary-breaks-alternation",
                    f"the summary and message {other} are both {side} turns; Anthropic would "
                    "merge them into one",
                )
            )
            continue
        problems.append(
            Problem(
                index,
                "consecutive-same-role",
                f"follows another {side} turn (message {previous_index}); Anthropic merges them "
                "into one turn",
                "warning",
            )
        )
    return problems
