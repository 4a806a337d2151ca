"""An OpenCode session (`{info, messages: [{info, parts}]}`) as messages, calls and compactions.

What the model saw decides the mapping (OpenCode's `toModelMessages`): a user message's text
parts (not `ignored`), its non-text file parts, a `compaction` part as "What did we do so far?"
and a `subtask` part as "The following tool was executed by the user"; an assistant message
split at its `step-start` parts, each step one assistant message (text, reasoning, tool calls)
followed by its tool results; an assistant message that failed is not sent (unless it was
aborted after it produced something).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from compaction.formats.common import as_text, join_text, line_list, make_call, mark_injected
from compaction.formats.common import tool_message as result_message
from compaction.formats.conversation import (
    Conversation,
    ImportReport,
    ModelCall,
    RecordedCompaction,
)
from compaction.messages import Message
from compaction.text.patterns import injected_kind

NAME = "opencode"
#: What OpenCode sends in place of parts that hold no text of their own.
COMPACTION_PROMPT = "What did we do so far?"
SUBTASK_PROMPT = "The following tool was executed by the user"
#: What OpenCode adds as a synthetic user message after an automatic compaction.
CONTINUE_PROMPT = "Continue if you have next steps"
INTERRUPTED = "[Tool execution was interrupted]"
TEXT_FILES = ("text/plain", "application/x-directory")
SKIPPED = {
    "step-start": "the start of a model call (steps split the assistant messages)",
    "step-finish": "the end of a model call: its tokens and cost are kept in calls",
    "patch": "a snapshot of the files a step changed (not sent to the model)",
    "snapshot": "a file snapshot (not sent to the model)",
    "retry": "a retried request (not sent to the model)",
    "agent": "an @agent mention (OpenCode sends it as text parts that follow)",
    "file (text)": "a file or folder the user attached: its text is in the synthetic text parts",
    "reasoning (encrypted)": "reasoning the provider returned encrypted: nothing to read",
    "text (ignored)": "text OpenCode marked ignored: not sent to the model",
}


@dataclass
class Step:
    texts: list[str] = field(default_factory=list)
    thoughts: list[str] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    results: list[Message] = field(default_factory=list)
    finish: dict[str, Any] | None = None

    def empty(self) -> bool:
        return not (self.texts or self.thoughts or self.calls)


@dataclass
class Mapper:
    report: ImportReport
    lines: dict[str, int]  # part or message id -> line in the source file
    messages: list[Message] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    compactions: list[RecordedCompaction] = field(default_factory=list)
    calls: list[ModelCall] = field(default_factory=list)
    pending: dict[str, Any] | None = None  # the compaction part awaiting its summary
    cleared: list[int] = field(default_factory=list)
    interrupted: list[int] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def line(self, part: dict[str, Any]) -> int | None:
        return self.lines.get(str(part.get("id")))

    def skip(self, kind: str, part: dict[str, Any], reason: str | None = None) -> None:
        self.report.skip(
            kind, reason or SKIPPED.get(kind, "not sent to the model"), self.line(part)
        )

    def message(self, entry: dict[str, Any]) -> None:
        info = entry.get("info") if isinstance(entry.get("info"), dict) else {}
        assert isinstance(info, dict)
        parts = [p for p in entry.get("parts") or [] if isinstance(p, dict)]
        if info.get("role") == "user":
            self.user(parts)
        elif info.get("role") == "assistant":
            self.assistant(info, parts)
        else:
            self.report.skip(str(info.get("role")), "a message of no known role", None)

    # -- user messages ----------------------------------------------------------------------

    def user(self, parts: list[dict[str, Any]]) -> None:
        words: list[str] = []
        harness: list[str] = []
        media: list[dict[str, Any]] = []
        for part in parts:
            kind = part.get("type")
            if kind == "text" and part.get("ignored"):
                self.skip("text (ignored)", part)
                continue
            if kind == "text":
                (harness if part.get("synthetic") else words).append(str(part.get("text", "")))
            elif kind == "file":
                if part.get("mime") in TEXT_FILES:
                    self.skip("file (text)", part)
                    continue
                media.append(_file_part(part))
            elif kind == "compaction":
                self.pending = part
                harness.append(COMPACTION_PROMPT)
            elif kind == "subtask":
                harness.append(SUBTASK_PROMPT)
            else:
                self.skip(str(kind), part)
                continue
            self.report.imported += 1
        text = join_text([w.strip() for w in words])
        if text or media:
            content: Any = [{"type": "text", "text": text}, *media] if media else text
            if media and not text:
                content = media
            self.messages.append({"role": "user", "content": content})
        if harness:
            joined = join_text([h.strip() for h in harness])
            kind = "compaction" if self.pending is not None else injected_kind(joined)
            if kind is None and joined.startswith(CONTINUE_PROMPT):
                kind = "continuation"
            self.messages.append(
                mark_injected({"role": "user", "content": joined}, kind or "context")
            )

    # -- assistant messages -----------------------------------------------------------------

    def assistant(self, info: dict[str, Any], parts: list[dict[str, Any]]) -> None:
        error = info.get("error") if isinstance(info.get("error"), dict) else None
        produced = any(p.get("type") not in ("step-start", "reasoning") for p in parts)
        if error is not None and not (error.get("name") == "MessageAbortedError" and produced):
            self.unsent(info, error, parts)
            return
        steps: list[Step] = [Step()]
        for part in parts:
            kind = part.get("type")
            step = steps[-1]
            if kind == "step-start":
                if not step.empty() or step.finish is not None:
                    steps.append(Step())
                self.skip("step-start", part)
            elif kind == "step-finish":
                step.finish = part
                self.skip("step-finish", part)
            elif kind == "text":
                step.texts.append(str(part.get("text", "")))
                self.report.imported += 1
            elif kind == "reasoning" and str(part.get("text", "")).strip():
                step.thoughts.append(str(part["text"]))
                self.report.imported += 1
            elif kind == "reasoning":
                self.skip("reasoning (encrypted)", part)
            elif kind == "tool":
                self.tool(step, part)
                self.report.imported += 1
            else:
                self.skip(str(kind), part)
        texts: list[str] = []
        for step in steps:
            position = len(self.messages)
            if not step.empty():
                self.messages.append(_assistant_message(step))
                self.messages.extend(step.results)
                texts += step.texts
            if step.finish is not None:
                self.calls.append(self.call(step.finish, info, position))
        if not any(step.finish for step in steps) and isinstance(info.get("tokens"), dict):
            self.calls.append(self.call(info, info, len(self.messages) - 1))
        if info.get("summary") is True and self.pending is not None:
            self.compaction(join_text(texts))

    def unsent(
        self, info: dict[str, Any], error: dict[str, Any], parts: list[dict[str, Any]]
    ) -> None:
        """A response that failed: OpenCode never sends it to the model again, but the calls it
        made were made (and billed)."""
        name = str(error.get("name") or "an error")
        self.failed.append(name)
        for part in parts:
            if part.get("type") == "step-finish":
                self.calls.append(self.call(part, info, len(self.messages)))
            self.skip(
                f"{part.get('type')} (failed response)",
                part,
                f"part of a response that failed ({name}); OpenCode does not send it to the model",
            )

    def tool(self, step: Step, part: dict[str, Any]) -> None:
        state = part.get("state") if isinstance(part.get("state"), dict) else {}
        assert isinstance(state, dict)
        call_id = str(part.get("callID") or part.get("id"))
        step.calls.append(make_call(call_id, str(part.get("tool")), state.get("input")))
        status = state.get("status")
        line = self.line(part)
        if status == "completed":
            output = as_text(state.get("output"))
            attachments = [a for a in state.get("attachments") or [] if isinstance(a, dict)]
            notes = [
                f"[Attached {a.get('mime')}: {a.get('filename') or 'file'}]" for a in attachments
            ]
            time = state.get("time") if isinstance(state.get("time"), dict) else {}
            if isinstance(time, dict) and time.get("compacted") and line is not None:
                self.cleared.append(line)
            step.results.append(result_message(call_id, join_text([output, *notes], "\n")))
        elif status == "error":
            error = as_text(state.get("error"))
            step.results.append(
                result_message(call_id, error if error.startswith("Error") else f"Error: {error}")
            )
        else:
            if line is not None:
                self.interrupted.append(line)
            step.results.append(result_message(call_id, f"Error: {INTERRUPTED}"))

    def call(self, holder: dict[str, Any], info: dict[str, Any], position: int) -> ModelCall:
        """A step's usage: OpenCode's `tokens.input` is the fresh part of the prompt (it takes the
        cache reads and writes out for every provider), so the prompt is their sum. Before
        OpenCode split reasoning out of `output` (1.2: `total` = input + output + cache), the
        output holds it; after, `total` counts it apart and it is added back."""
        tokens = holder.get("tokens") if isinstance(holder.get("tokens"), dict) else {}
        assert isinstance(tokens, dict)
        cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
        assert isinstance(cache, dict)
        fresh, output = _count(tokens.get("input")), _count(tokens.get("output"))
        reasoning = _count(tokens.get("reasoning"))
        read, write = _count(cache.get("read")), _count(cache.get("write"))
        prompt = None if fresh is None else fresh + (read or 0) + (write or 0)
        total = _count(tokens.get("total"))
        if (
            output is not None
            and reasoning
            and prompt is not None
            and total == prompt + output + reasoning
        ):
            output += reasoning
        cost = holder.get("cost")
        created = (
            (info.get("time") or {}).get("created") if isinstance(info.get("time"), dict) else None
        )
        return ModelCall(
            position=position,
            input_tokens=prompt,
            cache_read_tokens=read,
            cache_write_tokens=write,
            output_tokens=output,
            reasoning_tokens=reasoning,
            model=info.get("modelID") if isinstance(info.get("modelID"), str) else None,
            timestamp=_iso(created),
            cost_usd=float(cost)
            if isinstance(cost, int | float) and not isinstance(cost, bool)
            else None,
            line=self.line(holder),
        )

    def compaction(self, summary: str) -> None:
        part = self.pending
        assert part is not None
        self.pending = None
        before = next((c for c in reversed(self.calls[:-1]) if c.input_tokens), None)
        tokens = (
            before.input_tokens + (before.output_tokens or 0)
            if before is not None and before.input_tokens is not None
            else None
        )
        position = max(i for i, m in enumerate(self.messages) if m["role"] == "assistant")
        self.compactions.append(
            RecordedCompaction(
                position=position,
                agent=NAME,
                trigger="auto" if part.get("auto") else "manual",
                tokens_before=tokens,
                tokens_source="usage" if tokens is not None else None,
                summary=summary or None,
                line=self.line(part),
            )
        )
        # No warning: the agent's own compaction is listed in `compactions`.

    def finish(self) -> None:
        if self.cleared:
            self.warnings.append(
                f"{line_list(self.cleared)}: {len(self.cleared)} tool output(s) OpenCode had "
                'cleared from the model\'s context ("[Old tool result content cleared]") are '
                "imported as the file records them, in full"
            )
        if self.interrupted:
            self.warnings.append(
                f"{line_list(self.interrupted)}: {len(self.interrupted)} tool call(s) never "
                f"finished; answered {INTERRUPTED!r}, as OpenCode tells the model"
            )
        if self.failed:
            names = ", ".join(sorted(set(self.failed)))
            self.warnings.append(
                f"{len(self.failed)} assistant message(s) that failed ({names}) left out: "
                "OpenCode does not send them to the model"
            )


def _assistant_message(step: Step) -> Message:
    message: Message = {"role": "assistant", "content": join_text(step.texts) or None}
    if step.thoughts:
        message["reasoning"] = join_text(step.thoughts)
    if step.calls:
        message["tool_calls"] = step.calls
    elif message["content"] is None:
        message["content"] = ""
    return message


def _file_part(part: dict[str, Any]) -> dict[str, Any]:
    mime, url = str(part.get("mime") or ""), str(part.get("url") or "")
    if mime.startswith("image/"):
        return {"type": "image_url", "image_url": {"url": url}}
    return {"type": "text", "text": f"[Attached {mime}: {part.get('filename') or url}]"}


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _iso(milliseconds: Any) -> str | None:
    if not isinstance(milliseconds, int | float) or isinstance(milliseconds, bool):
        return None
    moment = dt.datetime.fromtimestamp(milliseconds / 1000, tz=dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def session_conversation(session: dict[str, Any], lines: dict[str, int]) -> Conversation:
    """The conversation of one exported (or storage-assembled) session."""
    info = session.get("info") if isinstance(session.get("info"), dict) else {}
    assert isinstance(info, dict)
    entries = [e for e in session.get("messages") or [] if isinstance(e, dict)]
    report = ImportReport(
        records=sum(len(e.get("parts") or []) for e in entries),
    )
    mapper = Mapper(report=report, lines=lines)
    for entry in entries:
        mapper.message(entry)
    mapper.finish()
    metadata: dict[str, Any] = {
        key: info[key] for key in ("id", "slug", "projectID", "version", "parentID") if key in info
    }
    directory = info.get("directory")
    for entry in entries:
        message_info = entry.get("info") if isinstance(entry.get("info"), dict) else {}
        assert isinstance(message_info, dict)
        path = message_info.get("path") if isinstance(message_info.get("path"), dict) else {}
        assert isinstance(path, dict)
        directory = directory or path.get("cwd")
        if isinstance(message_info.get("modelID"), str):
            metadata.setdefault("model", message_info["modelID"])
            metadata.setdefault("provider", message_info.get("providerID"))
    if isinstance(directory, str):
        metadata["cwd"] = directory
    title = info.get("title")
    return Conversation(
        messages=mapper.messages,
        format=NAME,
        title=title if isinstance(title, str) else None,
        metadata=metadata,
        warnings=mapper.warnings,
        compactions=mapper.compactions,
        report=report,
        calls=mapper.calls,
    )
