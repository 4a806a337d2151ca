"""Issue 34's stubbed rows counted in instructions (valgrind's callgrind), beside hermes-agent's.

`bench_compress` measures CPU seconds, and on a shared machine those move with the neighbours:
the same tree measured 0.97x and 1.11x hermes' cold compress in two runs, and one machine made
every row of ours ~25% slower than the one before while hermes' rows moved ~10%. Instructions
executed do not move: callgrind counts the same total for the same code, input and environment,
whatever else the machine does (to within a few dozen in ~90 million: the temporary folder's
name differs). They are not time (an instruction of tiktoken's Rust and one of
the interpreter's loop differ in cost), so this is a second view beside the seconds, not the
goals' own measure.

Each figure is a difference of two whole processes' counts: the process that generates the
session, tokenises it once and stops, against the same process that also runs what is measured
(a cold compress with the summary stubbed; then each re-run with other budgets, in
bench_compress's order, sharing the cold run's cache; and, in a pair of processes of its own that
never load tiktoken, the rough counter's cold compress). hermes-agent's cold and warm compress are
counted the same way, in its own virtualenv (benchmarks/hermes_compress.py).

    .venv/bin/python -m benchmarks.bench_instructions [--size 5000] [--against TREE]

About 1 minute per process at 5,000 messages, two at a time; `--against` counts another work
tree the same way (as bench_compress's).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: What one counted process runs: the session and the floor always, then `stage` more steps.
OURS = """
import sys
sys.path.insert(0, {tree!r})
from benchmarks.session_gen import generate_session
from benchmarks.bench_compress import OTHER_BUDGETS, tokenise_once, _compactor, _shared_cache
from compaction import CompactionConfig
from compaction.summarizers.base import StaticSummarizer
messages = generate_session({size})
tokenise_once(messages)  # the encoding loaded, as in bench_compress, outside what is measured
steps = {stage}
if steps:
    config, cache = CompactionConfig(), _shared_cache()
    _compactor(config, StaticSummarizer(), cache).compress(messages, force=True)
    for changes in OTHER_BUDGETS[: steps - 1]:
        _compactor(config.replace(**changes), StaticSummarizer(), cache).compress(
            messages, force=True
        )
"""

#: The rough counter's cold compress, summary stubbed (bench_compress's "stub: cold rough"): a
#: process that never loads tiktoken, as the rough counter's user's does not.
ROUGH = """
import sys
sys.path.insert(0, {tree!r})
from benchmarks.session_gen import generate_session
from compaction import CompactionConfig, Compactor
from compaction.summarizers.base import StaticSummarizer
messages = generate_session({size})
if {stage}:
    Compactor(CompactionConfig(counter="rough"), StaticSummarizer()).compress(messages, force=True)
"""

HERMES = """
import logging, sys
sys.path.insert(1, {root!r})
from agent.context_compressor import ContextCompressor
from benchmarks.session_gen import generate_session
from benchmarks.hermes_compress import STUB_SUMMARY
logging.disable(logging.CRITICAL)
messages = generate_session({size})
def compressor():
    made = ContextCompressor("gpt-4o", config_context_length=128_000, quiet_mode=True)
    made._generate_summary = lambda turns, *args, **kwargs: STUB_SUMMARY
    return made
for _ in range({stage}):
    compressor().compress(messages, force=True)
"""


def instructions(python: str, script: str, cwd: str, env: dict[str, str]) -> int:
    """Instructions callgrind counted for `python` running `script` (every thread). String
    hashes are seeded alike in every process (PYTHONHASHSEED=0), so that sets and dicts iterate
    alike and the same script counts the same."""
    env = {**env, "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "callgrind.out"
        probe = Path(folder) / "probe.py"
        probe.write_text(script, encoding="utf-8")
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", python, str(probe)],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
        )
        if done.returncode != 0:
            raise SystemExit(f"the counted process failed:\n{done.stderr[-2000:]}")
        found = re.search(r"^summary: (\d+)", out.read_text(encoding="utf-8"), re.MULTILINE)
        if found is None:
            raise SystemExit(f"no summary line in callgrind's output ({out})")
        return int(found.group(1))


def ours(tree: Path, size: int, reruns: int) -> dict[str, Any]:
    """Instructions of a stubbed cold compress and of each re-run after it, in `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    python = str(ROOT / ".venv" / "bin" / "python")
    scripts = [OURS.format(tree=str(tree), size=size, stage=k) for k in range(reruns + 2)]
    scripts += [ROUGH.format(tree=str(tree), size=size, stage=k) for k in range(2)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        totals = list(pool.map(lambda s: instructions(python, s, str(tree), env), scripts))
    rough = totals[-1] - totals[-2]
    steps = [after - before for before, after in pairwise(totals[:-2])]
    return {"cold": steps[0], "reruns": steps[1:], "rough": rough}


def hermes(size: int) -> dict[str, int]:
    """Instructions of hermes-agent's cold compress and of one more (its warm call)."""
    from benchmarks.hermes_compress import ensure_hermes

    python = str(ensure_hermes())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    scripts = [HERMES.format(root=str(ROOT), size=size, stage=k) for k in range(3)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        totals = list(pool.map(lambda s: instructions(python, s, "/", env), scripts))
    return {"cold": totals[1] - totals[0], "warm": totals[2] - totals[1]}


def report(label: str, counted: dict[str, Any], peer: dict[str, int]) -> None:
    slowest = max(counted["reruns"])
    print(f"{label}:")
    print(
        f"  stub: cold exact   {counted['cold'] / 1e6:8.1f} M instructions"
        f"  {counted['cold'] / peer['cold']:.2f}x hermes cold (goal <= 1)"
    )
    print(
        f"  stub: re-runs      {', '.join(f'{r / 1e6:.1f}' for r in counted['reruns'])} M;"
        f" the slowest {slowest / peer['warm']:.2f}x hermes warm (goal <= 0.5)"
    )
    print(
        f"  stub: cold rough   {counted['rough'] / 1e6:8.1f} M instructions"
        f"  {counted['rough'] / peer['cold']:.2f}x hermes cold (goal <= 1)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size", type=int, default=5_000)
    parser.add_argument("--reruns", type=int, default=5, help="re-runs after the cold compress")
    parser.add_argument("--against", type=Path, help="another work tree, counted the same way")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    peer = hermes(args.size)
    print(f"{args.size:,} messages, instructions (callgrind), summary stubbed")
    print(
        f"hermes-agent compress(): cold {peer['cold'] / 1e6:.1f} M, warm {peer['warm'] / 1e6:.1f} M"
    )
    trees = [("this tree", ROOT)] + ([("before", args.against.resolve())] if args.against else [])
    results = {}
    for label, tree in trees:
        results[label] = ours(tree, args.size, args.reruns)
        report(f"{label} ({tree})", results[label], peer)
    if args.against:
        after, before = results["this tree"], results["before"]
        print(
            f"after / before: cold {after['cold'] / before['cold']:.2f}, slowest re-run "
            f"{max(after['reruns']) / max(before['reruns']):.2f}, all re-runs "
            f"{sum(after['reruns']) / sum(before['reruns']):.2f}, cold rough "
            f"{after['rough'] / before['rough']:.2f}"
        )
    print(json.dumps({"hermes": peer, **results}))


if __name__ == "__main__":
    sys.exit(main())
