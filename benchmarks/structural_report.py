"""Structural recall of the full pipeline against head+tail at equal tokens, per corpus session.

    python benchmarks/structural_report.py [CORPUS_DIR] [--all] [--summary FILE]

The first conversation of every corpus file (`--all`: every conversation) is evaluated as
`compaction eval` does (target: one third of the session's tokens; `head-tail-matched` given
exactly the tokens the pipeline kept), and scored with the lab's structural measure
(compaction/lab/structural.py), which shares no code with the summariser. Prints one row per
session, the mean gap (pipeline minus head+tail), the sessions where the pipeline loses, and
whether the summary's Active Task is the user's own latest request on each session.
`--summary FILE` also writes the extractive summary of the Claude Code auto-compacted session
(the issue's before/after exhibit).

Run against an older checkout (through PYTHONPATH) that lacks lab/structural/, it loads the
measure from this checkout's package, so before and after are scored the same way.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from compaction.formats import load_conversations
from compaction.lab.evaluate import COMPACTION, MATCHED, evaluate

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
EXHIBIT = "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def _structural() -> ModuleType:
    try:
        from compaction.lab import structural

        return structural
    except ImportError:  # an older checkout: load this checkout's package under its name
        package = ROOT / "compaction" / "lab" / "structural"
        spec = importlib.util.spec_from_file_location(
            "compaction.lab.structural",
            package / "__init__.py",
            submodule_search_locations=[str(package)],
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its modules import each other by that name
        spec.loader.exec_module(module)
        return module


def _active_task(result: Any) -> str:
    summary = getattr(result, "summary", None)
    if summary is None:
        return ""
    return str(summary.sections.get("Active Task", ""))


def rows(corpus: Path, every: bool = False) -> list[dict[str, Any]]:
    measure = _structural()
    found: list[dict[str, Any]] = []
    for path in sorted(corpus.iterdir()):
        if path.suffix not in (".json", ".jsonl", ".md", ".traj"):
            continue
        try:
            conversations = load_conversations(path)
        except Exception as exc:
            print(f"{path.name}: cannot import: {exc}", file=sys.stderr)
            continue
        for position, conversation in enumerate(conversations if every else conversations[:1]):
            messages = conversation.messages
            evaluation = evaluate(conversation, strategies=(COMPACTION, MATCHED))
            facts = measure.mine(messages)
            ours = measure.structural_recall(facts, evaluation.outcomes[COMPACTION].messages)
            theirs = measure.structural_recall(facts, evaluation.outcomes[MATCHED].messages)
            latest = measure.latest_request(messages)
            result = evaluation.outcomes[COMPACTION].result
            task = _active_task(result)
            ran = result is not None and not result.skipped
            # None: the user never speaks (a subagent file whose only turn is the harness's
            # compaction prompt), so there is no request of theirs to carry.
            own = (
                None
                if latest is None
                else (
                    not ran
                    or measure.normalise(latest[1])[:200] in measure.normalise(task)
                    or measure.normalise(task)[:200] in measure.normalise(latest[1])
                )
            )
            found.append(
                {
                    "session": f"{path.name}" + (f"#{position}" if position else ""),
                    "messages": len(messages),
                    "tokens": evaluation.tokens_before,
                    "facts": len(facts),
                    "ours": ours.ratio,
                    "matched": theirs.ratio,
                    "gap": ours.ratio - theirs.ratio,
                    "ran": ran,
                    "own_request": own,
                }
            )
    return found


def print_table(table: list[dict[str, Any]]) -> None:
    print(
        f"{'session':<72} {'msgs':>5} {'tokens':>8} {'facts':>5} "
        f"{'pipeline':>8} {'h+t-m':>6} {'gap':>6} {'task=user':>9}"
    )
    for row in table:
        print(
            f"{row['session'][:72]:<72} {row['messages']:>5} {row['tokens']:>8} "
            f"{row['facts']:>5} {row['ours']:>8.3f} {row['matched']:>6.3f} {row['gap']:>+6.3f} "
            f"{_own(row['own_request']) + ('' if row['ran'] else ' (skip)'):>9}"
        )
    if not table:
        return
    mean = sum(row["gap"] for row in table) / len(table)
    ours = sum(row["ours"] for row in table) / len(table)
    theirs = sum(row["matched"] for row in table) / len(table)
    losses = [row["session"] for row in table if row["gap"] < 0]
    not_own = [row["session"] for row in table if row["own_request"] is False]
    no_user = [row["session"] for row in table if row["own_request"] is None]
    print(
        f"\nmean structural recall: pipeline {ours:.3f}, head-tail-matched {theirs:.3f}, "
        f"gap {mean:+.3f} over {len(table)} sessions"
    )
    print(f"sessions where the pipeline loses: {len(losses)} {losses if losses else ''}")
    print(f"Active Task not the user's own latest request: {len(not_own)} {not_own or ''}")
    if no_user:
        print(f"no message of the user's own (only the harness speaks): {len(no_user)} {no_user}")


def _own(own_request: bool | None) -> str:
    return "n/a" if own_request is None else "yes" if own_request else "NO"


def write_summary(corpus: Path, target: Path) -> None:
    conversation = load_conversations(corpus / EXHIBIT)[0]
    evaluation = evaluate(conversation, strategies=(COMPACTION,))
    result = evaluation.outcomes[COMPACTION].result
    assert result is not None
    target.write_text(result.summary.text if result.summary else "(no summary)", "utf-8")
    print(f"wrote the summary of {EXHIBIT} to {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=CORPUS)
    parser.add_argument("--summary", type=Path, help="write the exhibit session's summary here")
    parser.add_argument(
        "--all",
        action="store_true",
        help="every conversation of a multi-conversation file (200 tau-bench runs), not the first",
    )
    args = parser.parse_args()
    print_table(rows(args.corpus, args.all))
    if args.summary:
        write_summary(args.corpus, args.summary)


if __name__ == "__main__":
    main()
