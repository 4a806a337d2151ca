"""Claude Code records as canonical messages: streamed blocks of one response merged, harness
text placed in the user turn it travelled in, and the compaction an agent recorded noted."""

from __future__ import annotations

from typing import Any

from compaction.formats.claude_chain import record_kind
from compaction.formats.common import (
    as_text,
    blocks_to_content,
    join_text,
    line_list,
    make_call,
    mark_injected,
    tool_message,
)
from compaction.formats.conversation import ImportReport, RecordedCompaction
from compaction.messages import INJECTED_KEY, SLASH_COMMAND, Message
from compaction.text.patterns import injected_kind
from compaction.text.user_words import slash_command

NAME = "claude-code"


def _attachment_text(attachment: dict[str, Any]) -> str | None:
    """The text an attachment put in front of the model, or None when it sent none."""
    content = attachment.get("content")
    if isinstance(content, str) and content.strip():
        return content
    lines = attachment.get("addedLines")
    if isinstance(lines, list) and lines:
        return "\n".join(str(line) for line in lines)
    for key in ("text", "prompt", "stdout"):
        if isinstance(attachment.get(key), str) and attachment[key].strip():
            return str(attachment[key])
    return None


def _wrapped(text: str) -> bool:
    stripped = text.strip()
    return stripped.startswith("<system-reminder>") and stripped.endswith("</system-reminder>")


