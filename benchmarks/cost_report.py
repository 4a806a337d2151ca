"""What the corpus sessions cost, from one run: recorded usage per format, the cache model's
error against the record, and each session priced under the agent's record, our default, our
cache-aware option and every peer.

    python benchmarks/cost_report.py [--settings] [--price MODEL=in,out,cache_write,cache_read ...]

Reads every file of ../shared/corpus and ../shared/corpus-more (the first conversation of each),
prices with litellm's bundled map (offline), and prints three markdown tables: usage per file,
the cache model per file with usage, and the dollars per scenario for the files with a priced
model. docs/cost.md holds the output of one run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from corpus_paths import corpus_files  # noqa: E402

from compaction.errors import CompactionError  # noqa: E402
from compaction.formats import load_conversations  # noqa: E402
from compaction.lab.cost.pricing import PriceBook  # noqa: E402
from compaction.lab.cost.report import CostReport, cost_report  # noqa: E402
from compaction.tokens import make_counter  # noqa: E402


def _short(name: str) -> str:
    """The file name, its middle elided: the start names the agent and project, the end tells a
    session's subagent files apart."""
    return name if len(name) <= 48 else name[:24] + "…" + name[-23:]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:+.1%}"


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}"


def usage_rows(reports: list[tuple[str, str, CostReport | None, int]]) -> list[str]:
    lines = [
        "| file | format | calls with usage | prompt tokens | cache read | cache write | output "
        "| hidden prompt | drift | window | dollars |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|---|--:|",
    ]
    for name, fmt, report, _ in reports:
        if report is None or not report.cost.calls:
            lines.append(f"| {_short(name)} | {fmt} | 0 | | | | | | | | |")
            continue
        cost = report.cost
        lines.append(
            f"| {_short(name)} | {fmt} | {len(cost.calls):,} | {cost.tokens('prompt'):,} | "
            f"{cost.tokens('read'):,} | {cost.tokens('write'):,} | {cost.tokens('output'):,} | "
            f"{report.calibration.hidden:,} | {report.calibration.ratio:.3f} | "
            f"{report.window.window:,} ({report.window.source}) | {_usd(cost.total())} |"
        )
    return lines


def model_rows(reports: list[tuple[str, str, CostReport | None, int]]) -> list[str]:
    lines = [
        "| file | cache rules | calls | recorded reads | predicted | error | recorded writes "
        "| predicted | error | per call |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    totals: dict[str, list[int]] = {}
    for name, _, report, _ in reports:
        if report is None or report.check is None or report.check.rules.provider == "none":
            continue
        check = report.check
        rows = check.rows
        read = sum(r.recorded_read for r in rows)
        predicted_read = sum(r.predicted_read for r in rows)
        writes = [r for r in rows if r.recorded_write is not None]
        write = sum(r.recorded_write or 0 for r in writes)
        predicted_write = sum(r.predicted_write for r in writes)
        provider = check.rules.provider
        bucket = totals.setdefault(provider, [0, 0, 0, 0])
        bucket[0] += read
        bucket[1] += predicted_read
        bucket[2] += write
        bucket[3] += predicted_write
        write_cells = (
            f"{write:,} | {predicted_write:,} | {_pct(check.write_error())}"
            if provider == "anthropic"
            else "not reported | | "
        )
        lines.append(
            f"| {_short(name)} | {check.rules.describe()} | {len(rows)} | {read:,} | "
            f"{predicted_read:,} | {_pct(check.read_error())} | {write_cells} | "
            f"{check.call_error() or 0:.1%} |"
        )
    for provider, (read, pread, write, pwrite) in totals.items():
        read_error = (pread - read) / read if read else None
        write_error = (pwrite - write) / write if write else None
        lines.append(
            f"| **all {provider}** | | | {read:,} | {pread:,} | **{_pct(read_error)}** | "
            f"{write:,} | {pwrite:,} | **{_pct(write_error)}** | |"
        )
    return lines


def scenario_rows(reports: list[tuple[str, str, CostReport | None, int]]) -> list[str]:
    names: list[str] = []
    for _, _, report, _ in reports:
        for scenario in report.scenarios if report is not None else []:
            if scenario.name not in names:
                names.append(scenario.name)
    lines = [
        "| file | " + " | ".join(names) + " |",
        "|---|" + "--:|" * len(names),
    ]
    for name, _, report, _ in reports:
        if report is None or not report.scenarios or report.cost.total() is None:
            continue
        by_name = {s.name: s for s in report.scenarios}
        cells = []
        for scenario_name in names:
            scenario = by_name.get(scenario_name)
            if scenario is None:
                cells.append("")
                continue
            cell = _usd(scenario.usd)
            if scenario.compactions and scenario.kind != "record":
                cell += f" ({scenario.compactions}×)"
            cells.append(cell)
        lines.append(f"| {_short(name)} | " + " | ".join(cells) + " |")
    return lines


#: The settings `--settings` prices on the sessions whose replays compact.
SETTINGS = {
    "default": {},
    "cache-aware": {"cache_aware": True},
    "threshold 0.3": {"threshold_ratio": 0.3},
    "threshold 0.3, cache-aware": {"threshold_ratio": 0.3, "cache_aware": True},
    "threshold 0.85": {"threshold_ratio": 0.85},
    "threshold 0.85, cache-aware": {"threshold_ratio": 0.85, "cache_aware": True},
}


def settings_rows(prices: PriceBook) -> list[str]:
    """Our pipeline at a few settings, on the sessions where its replay compacts at all."""
    from compaction.config import CompactionConfig

    configs = {name: CompactionConfig(**changes) for name, changes in SETTINGS.items()}
    lines = [
        "| file | " + " | ".join(configs) + " |",
        "|---|" + "--:|" * len(configs),
    ]
    for path in corpus_files():
        try:
            conversation = load_conversations(path)[0]
        except CompactionError:
            continue
        if not conversation.calls:
            continue
        report = cost_report(conversation, prices, configs=configs, peers=[])
        ours = [s for s in report.scenarios if s.kind == "ours"]
        if report.cost.total() is None or not any(s.compactions for s in ours):
            continue
        cells = [f"{_usd(s.usd)} ({s.compactions}×)" for s in ours]
        lines.append(f"| {_short(path.name)} | " + " | ".join(cells) + " |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--price", action="append", default=[], help="MODEL=in,out,cw,cr")
    parser.add_argument(
        "--settings", action="store_true", help="also price our pipeline at a few settings"
    )
    args = parser.parse_args()
    prices = PriceBook.from_specs(args.price)
    counter = make_counter()
    started = time.perf_counter()
    reports: list[tuple[str, str, CostReport | None, int]] = []
    for path in corpus_files():
        try:
            conversation = load_conversations(path)[0]
        except CompactionError as exc:
            print(f"<!-- {path.name}: {exc} -->", file=sys.stderr)
            continue
        report = cost_report(conversation, prices, counter) if conversation.calls else None
        reports.append((path.name, conversation.format, report, len(conversation.calls)))
    print("## Recorded usage per file\n")
    print("\n".join(usage_rows(reports)))
    print("\n## The cache model against the record\n")
    print("\n".join(model_rows(reports)))
    print("\n## Each session priced (same calls, same times; the cache model's dollars)\n")
    print("\n".join(scenario_rows(reports)))
    if args.settings:
        print("\n## Our pipeline's settings priced (the sessions whose replays compact)\n")
        print("\n".join(settings_rows(prices)))
    print(f"\n<!-- {len(reports)} files in {time.perf_counter() - started:.1f} s -->")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
