"""hermes-agent's own `compress()`, timed on our generated sessions: the peer the goals of issue 34
are ratios against.

This is NousResearch's real code (`hermes-agent` from PyPI, MIT, the version PEERS.md describes),
not a model of it: its `ContextCompressor.compress` with chars/4 estimates everywhere, as it ships,
and the summary stubbed (`_generate_summary` returns a fixed text), as an agent whose LLM writes
the summary pays for compaction apart from the model's own time. hermes-agent pins its own
dependencies (openai, pydantic, httpx…), so it lives in a virtualenv of its own, outside the
project, made on first use with pip from PyPI (`ensure_hermes()`; about 150 MB), and this file
runs in it as a worker: it imports nothing of `compaction`, only `benchmarks/session_gen.py`.

Run alone: `.venv/bin/python -m benchmarks.hermes_compress --size 5000` (makes the virtualenv if
needed, then prints the worker's JSON). `bench_compress` runs it as its `hermes` row.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERMES_VERSION = "0.18.2"
ROOT = Path(__file__).resolve().parent.parent
#: Where the virtualenv is made (COMPACTION_HERMES_VENV overrides): outside every work tree, so
#: that no checkout carries it and every checkout's benchmark shares it.
DEFAULT_VENV = Path.home() / ".cache" / "compaction-lab" / f"hermes-agent-{HERMES_VERSION}"
STUB_SUMMARY = "## Active Task\nstub summary (the model's own time is not measured)"
#: Later calls timed after the first (each on a fresh ContextCompressor, as a re-run with other
#: budgets would be: hermes keeps nothing between compressions of the same messages).
WARM_CALLS = 3


def venv_path() -> Path:
    return Path(os.environ.get("COMPACTION_HERMES_VENV", DEFAULT_VENV))


def ensure_hermes(venv: Path | None = None) -> Path:
    """The Python of a virtualenv with hermes-agent installed, made first if missing."""
    venv = venv or venv_path()
    python = venv / "bin" / "python"
    if python.exists() and _has_hermes(python):
        return python
    print(f"making {venv} with hermes-agent=={HERMES_VERSION} (once)", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", f"hermes-agent=={HERMES_VERSION}"],
        check=True,
    )
    if not _has_hermes(python):
        raise SystemExit(f"hermes-agent did not install into {venv}")
    return python


def _has_hermes(python: Path) -> bool:
    probe = "import agent.context_compressor"
    done = subprocess.run([str(python), "-c", probe], capture_output=True, cwd="/")
    return done.returncode == 0


def clock() -> float:
    """As bench_compress's: CPU seconds with BENCH_CLOCK=cpu, else wall seconds."""
    if os.environ.get("BENCH_CLOCK") == "cpu":
        return time.process_time()
    return time.perf_counter()


def worker(size: int, window: int = 128_000) -> dict[str, Any]:
    """In hermes' virtualenv: its first compress in this process (cold), then the fastest of
    WARM_CALLS more, each with a fresh compressor; and what it kept (messages, its estimate)."""
    import logging

    from agent.context_compressor import ContextCompressor
    from agent.model_metadata import estimate_messages_tokens_rough

    from benchmarks.session_gen import generate_session

    logging.disable(logging.CRITICAL)  # quiet_mode too: no log formatting inside the timing
    messages = generate_session(size)

    def compressor() -> Any:
        made = ContextCompressor("gpt-4o", config_context_length=window, quiet_mode=True)
        made._generate_summary = lambda turns, *args, **kwargs: STUB_SUMMARY
        return made

    first = compressor()
    started = clock()
    output = first.compress(messages, force=True)
    cold = clock() - started
    warm = []
    for _ in range(WARM_CALLS):
        again = compressor()
        started = clock()
        again.compress(messages, force=True)
        warm.append(clock() - started)
    return {
        "hermes_cold": cold,
        "hermes_warm": min(warm),
        "hermes_out": {
            "messages": len(output),
            "tokens": estimate_messages_tokens_rough(output),
        },
        "hermes_version": HERMES_VERSION,
    }


def run(size: int, python: Path | None = None) -> dict[str, Any]:
    """The worker's figures, run in hermes' virtualenv in a fresh process."""
    python = python or ensure_hermes()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)  # benchmarks.session_gen; hermes' own packages come first
    completed = subprocess.run(
        [str(python), str(Path(__file__).resolve()), "--worker", "--size", str(size)],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",  # no checkout's folders before hermes' packages on the path
        env=env,
    )
    return dict(json.loads(completed.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size", type=int, default=5_000)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        sys.path.insert(1, str(ROOT))
        print(json.dumps(worker(args.size)))
        return
    print(json.dumps(run(args.size), indent=1))


if __name__ == "__main__":
    main()