class MessageBuilder:
    """Canonical messages from kept records, merging streamed blocks of one response."""

    def __init__(self, report: ImportReport, warnings: list[str]) -> None:
        self.messages: list[Message] = []
        self.open_message: dict[str, int] = {}  # message.id -> index in `messages`
        # message.id -> the first message it became: where its model call is placed.
        self.call_positions: dict[str, int] = {}
        self.report = report
        self.warnings = warnings
        self.compactions: list[RecordedCompaction] = []
        self.pending_boundary: tuple[int, dict[str, Any]] | None = None
        self.redacted: list[int] = []
        # The slash command the user just invoked (its index), until its expansion arrives.
        self.command_at: int | None = None

    def add(self, line: int, record: dict[str, Any]) -> None:
        command_at = self.command_at
        self.command_at = None  # an expansion follows its command directly, or not at all
        kind = record.get("type")
        if kind == "assistant" and isinstance(record.get("message"), dict):
            self._assistant(record["message"], line)
        elif kind == "user" and isinstance(record.get("message"), dict):
            if record.get("isCompactSummary"):
                self._compact_summary(line, record)
            elif record.get("isMeta") and command_at is not None:
                content = blocks_to_content(record["message"].get("content"))
                self._expansion(line, command_at, content)
            elif record.get("isMeta"):
                self._injected(line, blocks_to_content(record["message"].get("content")))
            else:
                self._user(record["message"])
        elif kind == "attachment" and isinstance(record.get("attachment"), dict):
            text = _attachment_text(record["attachment"])
            if text is None:
                self.report.skip(record_kind(record), "attachment with no text for the model", line)
                return
            self._injected(line, f"<system-reminder>\n{text}\n</system-reminder>")
        elif kind == "system" and record.get("subtype") == "compact_boundary":
            self.pending_boundary = (line, record)
            self.report.skip(record_kind(record), "compaction marker (listed in compactions)", line)
            return
        else:
            self.report.skip(record_kind(record), "not conversation", line)
            return
        self.report.imported += 1

    def _injected(self, line: int, content: Any) -> None:
        """Harness text the model saw: it travels in the user turn it follows (a user message
        of its own, marked injected, after the user's words; the API merges the two)."""
        text = content if isinstance(content, str) else None
        last = self.messages[-1] if self.messages else None
        if (
            text is not None
            and last is not None
            and last["role"] in ("user", "tool")
            and (isinstance(last.get("content"), str) or last.get("content") is None)
            and (last["role"] == "tool" or last.get(INJECTED_KEY) or _wrapped(text))
        ):
            # Joined to a tool result, to other harness text, or — as a <system-reminder> block,
            # which every reader of the user's words strips — to the user's own message; any
            # other harness text (a stop hook's feedback, a skill body) never joins the user's
            # words, which must stay theirs alone (the summary's Active Task quotes them).
            last["content"] = join_text([last.get("content") or "", text])
            return
        # On its own, the message is the harness's, whatever its text looks like (isMeta).
        kind = injected_kind(text) if text is not None else None
        self.messages.append(mark_injected({"role": "user", "content": content}, kind or "hook"))

    def _expansion(self, line: int, command_at: int, content: Any) -> None:
        """A prompt command's text, sent right after the `<command-name>` record the user's
        `/command` wrote: with it, one user turn and the user's request (a local command such
        as /model has none and stays harness text, answered by <local-command-stdout>)."""
        command = self.messages[command_at]
        if (
            not isinstance(content, str)
            or command_at != len(self.messages) - 1
            or injected_kind(content) is not None  # a hook's feedback, a reminder: not its text
        ):
            self._injected(line, content)
            return
        command["content"] = join_text([str(command.get("content") or ""), content])
        mark_injected(command, SLASH_COMMAND)

    def _compact_summary(self, line: int, record: dict[str, Any]) -> None:
        content = blocks_to_content(record["message"].get("content"))
        self.messages.append({"role": "user", "content": content})
        boundary = self.pending_boundary
        self.pending_boundary = None
        metadata = boundary[1].get("compactMetadata") if boundary is not None else None
        metadata = metadata if isinstance(metadata, dict) else {}
        trigger = metadata.get("trigger")
        tokens = metadata.get("preTokens")
        self.compactions.append(
            RecordedCompaction(
                position=len(self.messages) - 1,
                agent=NAME,
                trigger=trigger if trigger in ("auto", "manual") else "unknown",
                tokens_before=tokens if isinstance(tokens, int) else None,
                tokens_source="agent" if isinstance(tokens, int) else None,
                summary=content if isinstance(content, str) else as_text(content),
                line=boundary[0] if boundary is not None else line,
            )
        )

    def finish(self) -> None:
        if self.pending_boundary is not None:
            # A boundary with no summary after it (a truncated file): still a compaction.
            line, record = self.pending_boundary
            metadata = record.get("compactMetadata")
            metadata = metadata if isinstance(metadata, dict) else {}
            tokens = metadata.get("preTokens")
            self.compactions.append(
                RecordedCompaction(
                    position=len(self.messages),
                    agent=NAME,
                    trigger=str(metadata.get("trigger") or "unknown"),
                    tokens_before=tokens if isinstance(tokens, int) else None,
                    tokens_source="agent" if isinstance(tokens, int) else None,
                    summary=None,
                    line=line,
                )
            )
        if self.redacted:
            self.warnings.append(
                f"{line_list(self.redacted)}: {len(self.redacted)} redacted (encrypted) thinking "
                "block(s) left out"
            )

    def _assistant(self, message: dict[str, Any], line: int) -> None:
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[dict[str, Any]] = []
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                texts.append(str(block.get("text", "")))
            elif kind == "thinking":
                thoughts.append(str(block.get("thinking", "")))
            elif kind == "redacted_thinking":
                self.redacted.append(line)
            elif kind in ("tool_use", "server_tool_use"):
                calls.append(
                    make_call(str(block.get("id")), str(block.get("name")), block.get("input"))
                )
            else:
                texts.append(as_text(block))
        if isinstance(content, str):
            texts.append(content)
        messages = self.messages
        message_id = message.get("id")
        index = self.open_message.get(message_id) if isinstance(message_id, str) else None
        # Merge a streamed continuation only while nothing but its own tool results followed it.
        if index is not None and all(m["role"] == "tool" for m in messages[index + 1 :]):
            target = messages[index]
            tail = messages[index + 1 :]
            del messages[index + 1 :]
            if texts:
                target["content"] = join_text([target.get("content") or "", *texts])
            if thoughts:
                target["reasoning"] = join_text([target.get("reasoning", ""), *thoughts])
            if calls:
                target["tool_calls"] = [*target.get("tool_calls", []), *calls]
            messages.extend(tail)
            return
        new: Message = {"role": "assistant", "content": join_text(texts) or (None if calls else "")}
        if thoughts:
            new["reasoning"] = join_text(thoughts)
        if calls:
            new["tool_calls"] = calls
        messages.append(new)
        if isinstance(message_id, str):
            self.open_message[message_id] = len(messages) - 1
            self.call_positions.setdefault(message_id, len(messages) - 1)

    def _user(self, message: dict[str, Any]) -> None:
        content = message.get("content")
        if not isinstance(content, list):
            self.messages.append({"role": "user", "content": blocks_to_content(content)})
            if isinstance(content, str) and slash_command(content) is not None:
                self.command_at = len(self.messages) - 1
            return
        others: list[Any] = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                result = blocks_to_content(block.get("content"))
                if block.get("is_error") and isinstance(result, str):
                    result = result if result.startswith("Error") else f"Error: {result}"
                self.messages.append(tool_message(str(block.get("tool_use_id")), result))
            else:
                others.append(block)
        if others:
            self.messages.append({"role": "user", "content": blocks_to_content(others)})
