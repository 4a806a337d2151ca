"""Provider checks of tool calls and their results: ids, names, arguments, pairing and order."""

from __future__ import annotations

from typing import Any

from compaction.messages import loads_json
from compaction.provider_rules.problems import Problem


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


def check_calls(usable: list[tuple[int, dict[str, Any]]], anthropic: bool) -> list[Problem]:
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
