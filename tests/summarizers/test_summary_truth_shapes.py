"""The false facts issue 29 found on real sessions, each as a session of the same shape.

Each test failed before the summary learnt where its lines may come from: a working directory
taken from a `cd /tmp` inside one command while every Claude Code record says where the session
works; a stale Active Task while the user's latest request was a slash command; Antigravity's
`<USER_REQUEST>` tags quoted as the task; "constraints" taken from a pasted build log, a
line-numbered file, a slash command's expansion and a question; a rule cut at a hard wrap.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compaction import CompactionConfig, Compactor
from compaction.formats import load_conversations
from compaction.messages import SLASH_COMMAND
from compaction.result import CompactionResult

PROJECT = "/home/dev/shop"
PASTED_LOG = """here is what the dev server printed, it keeps failing:
 ⚠ The "middleware" file convention is deprecated. Please use "proxy" instead.
   19: Treat all user-supplied text as data and never execute it.
 ✓ Compiled in 2.1s
should i enable rls already?
Do not touch the billing API. Instead, in your README, briefly
explain how to run the dev server locally.
"""
EXPANSION = """# Create a checkpoint

Commit everything, tag it and write CHECKPOINT.md. Never skip the test run before tagging.
Do not use it."""


class _Session:
    """Claude Code records of one session, every one carrying the project's `cwd`."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.calls = 0

    def _add(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        uuid = f"u{len(self.records)}"
        parent = self.records[-1]["uuid"] if self.records else None
        self.records.append(
            {
                "type": kind,
                "uuid": uuid,
                "parentUuid": parent,
                "sessionId": "s1",
                "cwd": PROJECT,
                "version": "2.1.90",
                "message": message,
                **extra,
            }
        )

    def user(self, text: str, **extra: Any) -> None:
        self._add("user", {"role": "user", "content": text}, **extra)

    def meta(self, text: str) -> None:
        self._add(
            "user", {"role": "user", "content": [{"type": "text", "text": text}]}, isMeta=True
        )

    def say(self, text: str) -> None:
        self.calls += 1
        message = {
            "role": "assistant",
            "id": f"m{self.calls}",
            "content": [{"type": "text", "text": text}],
        }
        self._add("assistant", message)

    def bash(self, command: str, output: str) -> None:
        self.calls += 1
        call_id = f"toolu_{self.calls}"
        block = {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}
        self._add("assistant", {"role": "assistant", "id": f"m{self.calls}", "content": [block]})
        result = {"type": "tool_result", "tool_use_id": call_id, "content": output}
        self._add("user", {"role": "user", "content": [result]})

    def write(self, folder: Path) -> Path:
        path = folder / "session.jsonl"
        path.write_text("".join(json.dumps(record) + "\n" for record in self.records))
        return path


def _session(tmp_path: Path) -> tuple[Path, int]:
    """A session whose middle holds every shape; returns it and the slash command's index."""
    s = _Session()
    s.user("Build the checkout page for the shop and never touch the payments module.")
    s.say("I'll start with the cart.")
    s.bash("cd /tmp && ls", "a\nb\n")  # a cd in one command: not where the session works
    for step in range(12):
        s.bash(f"npm run lint -- src/cart{step}.ts", "ok\n" * 30 + f"checked src/cart{step}.ts\n")
    s.user(PASTED_LOG)
    s.say("The warning is harmless; I'll keep going with phase 2.")
    s.user("continue with phase 2")
    for step in range(12):
        s.bash(f"npm test -- checkout{step}", "PASS\n" * 40 + "Tests: 4 passed\n")
    s.say("Phase 2 is done: the checkout tests pass.")
    s.user(
        "<command-message>create-checkpoint is running…</command-message>\n"
        "<command-name>/create-checkpoint</command-name>\n<command-args>phase 2</command-args>"
    )
    s.meta(EXPANSION)
    for step in range(3):
        s.bash(f"git status --short # {step}", "M src/checkout.ts\n" * 20)
    path = s.write(tmp_path)
    conversation = load_conversations(path)[0]
    command = next(
        i for i, m in enumerate(conversation.messages) if "<command-name>" in str(m.get("content"))
    )
    return path, command


def _compact(path: Path, window: int = 6_000) -> tuple[CompactionResult, Any]:
    conversation = load_conversations(path)[0]
    config = CompactionConfig(context_length=window, protect_first_n=2)
    result = Compactor(config).compress(
        conversation.messages, force=True, recorded=conversation.record()
    )
    assert result.summary is not None
    return result, conversation


def test_the_working_directory_is_the_one_the_session_records(tmp_path: Path) -> None:
    path, _ = _session(tmp_path)
    result, _ = _compact(path)
    assert result.summary is not None
    state = result.summary.section_items("Active State")
    line = next(item for item in state if item.text.startswith("- Working directory:"))
    assert line.text == f"- Working directory: {PROJECT}"
    assert line.origin is not None and "`cwd` of the Claude Code record on line" in line.origin
    assert "/tmp" not in result.summary.sections["Active State"]


def test_without_a_record_a_cd_is_shown_as_the_evidence_it_is(tmp_path: Path) -> None:
    path, _ = _session(tmp_path)
    conversation = load_conversations(path)[0]
    config = CompactionConfig(context_length=6_000, protect_first_n=2)
    result = Compactor(config).compress(conversation.messages, force=True)
    assert result.summary is not None
    state = result.summary.sections["Active State"]
    assert "Working directory: /tmp (from `cd /tmp` in a command)" in state


def test_a_slash_command_and_its_expansion_are_the_latest_request(tmp_path: Path) -> None:
    path, command = _session(tmp_path)
    result, conversation = _compact(path)
    message = conversation.messages[command]
    assert conversation.marks[command] == SLASH_COMMAND
    assert EXPANSION.splitlines()[0] in message["content"]  # one turn: command and expansion
    assert result.summary is not None
    task = result.summary.section_items("Active Task")[0]
    assert task.text.startswith("/create-checkpoint phase 2\n\n# Create a checkpoint")
    assert task.sources == (command,)
    assert "continue with phase 2" not in result.summary.sections["Active Task"]
    details = result.phase("summarize").details
    assert details["latest_user_index"] == command
    assert details["latest_user_command"] == "/create-checkpoint"


def test_a_local_command_is_not_a_request(tmp_path: Path) -> None:
    s = _Session()
    s.user("fix the login bug")
    s.user("<command-name>/model</command-name>\n<command-message>model</command-message>")
    s.user("<local-command-stdout>Set model to opus</local-command-stdout>")
    conversation = load_conversations(s.write(tmp_path))[0]
    kinds = [conversation.marks.get(i) for i in range(len(conversation.messages))]
    assert kinds == [None, "command", "command"]
    assert not any("injected" in m for m in conversation.messages)  # beside them, not in them


def test_constraints_are_only_what_the_user_typed(tmp_path: Path) -> None:
    path, _ = _session(tmp_path)
    result, _ = _compact(path)
    assert result.summary is not None
    constraints = result.summary.sections["Constraints & Preferences"]
    # A rule cut by a hard wrap is one sentence again.
    assert (
        "Instead, in your README, briefly explain how to run the dev server locally." in constraints
    )
    assert "Do not touch the billing API." in constraints
    assert "never touch the payments module" in constraints  # the opening request's, from the head
    for false in (
        'Please use "proxy" instead',  # a pasted log line
        "Treat all user-supplied text as data",  # a line-numbered file line
        "should i enable rls already",  # a question
        "Never skip the test run",  # the slash command's expansion: its author's words
        "Do not use it.",
    ):
        assert false not in constraints, false
    pending = result.summary.sections["Pending User Asks"]
    assert "Please use" not in pending


def test_every_item_cites_messages_that_hold_it(tmp_path: Path) -> None:
    path, _ = _session(tmp_path)
    result, _ = _compact(path)
    assert result.summary is not None
    items = [item for section in result.summary.items.values() for item in section]
    assert items and all(item.sources or item.origin for item in items)
    assert result.summary.flagged() == []
    report = result.to_dict()
    assert report["summary_items"]["Active State"][0]["origin"].startswith("recorded: `cwd`")


def test_antigravity_transport_tags_are_never_quoted() -> None:
    messages = [
        {"role": "user", "content": "<USER_REQUEST>\nBuild the job board.\n</USER_REQUEST>"},
        {"role": "assistant", "content": "Starting."},
        *[
            m
            for step in range(10)
            for m in (
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"c{step}",
                            "type": "function",
                            "function": {"name": "run", "arguments": "{}"},
                        }
                    ],
                },
                {
                    "role": "tool",
                    "tool_call_id": f"c{step}",
                    "content": f"listing {step}\n" + f"src/jobs/page{step}.tsx ok\n" * 150,
                },
            )
        ],
        {
            "role": "user",
            "content": "<USER_REQUEST>\nNow add search, and never drop the filters.\n"
            "</USER_REQUEST>\n<ADDITIONAL_METADATA>\nThe current local time is: 12:47.\n"
            "</ADDITIONAL_METADATA>",
        },
        {"role": "assistant", "content": "On it."},
    ]
    config = CompactionConfig(context_length=4_000, protect_first_n=2)
    result = Compactor(config).compress(messages, force=True)
    assert result.summary is not None, result.phases[-1].details
    text = result.summary.text
    assert "USER_REQUEST" not in text and "ADDITIONAL_METADATA" not in text
    assert result.summary.sections["Active Task"] == "Now add search, and never drop the filters."
    assert result.summary.sections["Goal"] == "Build the job board."


def test_the_docs_table_of_section_rules_is_the_code() -> None:
    from compaction.summary.rules import rules_table

    docs = Path(__file__).resolve().parents[2] / "docs" / "summary.md"
    assert rules_table() in docs.read_text(encoding="utf-8")
