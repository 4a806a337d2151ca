"""Benchmark: the Inspect page's script run with a 5,000-message session loaded (AppTest timings).

Targets from issue 5: the page's script run stays under 3 s and a parameter change under 1 s.
The session comes from benchmarks/session_gen.py (about a million gpt-4o tokens) and is loaded the
way a user loads it, through the upload widget and the importer. Run:

    .venv/bin/python benchmarks/bench_app.py [n_messages]

AppTest measures the Python side (script run, compaction, caches); the browser's render time is
bench_browser.py's to measure. Each figure is also printed as a ratio to a baseline measured in
the same run: tokenising every message of the session once with tiktoken, the least work any
tool must do to show a conversation's token counts (bench_compress.py's baseline too).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_compress import tokenise_once  # noqa: E402
from benchmarks.session_gen import generate_session  # noqa: E402

PAGE = ROOT / "app_pages" / "inspect.py"


def _timed(label: str, at: AppTest, results: dict[str, float]) -> AppTest:
    started = time.perf_counter()
    at.run()
    results[label] = time.perf_counter() - started
    if at.exception:
        raise RuntimeError(f"{label}: {[e.value for e in at.exception]}")
    return at


BASELINE = "baseline: tokenise every message once (tiktoken, no cache)"


def main(n_messages: int = 5_000) -> dict[str, float]:
    messages = generate_session(n_messages)
    data = json.dumps(messages).encode("utf-8")
    results: dict[str, float] = {}
    results[BASELINE] = tokenise_once(messages)[0]
    at = AppTest.from_file(str(PAGE), default_timeout=300)
    _timed("first run, nothing loaded (imports)", at, results)
    at.file_uploader(key="load_upload").set_value(("bench.json", data, "application/json"))
    _timed("upload + first Inspect run (import, count, compact)", at, results)
    # History saving runs in a background thread and costs ~6 s of CPU for this session (in
    # History.record); it is measured last so it does not skew the page timings.
    at.toggle(key="p_save_history").set_value(False)
    _timed("history saving turned off", at, results)
    _timed("Inspect rerun, nothing changed", at, results)
    at.slider(key="p_tail_token_ratio").set_value(0.3)
    _timed("parameter change (tail ratio 0.2 → 0.3)", at, results)
    at.slider(key="p_tail_token_ratio").set_value(0.2)
    _timed("parameter change back (cached)", at, results)
    at.button(key="step_all").click()
    _timed("Run all (final view, validity, history save)", at, results)
    at.number_input(key="inspect_open").set_value(2_500)
    _timed("open message #2500", at, results)
    at.slider(key="p_summary_ratio").set_value(0.3)
    _timed("parameter change with all phases shown", at, results)
    at.toggle(key="p_save_history").set_value(True)
    _timed("history saving on (waits up to 1 s, then saves in the background)", at, results)
    return results


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5_000
    print(f"Inspect page, {count:,}-message session (AppTest; seconds, × the baseline):")
    results = main(count)
    for label, seconds in results.items():
        print(f"  {seconds:7.3f}  {seconds / results[BASELINE]:6.2f}×  {label}")
