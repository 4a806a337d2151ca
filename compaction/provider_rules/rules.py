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
from typing import Any

from compaction.errors import InvalidConversationError
from compaction.messages import content_text, image_count
from compaction.provider_rules.calls import check_calls
from compaction.provider_rules.problems import (
    PROVIDERS,
    RULES,
    Problem,
    Severity,
)
from compaction.summary import summary_parts

__all__ = ["is_summary", "request_messages", "validate"]

_SYSTEM_ROLES = ("system", "developer")
_KNOWN_ROLES = ("system", "developer", "user", "assistant", "tool")


def is_summary(message: dict[str, Any]) -> bool:
    return summary_parts(content_text(message)) is not None


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
    problems += _check_fields(usable, anthropic)
    problems += _check_system(usable, anthropic)
    problems += _check_contents(usable, anthropic)
    problems += check_calls(usable, anthropic)
    if anthropic:
        problems += _check_alternation(usable)
    order = {rule: position for position, rule in enumerate(RULES)}
    problems.sort(key=lambda p: (-1 if p.index is None else p.index, order.get(p.rule, 99)))
    return problems


#: The fields a chat-completions message may carry (the canonical form is OpenAI's).
API_FIELDS = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "refusal", "audio", "function_call"}
)
#: Fields the importers keep beside the API's (a model's reasoning): the exporters leave them
#: out, so they are a warning; any other field (an importer's annotation such as `injected`)
#: reaching a request is an error.
CANONICAL_EXTRAS = frozenset({"reasoning"})


def _check_fields(usable: list[tuple[int, dict[str, Any]]], anthropic: bool) -> list[Problem]:
    """A field the API does not take. Both providers answer a request that carries one with a
    400 (Anthropic's Messages API and OpenAI's chat completions validate every message), so an
    unknown field is an error; a field the importers keep beside the API's (CANONICAL_EXTRAS),
    which the exporters leave out, is a warning."""
    del anthropic  # the same for both: the canonical message is the one that would be sent
    problems: list[Problem] = []
    for index, message in usable:
        for key in sorted(str(key) for key in message if key not in API_FIELDS):
            if key in CANONICAL_EXTRAS:
                problems.append(
                    Problem(
                        index,
                        "unknown-field",
                        f"the field {key!r} is not one the API takes: the exporters leave it "
                        "out; sent as it is, the request is rejected",
                        "warning",
                    )
                )
            else:
                problems.append(
                    Problem(
                        index,
                        "unknown-field",
                        f"the field {key!r} is not one the API takes: the provider rejects "
                        "the request (the exporters leave it out)",
                    )
                )
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
