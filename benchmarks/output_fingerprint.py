"""What `compress` outputs, on every corpus file and on generated sessions, as one JSON file.

A speed-up must not change what compaction does. Run this once on the commit before the change
(`--write BEFORE.json`) and once after (`--write AFTER.json`), then `--compare BEFORE.json
AFTER.json`: it names every case whose output differs (messages, summary text, token counts,
fates, repairs, each phase's counts), or says they are identical.

Cases: each corpus file through the importer and a forced compress with the default budgets, the
budgets a re-run uses, and `counter="rough"`; generated sessions of several sizes the same way;
an agent's loop (`should_compress` after each appended message, `compress` when it says so) on a
generated session and on the largest corpus file; and the `compaction compress` command line on
every corpus file (its output file and its stderr summary).

Run: `.venv/bin/python -m benchmarks.output_fingerprint --write /tmp/out.json`
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from compaction.result import without_timings

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("COMPACTION_CORPUS", ROOT.parent / "shared" / "corpus"))

RERUN_BUDGETS: list[dict[str, Any]] = [
    {},
    {"tail_token_ratio": 0.35, "summary_ratio": 0.1, "protect_first_n": 5},
    {"tail_token_ratio": 0.10, "summary_ratio": 0.3},
    {"context_length": 32_000},
    {"counter": "rough"},
]


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def describe(result: Any) -> dict[str, Any]:
    """Everything a caller can read from a CompactionResult that compaction decides."""
    return {
        "messages": _digest(result.messages),
        "summary": _digest(result.summary),
        "tokens": [result.tokens_before, result.tokens_after],
        "skipped": [result.skipped, result.skip_reason],
        "fates": _digest(sorted(result.fates.items())),
        "repairs": _digest(result.repairs),
        "orphan_fixes": _digest([fix.describe() for fix in result.orphan_fixes]),
        "phases": [
            [
                phase.name,
                phase.tokens_before,
                phase.tokens_after,
                _digest(phase.messages),
                _digest(sorted(phase.fates.items())),
                _digest(without_timings(phase.details)),
            ]
            for phase in result.phases
        ],
    }


def compress_cases(name: str, messages: list[Any], out: dict[str, Any]) -> None:
    from compaction import CompactionConfig, Compactor

    base = CompactionConfig()
    shared = Compactor(base)  # the re-run path: one Compactor, budgets changed between calls
    for position, changes in enumerate(RERUN_BUDGETS):
        config = base.replace(**changes)
        out[f"{name} fresh {position}"] = describe(Compactor(config).compress(messages, force=True))
        shared.config = config
        if "counter" not in changes:
            out[f"{name} shared {position}"] = describe(shared.compress(messages, force=True))


def loop_case(name: str, messages: list[Any], out: dict[str, Any], window: int) -> None:
    from compaction import CompactionConfig, Compactor

    compactor = Compactor(CompactionConfig(context_length=window))
    context: list[Any] = []
    results = []
    for message in messages:
        context.append(message)
        if compactor.should_compress(context):
            result = compactor.compress(context)
            results.append(describe(result))
            if not result.skipped:
                context = list(result.messages)
    out[f"{name} loop"] = {"results": results, "final": _digest(context)}


def cli_case(path: Path, out: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "out.json"
        report = Path(folder) / "report.json"
        completed = subprocess.run(
            [
                sys.executable,
                "-m",
                "compaction",
                "compress",
                str(path),
                "-o",
                str(target),
                "--report",
                str(report),
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        out[f"cli {path.name}"] = {
            "status": completed.returncode,
            "stderr": completed.stderr,
            "output": _digest(target.read_text(encoding="utf-8")) if target.exists() else None,
            "report": _digest(without_timings(json.loads(report.read_text(encoding="utf-8"))))
            if report.exists()
            else None,
        }


def fingerprint(cli: bool) -> dict[str, Any]:
    from benchmarks.session_gen import generate_session
    from compaction.formats import load_conversations

    out: dict[str, Any] = {}
    corpus = sorted(p for p in CORPUS.iterdir() if p.name != "README.md")
    for path in corpus:
        for position, conversation in enumerate(load_conversations(path)):
            if position >= 3:
                break  # a multi-conversation file: the first three are enough
            compress_cases(f"{path.name}#{position}", conversation.messages, out)
    for size in (60, 500, 2_000):
        compress_cases(f"generated {size}", generate_session(size, seed=size), out)
    loop_case("generated 1200", generate_session(1_200, seed=7), out, window=128_000)
    biggest = max(corpus, key=lambda p: p.stat().st_size if "claudecode" in p.name else 0)
    loop_case(biggest.name, load_conversations(biggest)[0].messages, out, window=64_000)
    if cli:
        for path in corpus:
            cli_case(path, out)
    return out


def compare(before_path: str, after_path: str) -> int:
    before = json.loads(Path(before_path).read_text(encoding="utf-8"))
    after = json.loads(Path(after_path).read_text(encoding="utf-8"))
    differing = [
        name for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name)
    ]
    for name in differing:
        print(f"DIFFERS: {name}")
        old, new = before.get(name) or {}, after.get(name) or {}
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                print(f"  {key}: {str(old.get(key))[:200]} -> {str(new.get(key))[:200]}")
    print(f"{len(before)} cases before, {len(after)} after, {len(differing)} differ")
    return 1 if differing else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--write", help="write the fingerprint JSON here")
    parser.add_argument("--no-cli", action="store_true", help="skip the command-line cases")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if not args.write:
        parser.error("--write or --compare")
    Path(args.write).write_text(
        json.dumps(fingerprint(cli=not args.no_cli), indent=1, sort_keys=True), encoding="utf-8"
    )


if __name__ == "__main__":
    main()
