"""A Cline task's `api_conversation_history.json` (Anthropic messages) as canonical messages.

Cline does not answer its tool calls with `tool_result` blocks: the next user message holds a
text block `[read_file for 'src/x.ts'] Result:` followed by the blocks of the result, then the
harness's `<environment_details>`. Older versions (and Roo Code, Kilo Code in XML mode) write
no `tool_use` block either: the call is XML in the assistant's text, `<read_file><path>…</path>
</read_file>`. Both become canonical calls answered by tool messages; a call Cline refused to
run ("Tool [x] was not executed because…", "Skipping tool [x] due to…") is answered by that
text. The user's words are split from the harness's: the request inside `<task>`, a reply
inside `<feedback>` or `<user_message>`; environment details, task resumptions and the
"you did not use a tool" nudges are marked injected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from compaction.formats.common import (
    as_text,
    image_part,
    join_text,
    make_call,
    mark_injected,
    split_user_words,
    tool_message,
)
from compaction.formats.conversation import ImportReport, RecordedCompaction
from compaction.messages import Message

RESULT = re.compile(r"\A\[(?P<name>[\w-]+)(?: for .*?)?\] Result:[ \t]*\n?", re.S)
REFUSED = re.compile(r"\A(?:Tool|Skipping tool) \[(?P<name>[\w-]+)\b[^\]]*\]", re.S)
ENVIRONMENT = "<environment_details>"
WORKING_DIRECTORY = re.compile(r"# Current (?:Working|Workspace) Directory \((?P<cwd>[^)\n]+)\)")
#: Where a user's own words sit inside the text Cline sends.
WORDS = re.compile(
    r"<(?P<tag>task|feedback|user_message|answer)>\n?(?P<words>.*?)\n?</(?P=tag)>", re.S
)
#: Text Cline writes as a user turn: (opening, kind of injected text).
HARNESS = (
    ("[TASK RESUMPTION]", "continuation"),
    ("[ERROR] You did not use a tool", "continuation"),
    ("[Response interrupted", "interruption"),
    (ENVIRONMENT, "context"),
)
#: The tools Cline, Roo Code and Kilo Code call in XML: a tag at the start of a line.
XML_TOOLS = (
    "execute_command read_file write_to_file replace_in_file apply_diff insert_content "
    "search_and_replace search_files list_files list_code_definition_names codebase_search "
    "browser_action use_mcp_tool access_mcp_resource ask_followup_question attempt_completion "
    "plan_mode_respond act_mode_respond new_task switch_mode fetch_instructions "
    "load_mcp_documentation update_todo_list web_fetch condense summarize_task new_rule "
    "report_bug focus_chain run_slash_command generate_image"
).split()
XML_CALL = re.compile(
    r"^<(?P<name>" + "|".join(XML_TOOLS) + r")>\s*\n?(?P<body>.*?)</(?P=name)>", re.S | re.M
)
XML_PARAM = re.compile(r"<(?P<name>\w+)>\n?(?P<value>.*?)\n?</(?P=name)>", re.S)


@dataclass
class Builder:
    report: ImportReport
    agent: str = "cline"
    messages: list[Message] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    compactions: list[RecordedCompaction] = field(default_factory=list)
    #: api message index -> index of the canonical assistant message it became
    assistant_at: dict[int, int] = field(default_factory=dict)
    summaries: set[int] = field(default_factory=set)  # api indexes of condensed summaries
    open_calls: list[tuple[str, str]] = field(default_factory=list)  # (id, name), in call order
    cwd: str | None = None
    unanswered: list[int] = field(default_factory=list)
    xml_calls: int = 0

    def add(self, index: int, entry: Any) -> None:
        if not isinstance(entry, dict) or entry.get("role") not in ("user", "assistant"):
            self.report.skip("not a message", "an entry without role user/assistant", index)
            return
        if entry["role"] == "assistant":
            self.assistant(index, entry)
        else:
            self.user(index, entry.get("content"))
        self.report.imported += 1

    def assistant(self, index: int, entry: dict[str, Any]) -> None:
        self.close_calls(index)
        content = entry.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[dict[str, Any]] = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                texts.append(str(block.get("text") or ""))
            elif kind in ("thinking", "reasoning"):
                thoughts.append(str(block.get("thinking") or block.get("text") or ""))
            elif kind == "tool_use":
                calls.append(
                    make_call(str(block.get("id")), str(block.get("name")), block.get("input"))
                )
            elif kind != "redacted_thinking":
                texts.append(as_text(block))
        text = join_text(texts)
        if not calls:
            text, calls = self.xml_tool_calls(index, text)
        message: Message = {"role": "assistant", "content": text or (None if calls else "")}
        if thoughts:
            message["reasoning"] = join_text(thoughts)
        if calls:
            message["tool_calls"] = calls
        self.messages.append(message)
        self.assistant_at[index] = len(self.messages) - 1
        self.open_calls = [(c["id"], c["function"]["name"]) for c in calls]
        if entry.get("isSummary"):
            # Roo Code's (and Kilo Code's) condensed context: a summary the task goes on from.
            self.summaries.add(index)
            self.compactions.append(
                RecordedCompaction(
                    position=len(self.messages) - 1,
                    agent=self.agent,
                    summary=text or None,
                )
            )

    def xml_tool_calls(self, index: int, text: str) -> tuple[str, list[dict[str, Any]]]:
        """Calls written as XML in the text: the text without them, and the calls."""
        calls = []
        for number, match in enumerate(XML_CALL.finditer(text)):
            params = {
                m.group("name"): m.group("value") for m in XML_PARAM.finditer(match.group("body"))
            }
            calls.append(make_call(f"cline_{index}_{number}", match.group("name"), params))
        if not calls:
            return text, []
        self.xml_calls += len(calls)
        return XML_CALL.sub("", text).strip(), calls

    def close_calls(self, index: int) -> None:
        """Answer what the last turn left open (the task ended, or Cline wrote no result), so
        that the conversation stays one a provider accepts; said in a warning."""
        for call_id, _name in self.open_calls:
            self.messages.append(tool_message(call_id, "(no result recorded for this call)"))
            self.unanswered.append(index)
        self.open_calls = []

    def take(self, name: str) -> str | None:
        for position, (call_id, called) in enumerate(self.open_calls):
            if called == name:
                del self.open_calls[position]
                return call_id
        if self.open_calls:
            return self.open_calls.pop(0)[0]
        return None

    def user(self, index: int, content: Any) -> None:
        blocks = (
            content if isinstance(content, list) else [{"type": "text", "text": as_text(content)}]
        )
        results: list[tuple[str, list[str]]] = []  # (call id, texts)
        spoken: list[Message] = []  # the user's words and the harness's, in order
        images: list[dict[str, Any]] = []
        current: list[str] | None = None  # the result the blocks now belong to
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "tool_result":
                call_id = str(block.get("tool_use_id"))
                self.open_calls = [c for c in self.open_calls if c[0] != call_id]
                results.append((call_id, [as_text(_block_text(block.get("content")))]))
                current = None
                continue
            if kind == "image":
                images.append(image_part(block))
                continue
            text = str(block.get("text") or "") if kind == "text" else as_text(block)
            header = RESULT.match(text) or REFUSED.match(text)
            if header is not None and self.open_calls:
                answered = self.take(header.group("name"))
                assert answered is not None  # open calls remain
                rest = text[header.end() :] if RESULT.match(text) else text
                current = [rest] if rest.strip() else []
                results.append((answered, current))
            elif current is not None and not _opens_harness_text(text):
                current.append(text)
            else:
                current = None
                spoken += self.spoken(text)
        for call_id, texts in results:
            body = join_text(texts)
            words = WORDS.search(body)
            # An <answer> to a question is the tool's result; a <feedback> is the user
            # steering the task.
            if words is not None and words.group("tag") in ("feedback", "user_message"):
                # The user's reply, sent inside the result: their own message after the results.
                spoken.insert(0, {"role": "user", "content": words.group("words").strip()})
                body = (body[: words.start()] + body[words.end() :]).strip()
            self.messages.append(tool_message(call_id, body))
        self.close_calls(index)  # before the user's words: results follow their calls
        if images:
            spoken.append({"role": "user", "content": images})
        self.messages.extend(spoken)

    def spoken(self, text: str) -> list[Message]:
        if self.cwd is None:
            found = WORKING_DIRECTORY.search(text)
            self.cwd = found.group("cwd").strip() if found else None
        stripped = text.lstrip()
        kind = next((kind for opening, kind in HARNESS if stripped.startswith(opening)), None)
        if RESULT.match(text) or REFUSED.match(text):
            kind = "tool-result"  # a result no open call was waiting for: still the tool's text
        words = WORDS.search(text)
        if words is not None:
            # The wrapper tags are Cline's markup around the words, not text of either side.
            said = words.group("words")
            unwrapped = text[: words.start()] + said + text[words.end() :]
            start = words.start()
            return split_user_words(unwrapped, start, start + len(said), kind or "context")
        if kind is not None:
            return [mark_injected({"role": "user", "content": text.strip()}, kind)]
        return [{"role": "user", "content": text.strip()}] if text.strip() else []

    def finish(self) -> None:
        # Calls still open here are the task's last: left unanswered, as the file has them.
        if self.unanswered:
            self.warnings.append(
                f"messages[{', '.join(map(str, sorted(set(self.unanswered))))}]: "
                f"{len(self.unanswered)} tool call(s) had no result in the next user message; "
                'answered "(no result recorded for this call)"'
            )
        if self.xml_calls:
            self.warnings.append(
                f"{self.xml_calls} tool call(s) written as XML in the assistant's text (Cline's "
                "older tool format) imported as tool calls"
            )


def _opens_harness_text(text: str) -> bool:
    """A block that is not part of the result before it: Cline's own text, or the user's."""
    stripped = text.lstrip()
    return stripped.startswith(tuple(opening for opening, _ in HARNESS)) or stripped.startswith(
        ("<task>", "<user_message>")
    )


def _block_text(content: Any) -> Any:
    if isinstance(content, list):
        return join_text(
            [str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in content], "\n"
        )
    return content
