"""One file of a corpus, scanned: its conversations' size, the usage the file records, and every
compaction its agent made, audited for what the agent forgot.

`scan_file` is the task a corpus scan runs for every file, in this process, in local worker
processes or on Dask workers: a module-level function of picklable arguments that never raises
for a bad file (a corrupt or unreadable file is a `FileScan` with its error), so one file cannot
stop the others.

Trigger tokens come from the provider's usage when the file records it: the last model call
before the compaction, prompt plus reply (the reply is in the next prompt; for OpenCode this
equals the tokens the agent recorded for its compaction). Else the agent's own record (Claude
Code's `preTokens`), else our count of what it compacted. Tokens after are the first call's
prompt after the compaction when there is one (it includes the system prompt and tool schemas
the provider counted), else our count of the system prompt and the agent's summary.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from compaction.errors import CompactionError, UnknownFormatError
from compaction.formats.conversation import Conversation, ModelCall, RecordedCompaction
from compaction.lab.corpus.records import (
    COUNTED,
    ERROR,
    NOT_A_SESSION,
    RECORDED,
    USAGE,
    CompactionScan,
    FileScan,
    SessionScan,
)
from compaction.lab.corpus.sources import Source
from compaction.text.redact import redact
from compaction.tokens import TokenCounter, make_counter

#: A price for a session's recorded calls in US dollars, or None when it cannot price them. The
#: cost model (issue #36) plugs in here; until then a scan fills `cost_usd` only from what the
#: file itself says its calls cost.
Pricer = Callable[[Sequence[ModelCall]], float | None]

#: What reading a file may raise besides our own errors (a file truncated mid-record, a
#: structure no importer expected); anything else is a bug and is recorded with its type.
READ_FAILURES = (OSError, ValueError, TypeError, KeyError, RecursionError, UnicodeError)
TITLE_CHARS = 200


def _sum(values: Sequence[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _context_of(call: ModelCall) -> int | None:
    """The context a call left behind: its prompt plus its reply."""
    if call.input_tokens is None:
        return None
    return call.input_tokens + (call.output_tokens or 0)


def _around(calls: Sequence[ModelCall], position: int) -> tuple[int | None, int | None]:
    """(context before, prompt after) a compaction at `position`, from the recorded usage."""
    before = [c for c in calls if c.position < position and c.input_tokens is not None]
    after = [c for c in calls if c.position > position and c.input_tokens is not None]
    last = max(before, key=lambda c: c.position) if before else None
    first = min(after, key=lambda c: c.position) if after else None
    return (
        _context_of(last) if last is not None else None,
        first.input_tokens if first is not None else None,
    )


def _compactions(
    conversation: Conversation, counter: TokenCounter, ours: bool
) -> list[CompactionScan]:
    from compaction.lab.audit import audit

    if not conversation.compactions:
        return []
    audited = audit(conversation, counter, ours=ours).events
    recorded: list[RecordedCompaction] = sorted(conversation.compactions, key=lambda c: c.position)
    found = []
    for number, (event, agent_record) in enumerate(zip(audited, recorded, strict=True), 1):
        before_usage, after_usage = _around(conversation.calls, agent_record.position)
        # The agent's own figure at the compaction first (Claude Code's preTokens: what it
        # compared with its threshold), then the last call's usage before it (as the importer
        # took it, or from the calls), then our count.
        if agent_record.tokens_before is not None:
            trigger = agent_record.tokens_before
            source = USAGE if agent_record.tokens_source == "usage" else RECORDED
        elif before_usage is not None:
            trigger, source = before_usage, USAGE
        else:
            trigger, source = event.tokens_before, COUNTED
        if after_usage is not None:
            after, after_source = after_usage, USAGE
        elif event.agent_tokens_after is not None:
            after, after_source = event.agent_tokens_after, COUNTED
        else:
            after, after_source = None, None
        readable = event.kept_by_agent is not None
        by_kind: dict[str, int] = {}
        for fact in event.forgotten:
            by_kind[fact.kind] = by_kind.get(fact.kind, 0) + 1
        found.append(
            CompactionScan(
                number=number,
                position=agent_record.position,
                kind=agent_record.trigger,
                line=agent_record.line,
                trigger_tokens=trigger,
                trigger_source=source,
                tokens_before_recorded=agent_record.tokens_before,
                tokens_after=after,
                after_source=after_source,
                ratio=round(after / trigger, 4) if after is not None and trigger else None,
                summary_tokens=event.summary_tokens,
                summary_readable=readable,
                facts_before=event.facts_before,
                kept_by_agent=event.kept_by_agent,
                forgotten=len(event.forgotten) if readable else None,
                forgotten_by_kind=by_kind,
                pending_request_lost=(
                    int(by_kind.get("latest_request", 0) > 0) if readable else None
                ),
                window=event.window,
                kept_by_ours=event.kept_at_agent_size,
            )
        )
    return found


def scan_conversation(
    conversation: Conversation,
    number: int,
    agent: str | None,
    project: str = "",
    counter: TokenCounter | None = None,
    ours: bool = False,
    pricer: Pricer | None = None,
) -> SessionScan:
    """One conversation's row and its compactions' rows."""
    counter = counter or make_counter()
    calls = conversation.calls
    model = conversation.metadata.get("model")
    cwd = conversation.metadata.get("cwd")
    recorded_costs = [c.cost_usd for c in calls if c.cost_usd is not None]
    recorded_cost = round(sum(recorded_costs), 6) if recorded_costs else None
    priced = pricer(calls) if pricer is not None and calls else None
    title = conversation.title
    return SessionScan(
        conversation=number,
        agent=agent or conversation.format,
        format=conversation.format,
        title=redact(title)[:TITLE_CHARS] if isinstance(title, str) and title else None,
        model=model if isinstance(model, str) else None,
        project=project or (cwd if isinstance(cwd, str) else None),
        messages=len(conversation.messages),
        tokens=counter.count_messages(conversation.messages),
        calls=len(calls),
        input_tokens=_sum([c.input_tokens for c in calls]),
        output_tokens=_sum([c.output_tokens for c in calls]),
        cache_read_tokens=_sum([c.cache_read_tokens for c in calls]),
        cache_write_tokens=_sum([c.cache_write_tokens for c in calls]),
        peak_input_tokens=max((c.input_tokens for c in calls if c.input_tokens), default=None),
        recorded_cost_usd=recorded_cost,
        # The file's own figure when every call has one; else a price, when one can be made.
        cost_usd=recorded_cost if calls and len(recorded_costs) == len(calls) else priced,
        compactions=_compactions(conversation, counter, ours),
    )


def scan_file(source: Source, ours: bool = False, pricer: Pricer | None = None) -> FileScan:
    """Read one file and scan every conversation in it; never raises for a bad file."""
    from compaction.formats import load_conversations

    started = time.perf_counter()
    scanned = FileScan(
        path=source.path,
        size=source.size,
        mtime=source.mtime,
        agent=source.agent,
        project=source.project,
    )
    try:
        conversations = load_conversations(source.path)
        counter = make_counter()
        scanned.sessions = [
            scan_conversation(c, n, source.agent, source.project, counter, ours, pricer)
            for n, c in enumerate(conversations)
        ]
        scanned.warnings = sum(len(c.warnings) for c in conversations)
    except UnknownFormatError as exc:
        scanned.status, scanned.error = NOT_A_SESSION, _reason(exc, source.path)
    except CompactionError as exc:
        scanned.status, scanned.error = ERROR, _reason(exc, source.path)
    except READ_FAILURES as exc:
        scanned.status, scanned.error = ERROR, f"{type(exc).__name__}: {exc}"
    scanned.duration_s = round(time.perf_counter() - started, 4)
    return scanned


def _reason(exc: CompactionError, path: str) -> str:
    """The error without the file name (the row names it) and without the importer's list of
    every format it tried (that is for a file the user opened, not a row of a table)."""
    text = str(exc).split(" Tried:")[0]
    return text.removeprefix(f"{path}: ")


def failed_file(source: Source, error: BaseException) -> FileScan:
    """The row of a file whose task died outside `scan_file` (a worker killed, a lost Dask
    worker): recorded with its error like any unreadable file."""
    return FileScan(
        path=source.path,
        size=source.size,
        mtime=source.mtime,
        agent=source.agent,
        project=source.project,
        status=ERROR,
        error=f"{type(error).__name__}: {error}",
    )


def as_dict(scan: FileScan) -> dict[str, Any]:
    return scan.to_dict()
