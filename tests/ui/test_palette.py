"""One visual language: a colour means one thing on every chart, and every chart that colours by
region, fate or context part says so in a legend (issue 17 item 6)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from compaction.config import CompactionConfig
from compaction.result import FATE_ORDER
from compaction.ui.charts import budget_bar, message_chart
from compaction.ui.composition import Composition, composition_chart
from compaction.ui.palette import (
    COMPOSITION_COLORS,
    FATE_COLORS,
    FATE_LABELS,
    FATE_TITLE,
    REGION_COLORS,
    REGION_TITLE,
)

ROOT = Path(__file__).resolve().parents[2]
SQUARES = (
    "🟦",
    "🟧",
    "🟩",
    "🟪",
    "🟥",
    "🟨",
    "🟫",
    "⬜",
)  # colour squares belong to the palette too


def _norm(colour: str) -> str:
    return colour.upper()


def test_no_fate_is_drawn_in_a_region_colour() -> None:
    regions = {_norm(c) for c in REGION_COLORS.values()}
    fates = [_norm(c) for c in FATE_COLORS.values()]
    assert not regions & set(fates), regions & set(fates)
    assert len(set(fates)) == len(fates)  # and no two fates share one
    assert set(FATE_COLORS) == set(FATE_ORDER) == set(FATE_LABELS)


def test_composition_shares_only_the_summary_colour_with_regions() -> None:
    shared = {_norm(c) for c in COMPOSITION_COLORS.values()} & (
        {_norm(c) for c in REGION_COLORS.values()} | {_norm(c) for c in FATE_COLORS.values()}
    )
    assert shared == {_norm(REGION_COLORS["summary"])}
    assert COMPOSITION_COLORS["summary"] == REGION_COLORS["summary"]  # the same meaning


def _color_encodings(spec: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(spec, dict):
        color = (
            spec.get("encoding", {}).get("color")
            if isinstance(spec.get("encoding"), dict)
            else None
        )
        if isinstance(color, dict) and "field" in color:
            found.append(color)
        for value in spec.values():
            found += _color_encodings(value)
    elif isinstance(spec, list):
        for value in spec:
            found += _color_encodings(value)
    return found


def test_every_coloured_chart_has_a_titled_legend_from_the_palette() -> None:
    config = CompactionConfig()
    region_chart = message_chart(
        ["a", "b", "c"], [10, 20, 30], ["head", "middle", "tail"], "region", ["user"] * 3
    )
    fate_chart = message_chart(["a", "b"], [10, 20], ["kept", "folded"], "fate", ["user"] * 2)
    bar = budget_bar(10, 20, 30, config)
    comp = composition_chart(
        [("Before", Composition(dict.fromkeys(COMPOSITION_COLORS, 0) | {"user": 50}, 1000, 500))]
    )
    for chart, title, palette in (
        (region_chart, REGION_TITLE, REGION_COLORS),
        (fate_chart, FATE_TITLE, FATE_COLORS),
        (bar, REGION_TITLE, REGION_COLORS),
        (comp, "Context part", COMPOSITION_COLORS),
    ):
        encodings = _color_encodings(chart.to_dict())
        assert encodings
        for encoding in encodings:
            assert encoding["legend"]["title"] == title
            assert set(encoding["scale"]["range"]) <= set(palette.values())
    fate_range = _color_encodings(fate_chart.to_dict())[0]["scale"]["range"]
    assert fate_range == [FATE_COLORS["kept"], FATE_COLORS["folded"]]


def test_no_colour_is_hard_coded_outside_the_palette() -> None:
    hex_colour = re.compile(
        r"""["']#[0-9A-Fa-f]{3}(?:[0-9A-Fa-f]{3})?["']|:\s*#[0-9A-Fa-f]{3,6}\b"""
    )
    offenders = []
    for path in [
        *(ROOT / "compaction" / "ui").rglob("*.py"),
        *(ROOT / "app_pages").glob("*.py"),
        ROOT / "app.py",
    ]:
        if path.name == "palette.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if hex_colour.search(line) or any(square in line for square in SQUARES):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, offenders


def test_every_peer_fate_and_peer_has_its_own_palette_colour() -> None:
    from compaction.lab.peers import PEER_FATE_LABELS, PEER_NAMES
    from compaction.ui.palette import FATE_COLORS, PEER_COLORS, PEER_FATE_COLORS

    assert set(PEER_FATE_COLORS) == set(PEER_FATE_LABELS)
    assert not set(PEER_FATE_COLORS.values()) & set(FATE_COLORS.values())
    assert set(PEER_COLORS) == set(PEER_NAMES)
