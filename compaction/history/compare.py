"""Differences between two stored runs, for the Compare page and `compaction history compare`.

Computed from what the database holds (configs, figures, summary sections, per-message fates),
never by re-running a compaction, so a comparison shows what the user actually got.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field
from typing import Any

from compaction.history.rows import RunRow
from compaction.result import as_fate
from compaction.summary import SECTION_NAMES

#: The RunRow figures compared, in display order.
FIGURES: tuple[str, ...] = (
    "tokens_before",
    "tokens_after",
    "savings_pct",
    "messages_before",
    "messages_after",
    "tail_budget_tokens",
    "summary_budget_tokens",
    "duration_s",
    "llm_prompt_tokens",
    "llm_completion_tokens",
    "llm_cost",
    "skipped",
    "fallback_used",
    "summarizer",
    "model",
    "focus",
)


@dataclass
class Comparison:
    """Run `a` against run `b`.

    `config`: one entry per differing setting ({field, a, b}); `figures`: every figure with
    `delta` (b − a) for numbers and `changed`; `sections`: the 13 summary sections with a
    unified diff when they differ; `fates`: for each original message index, its fate in each run
    (`same_session` says whether the indices refer to the same conversation).
    """

    a: int
    b: int
    same_session: bool
    config: list[dict[str, Any]] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)
    sections: list[dict[str, Any]] = field(default_factory=list)
    fates: list[dict[str, Any]] = field(default_factory=list)

    @property
    def changed_sections(self) -> list[str]:
        return [s["section"] for s in self.sections if s["changed"]]

    @property
    def changed_fates(self) -> int:
        return sum(1 for f in self.fates if f["changed"])

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare_runs(a: RunRow, b: RunRow) -> Comparison:
    """Compare two runs loaded with `History.run(run_id)` (full rows)."""
    return Comparison(
        a=a.id,
        b=b.id,
        same_session=a.session_id == b.session_id,
        config=_config_differences(run_settings(a), run_settings(b)),
        figures=[_figure(name, getattr(a, name), getattr(b, name)) for name in FIGURES],
        sections=_section_differences(a.summary, b.summary),
        fates=_fate_differences(a, b),
    )


#: What a run was asked to do beyond its CompactionConfig: a focus topic changes the summary as
#: much as any budget, so comparing two runs must show it with the settings.
RUN_SETTINGS = ("focus", "summarizer", "model")


def run_settings(run: RunRow) -> dict[str, Any]:
    """The run's config plus the run-level settings (focus, summariser, model)."""
    settings = dict(run.config)
    for name in RUN_SETTINGS:
        settings.setdefault(name, getattr(run, name))
    return settings


def _config_differences(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    keys = list(a) + [k for k in b if k not in a]
    return [{"field": k, "a": a.get(k), "b": b.get(k)} for k in keys if a.get(k) != b.get(k)]


def _figure(name: str, a: Any, b: Any) -> dict[str, Any]:
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
    delta = round(b - a, 6) if numeric else None
    return {"name": name, "a": a, "b": b, "delta": delta, "changed": a != b}


def _section_differences(
    a: dict[str, str] | None, b: dict[str, str] | None
) -> list[dict[str, Any]]:
    rows = []
    for name in SECTION_NAMES:
        body_a = (a or {}).get(name)
        body_b = (b or {}).get(name)
        diff = list(
            difflib.unified_diff(
                (body_a or "").splitlines(),
                (body_b or "").splitlines(),
                fromfile="a",
                tofile="b",
                lineterm="",
            )
        )
        rows.append(
            {"section": name, "a": body_a, "b": body_b, "changed": body_a != body_b, "diff": diff}
        )
    return rows


def _fates(run: RunRow) -> dict[int, str]:
    raw = (run.report or {}).get("fates") or {}
    return {int(index): as_fate(str(fate)) for index, fate in raw.items()}


def _fate_differences(a: RunRow, b: RunRow) -> list[dict[str, Any]]:
    fates_a, fates_b = _fates(a), _fates(b)
    # Fate keys are input indices; messages_before covers inputs no phase touched.
    count = max(
        a.messages_before,
        b.messages_before,
        max(fates_a, default=-1) + 1,
        max(fates_b, default=-1) + 1,
    )
    rows = []
    for index in range(count):
        fate_a, fate_b = fates_a.get(index), fates_b.get(index)
        rows.append({"index": index, "a": fate_a, "b": fate_b, "changed": fate_a != fate_b})
    return rows
