"""Each format's harness text in a user turn is marked (messages.INJECTED_KEY), and where the
harness wraps the user's own words, the words are split out so the latest request stays theirs.

Records are shaped as ../shared/spec/OBSERVED_FORMATS.md and the agents' own code show them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from format_helpers import annotated

from compaction.formats import load_conversation
from compaction.messages import INJECTED_KEY, INJECTED_KINDS, Message, content_text, last_user_index
from compaction.text.patterns import injected_kind


def _marks(messages: list[Message]) -> list[tuple[str, str | None]]:
    return [(m["role"], m.get(INJECTED_KEY)) for m in messages]


def _latest(messages: list[Message]) -> str:
    index = last_user_index(messages)
    assert index is not None
    return content_text(messages[index])


def _jsonl(*records: Any) -> str:
    return "\n".join(json.dumps(record, ensure_ascii=False) for record in records) + "\n"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("<skill>\n<name>pdf</name>\n<path>/s/SKILL.md</path>\n</skill>", "system-reminder"),
        (
            "<user_action>\n  <context>User initiated a review task.</context>\n"
            "  <action>review</action>\n</user_action>\n",
            "command",
        ),
        ("<context_update>\n<cwd>/repo</cwd>\n</context_update>", "context"),
        (
            '<subagent_notification>\n{"agent_id": "a1"}\n</subagent_notification>',
            "task-notification",
        ),
        (
            "Another language model started to solve this problem and produced a summary of its "
            "thinking process.",
            "compaction",
        ),
        (
            "You were originally given instructions from a user over one or more turns. Here were "
            "the user messages:",
            "compaction",
        ),
        ("<session_context>\nThis is the Gemini CLI.\n</session_context>", "context"),
        ("<hook_context>lint passed</hook_context>", "hook"),
        (
            "This is the Gemini CLI. We are setting up the context for our chat.\n"
            "  Today's date is Thursday.",
            "context",
        ),
        ('<tool_response>\n{"name": "ls", "content": "a.py"}\n</tool_response>', "tool-result"),
        (
            "\nYou are an AI agent that brings the power of Gemini directly into the terminal. "
            "Your task is to analyze the current directory and generate a GEMINI.md file",
            "command",
        ),
        ("<state_snapshot>\n<overall_goal>ship</overall_goal>\n</state_snapshot>", "compaction"),
        (
            "<local-command-caveat>Caveat: the messages below…</local-command-caveat>",
            "system-reminder",
        ),
        (
            "Your task is to create a detailed summary of the conversation so far, paying close "
            "attention to the user's explicit requests",
            "compaction",
        ),
        ("Summarise <state_snapshot> for me.", None),  # quoting it is still the user speaking
    ],
)
def test_the_harness_openings_each_agent_uses(text: str, kind: str | None) -> None:
    assert injected_kind(text) == kind
    assert kind is None or kind in INJECTED_KINDS


# -- Codex -----------------------------------------------------------------------------------

IDE_CONTEXT = (
    "# Context from my IDE setup:\n\n## Active file: src/Portfolio.tsx\n\n"
    "## Open tabs:\n- Portfolio.tsx: src/Portfolio.tsx\n\n## My request for Codex:\n"
)


def _codex_line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-01-25T21:53:02.000Z", "type": kind, "payload": payload}


def _codex_msg(role: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return _codex_line("response_item", {"type": "message", "role": role, "content": list(parts)})


def _text(text: str, kind: str = "input_text") -> dict[str, Any]:
    return {"type": kind, "text": text}


def _codex(*records: dict[str, Any]) -> list[Message]:
    meta = _codex_line(
        "session_meta",
        {"id": "s", "cwd": "/repo", "originator": "codex_vscode", "cli_version": "0.94.0"},
    )
    return annotated(load_conversation(_jsonl(meta, *records)))


def test_codex_ide_context_is_split_from_the_users_request() -> None:
    messages = _codex(
        _codex_msg("user", _text(IDE_CONTEXT + "Fix the image hover animation.")),
        _codex_msg("assistant", _text("Fixed.", "output_text")),
        # A wrapped turn whose request is empty holds nothing of the user's: all context.
        _codex_msg("user", _text(IDE_CONTEXT)),
    )
    assert _marks(messages) == [
        ("user", "context"),
        ("user", None),
        ("assistant", None),
        ("user", "context"),
    ]
    assert messages[0]["content"] == IDE_CONTEXT.strip()  # the app's heading stays with it
    assert messages[1]["content"] == "Fix the image hover animation."
    # Nothing is lost: the two parts are the turn the model saw.
    assert f"{messages[0]['content']}\n{messages[1]['content']}" == (
        IDE_CONTEXT + "Fix the image hover animation."
    )
    assert _latest(messages) == "Fix the image hover animation."


def test_codex_desktop_attachments_keep_the_image_with_the_request() -> None:
    wrapper = "# Files mentioned by the user:\n\n## shot.png:\n/tmp/shot.png\n\n"
    messages = _codex(
        _codex_msg(
            "user",
            _text(wrapper + "## My request for Codex:\nWhy is the button cut off?"),
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
        ),
    )
    assert _marks(messages) == [("user", "context"), ("user", None)]
    assert messages[1]["content"] == [
        {"type": "text", "text": "Why is the button cut off?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
    ]
    assert (
        load_conversation(
            _jsonl(
                _codex_line("session_meta", {"id": "s"}),
                _codex_msg("user", _text(wrapper + "## My request for Codex:\nWhy?")),
            )
        ).title
        == "Why?"
    )


def test_codex_review_result_skill_and_compaction_handoff_are_marked() -> None:
    messages = _codex(
        _codex_msg("user", _text("Refactor the parser.")),
        _codex_msg("user", _text("<skill>\n<name>pdf</name>\nUse pdftotext.\n</skill>")),
        _codex_msg("assistant", _text("Done.", "output_text")),
        _codex_msg(
            "user",
            _text(
                "<user_action>\n  <context>User initiated a review task. Here's the full review "
                "output from reviewer model.</context>\n  <action>review</action>\n  <results>\n"
                "  No findings.\n  </results>\n</user_action>\n"
            ),
        ),
        _codex_line(
            "compacted", {"message": "The user asked to refactor.", "replacement_history": []}
        ),
    )
    assert _marks(messages) == [
        ("user", None),
        ("user", "system-reminder"),
        ("assistant", None),
        ("user", "command"),
        ("user", "compaction"),
    ]
    assert _latest(messages) == "Refactor the parser."


# -- Copilot CLI and Antigravity: the user's words inside the tool's own text -----------------


def test_copilot_cli_typed_words_are_split_from_the_time_and_reminders() -> None:
    typed = "Do not change any code; find a doc generator for this Rust crate."
    sent = (
        "<current_datetime>2026-04-24T01:11:16.237+08:00</current_datetime>\n\n"
        f"{typed}\n\n<reminder>\n<sql_tables>No tables.</sql_tables>\n</reminder>"
    )
    events = [
        {"type": "session.start", "data": {"sessionId": "s", "version": 1}, "id": "e1"},
        {
            "type": "user.message",
            "data": {"content": typed, "transformedContent": sent, "attachments": []},
            "id": "e2",
        },
        {"type": "assistant.message", "data": {"content": "mdBook or rustdoc."}, "id": "e3"},
    ]
    messages = annotated(load_conversation(_jsonl(*events)))
    assert _marks(messages) == [
        ("user", "context"),
        ("user", None),
        ("user", "context"),
        ("assistant", None),
    ]
    assert messages[1]["content"] == typed
    assert "\n\n".join(content_text(m) for m in messages[:3]) == sent
    assert _latest(messages) == typed


def _step(index: int, source: str, kind: str, content: str | None = None) -> dict[str, Any]:
    step: dict[str, Any] = {
        "step_index": index,
        "source": source,
        "type": kind,
        "status": "DONE",
        "created_at": f"2026-06-09T12:47:{index:02d}Z",
    }
    if content is not None:
        step["content"] = content
    return step


def test_antigravity_request_is_split_from_metadata_and_a_checkpoint_is_a_handoff() -> None:
    request = "<USER_REQUEST>\nBuild the system from my idea.\n</USER_REQUEST>"
    metadata = (
        "<ADDITIONAL_METADATA>\nThe current local time is: 2026-06-09.\n</ADDITIONAL_METADATA>"
    )
    steps = [
        _step(0, "USER_EXPLICIT", "USER_INPUT", f"{request}\n{metadata}"),
        _step(1, "MODEL", "PLANNER_RESPONSE", "Scaffolding it."),
        _step(2, "SYSTEM", "CHECKPOINT", "{{ CHECKPOINT 1 }} The user wants the system built."),
        _step(3, "MODEL", "PLANNER_RESPONSE", "Continuing."),
    ]
    messages = annotated(load_conversation(_jsonl(*steps)))
    assert _marks(messages) == [
        ("user", None),
        ("user", "context"),
        ("assistant", None),
        ("user", "compaction"),
        ("assistant", None),
    ]
    assert messages[0]["content"] == request
    assert messages[1]["content"] == metadata
    assert _latest(messages) == request


# -- Gemini CLI --------------------------------------------------------------------------------


def test_gemini_cli_continue_nudge_and_compression_snapshot_are_marked() -> None:
    stamp = "2026-04-23T12:53:05.283Z"
    header = {"sessionId": "s", "projectHash": "p", "startTime": stamp, "lastUpdated": stamp}

    def message(id_: str, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
        return {"id": id_, "timestamp": stamp, "type": kind, "content": content, **extra}

    text = _jsonl(
        {**header, "kind": "main"},
        message("u1", "user", [{"text": "Make the scripts run through uv run."}]),
        message("g1", "gemini", "Updated the README."),
        message(
            "u2",
            "user",
            [{"text": "System: Please continue."}],
            displayContent=[{"functionResponse": {"id": "t1", "name": "update_topic"}}],
        ),
        message("g2", "gemini", "All done."),
        message("u3", "user", [{"text": "<state_snapshot>\n<overall_goal>uv</overall_goal>"}]),
        message("g3", "gemini", "Got it."),
    )
    messages = annotated(load_conversation(text))
    assert _marks(messages) == [
        ("user", None),
        ("assistant", None),
        ("user", "continuation"),
        ("assistant", None),
        ("user", "compaction"),
        ("assistant", None),
    ]
    assert _latest(messages) == "Make the scripts run through uv run."


# -- OpenHands, SWE-agent, aider: the environment and the tool speaking in user turns ------------


def test_openhands_error_observation_and_stand_in_user_reply_are_marked() -> None:
    history = [
        {"id": 0, "source": "agent", "action": "system", "args": {"content": "You are OpenHands."}},
        {"id": 1, "source": "user", "action": "message", "args": {"content": "Fix issue 4595."}},
        {"id": 2, "source": "agent", "action": "message", "args": {"content": "Which file?"}},
        {
            "id": 3,
            "source": "user",
            "action": "message",
            "args": {
                "content": "Please continue working on the task on whatever approach you think "
                "is suitable.\nIMPORTANT: YOU SHOULD NEVER ASK FOR HUMAN HELP."
            },
        },
        {
            "id": 4,
            "source": "agent",
            "observation": "error",
            "content": "Parameter 'command' is expected to be one of ['view', 'create'].",
            "extras": {"error_id": ""},
        },
    ]
    messages = annotated(load_conversation(_jsonl({"instance_id": "i", "history": history})))
    assert _marks(messages) == [
        ("system", None),
        ("user", None),
        ("assistant", None),
        ("user", "continuation"),
        ("user", "tool-result"),
    ]
    assert _latest(messages) == "Fix issue 4595."


def test_swe_agent_text_action_observations_and_demonstrations_are_marked() -> None:
    history = [
        {"role": "system", "content": "SETTING: You are an autonomous programmer.", "agent": "p"},
        {"role": "user", "content": "Here is a demonstration…", "agent": "p", "is_demo": True},
        {
            "role": "user",
            "content": "ISSUE: Pixel Representation should be optional.",
            "agent": "p",
        },
        {"role": "assistant", "content": "Let me reproduce it.\n```\ncreate bug.py\n```"},
        {"role": "user", "content": "[File: /repo/bug.py (1 lines total)]\n(Open file: bug.py)"},
        {"role": "assistant", "content": "```\npython bug.py\n```"},
        {
            "role": "user",
            "content": "Your command ran successfully and did not produce any output.",
        },
    ]
    document = json.dumps({"history": history, "trajectory": [], "info": {}})
    messages = annotated(load_conversation(document))
    assert _marks(messages) == [
        ("system", None),
        ("user", "context"),
        ("user", None),
        ("assistant", None),
        ("user", "tool-result"),
        ("assistant", None),
        ("user", "tool-result"),
    ]
    assert _latest(messages) == "ISSUE: Pixel Representation should be optional."


def test_aider_prompts_that_only_drive_the_tool_are_commands() -> None:
    history = (
        "# aider chat started at 2025-07-22 17:49:27\n\n"
        "#### Scan dist/ for any CommonJS usage.  \n\n"
        "No CommonJS usage found.\n\n"
        "#### /add src/a.ts  \n"
        "#### !ls dist  \n"
        "> Added src/a.ts to the chat  \n\n"
        "#### /ask why is this ESM only?  \n\n"
        "Because the package sets type: module.\n\n"
        "#### /**  \n"
        "####  * a pasted comment  \n"
        "####  */  \n\n"
        "Noted.\n\n"
        "#### /bye  \n"
        "> Invalid command: /bye  \n\n"
        "#### /exit  \n"
    )
    messages = annotated(load_conversation(history))
    users = [
        (m["content"].splitlines()[0], m.get(INJECTED_KEY)) for m in messages if m["role"] == "user"
    ]
    assert users == [
        ("Scan dist/ for any CommonJS usage.", None),
        ("/add src/a.ts", "command"),
        ("/ask why is this ESM only?", None),  # sends its text on to the model: a request
        ("/**", None),  # a pasted comment, not a command
        ("/bye", "command"),  # aider runs it as a command (an unknown one), never the model
        ("/exit", "command"),
    ]
    assert _latest(messages).startswith("/**")
