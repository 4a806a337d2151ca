"""Write the sample sessions and their index (stdlib only, deterministic).

Run from the repository root:  .venv/bin/python sample_sessions/build_samples.py

Every sample is written for this project (never copied from the shared corpus). Each tells a
story that exercises one part of the compaction algorithm; index.json carries the description
the app shows next to it and the settings that make the story visible. Re-running this script
reproduces the committed files byte for byte.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
#: Where the samples go: package data of compaction.lab.samples, so a wheel ships them.
OUT = HERE.parent / "compaction" / "lab" / "samples"

from builders import (  # noqa: E402
    coding,
    common,
    other_formats,
    research,
    teaching,
    variants,
)

SAMPLES: list[dict[str, Any]] = [
    {
        "id": "fix-failing-tests",
        "file": "fix-failing-tests.openai.json",
        "format": "openai",
        "title": "Coding agent fixes a failing pytest suite",
        "description": (
            "A coding agent gets a Flask + SQLite project's test suite green after a bad merge: "
            "~125 messages and ~67K tokens, over the 64K trigger of a 128K window. Step to "
            "Phase 1 to see tasklog/users.py, read three times with identical output, "
            "deduplicated, and the 30 KB verbose pytest log shrunk to one line; the one-liners "
            "keep the `sqlite3.IntegrityError: UNIQUE constraint failed: users.email` evidence. "
            "The summary should carry the user's rules (never modify the migrations, use "
            "`pytest -x`) and the final request to commit on a branch."
        ),
        "settings": {"context_length": 128000},
        "build": coding.build,
    },
    {
        "id": "already-compacted",
        "file": "already-compacted.openai.json",
        "format": "openai",
        "title": "Second compaction: updating an earlier summary",
        "description": (
            "The same project a day later: the session was compacted once already, so it holds a "
            "`[CONTEXT COMPACTION — REFERENCE ONLY]` summary (13 sections, Completed Actions 1–9) "
            "and the system prompt carries the compaction note. New turns add password reset by "
            "e-mail. Compacting it is an iterative update: watch Phase 3 take the old summary out "
            "and continue the numbering from 10, and Phase 4 leave the system note single."
        ),
        "settings": {},
        "build": variants.build_already_compacted,
    },
    {
        "id": "anchor-last-user",
        "file": "anchor-last-user.openai.json",
        "format": "openai",
        "title": "The latest request would fall in the middle",
        "description": (
            "The user asks for a dependency audit, then the agent runs a long chain of tool calls "
            "with large outputs and no further user message. With default budgets the tail walk "
            "stops well after that request; step to Phase 2 to see it pinned: moving the cut back "
            "would drag the whole chain into the tail, so the request is kept verbatim right "
            "after the summary and the chain goes into the summary."
        ),
        "settings": {},
        "build": variants.build_anchor,
    },
    {
        "id": "orphans",
        "file": "orphans.openai.json",
        "format": "openai",
        "title": "An interrupted run leaves orphaned tool calls",
        "description": (
            "A database migration run is interrupted with Ctrl-C: one tool call never got its "
            "result, and after the agent process restarted, a late result arrived for a call id "
            "the new process never issued. Step to Phase 5 to see the stub added for the call "
            "and the stray result removed, each listed as an orphan fix."
        ),
        "settings": {},
        "build": variants.build_orphans,
    },
    {
        "id": "research-session",
        "file": "research-session.anthropic.json",
        "format": "anthropic",
        "title": "Research agent on three payment-app problems (Anthropic format)",
        "description": (
            "A long Anthropic Messages session (content blocks, thinking, tool_use/tool_result) in "
            "which an agent investigates Stripe webhook signature failures, a database "
            "connection-pool exhaustion and a checkout CSS layout bug. Compact it twice: without "
            "a focus and with the focus 'the Stripe webhook', and compare how much of the "
            "summary each topic gets."
        ),
        "settings": {"focus": "the Stripe webhook"},
        "build": research.build,
    },
    {
        "id": "teaching-example",
        "file": "teaching-example.openai.json",
        "format": "openai",
        "title": "The seed's worked example, at 128K",
        "description": teaching.DESCRIPTION,
        "settings": {"context_length": 128000},
        "build": teaching.build,
    },
    {
        "id": "quick-fix",
        "file": "quick-fix.claude-code.jsonl",
        "format": "claude-code",
        "title": "Quick fix in Claude Code (session JSONL)",
        "description": (
            "A short Claude Code session fixing an off-by-one in a pagination helper, stored as "
            "Claude Code writes it: streamed assistant lines sharing one message id, tool_result "
            "records, and bookkeeping records the importer skips and reports. Small, so it stays "
            "below any trigger: use it to see the importer, not the compaction."
        ),
        "settings": {},
        "build": other_formats.build_claude_code,
    },
    {
        "id": "shell-session",
        "file": "shell-session.codex.jsonl",
        "format": "codex",
        "title": "Disk-space cleanup in Codex CLI (rollout JSONL)",
        "description": (
            "A short Codex CLI rollout: base instructions as the system prompt, exec_command "
            "calls paired with their outputs by call_id, an apply_patch custom tool call, and "
            "encrypted reasoning the importer leaves out and reports. Small: use it to see the "
            "format, not the compaction."
        ),
        "settings": {},
        "build": other_formats.build_codex,
    },
]


def write_sample(sample: dict[str, Any]) -> None:
    path = OUT / sample["file"]
    data = sample["build"]()
    if sample["file"].endswith(".jsonl"):
        common.write_jsonl(path, data)
    else:
        common.write_json(path, data)


def main() -> None:
    index = []
    for sample in SAMPLES:
        write_sample(sample)
        index.append({key: value for key, value in sample.items() if key != "build"})
    common.write_json(OUT / "index.json", {"samples": index})
    for entry in index:
        size = (OUT / entry["file"]).stat().st_size
        print(f"{entry['file']:<40} {size:>9,} bytes")


if __name__ == "__main__":
    main()
