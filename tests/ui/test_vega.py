"""The Inspect charts' specs, converted once and unvalidated (ui/vega.py): each is the spec
Altair's validated conversion gives, so skipping the schema check on every rerun hides no
mistake in a chart, and Streamlit draws the same element as `st.altair_chart` did."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import altair as alt
import pytest

from compaction.config import CompactionConfig
from compaction.tokens import make_counter
from compaction.ui.charts import budget_bar, message_chart
from compaction.ui.composition import composition, composition_chart
from compaction.ui.vega import chart_spec


def _validated(chart: alt.TopLevelMixin) -> dict[str, Any]:
    # What st.altair_chart sent: the spec without Altair's theme, its data in `datasets`, and
    # here checked against the Vega-Lite schema (to_dict raises on a spec that breaks it).
    with alt.theme.enable("none"):
        spec = chart.to_dict(validate=True)
    spec.setdefault("datasets", {})
    return dict(json.loads(json.dumps(spec)))  # as sent: JSON (a chart's rows may be a tuple)


def _charts() -> dict[str, Callable[[], alt.TopLevelMixin]]:
    config = CompactionConfig(context_length=10_000, threshold_ratio=0.5)
    messages = [
        {"role": "user", "content": "Fix the failing test in `app.py`."},
        {"role": "assistant", "content": "Reading it. <b>not markup</b>"},
        {"role": "user", "content": "Thanks"},
    ]
    counter = make_counter("rough", "gpt-4o")
    comp = composition(messages, counter, config)
    many = 4_000  # grouped into bars (binning.py)
    return {
        "budget bar": lambda: budget_bar(300, 4_000, 900, config),
        "budget bar past the window, after Phase 1": lambda: budget_bar(
            1_000, 20_000, 4_000, config, (1_000, 5_000, 3_000)
        ),
        "message chart": lambda: message_chart(
            ["a", "b", "c"], [10, 20, 30], ["head", "middle", "tail"], "region", ["user"] * 3
        ),
        "message chart by fate, pinned": lambda: message_chart(
            ["a", "b"], [1, 2], ["kept", "pinned"], "fate", ["user", "tool"], pinned={1}
        ),
        "grouped message chart": lambda: message_chart(
            [], [10] * many, ["middle"] * many, "region", ["assistant"] * many, pinned={7}
        ),
        "composition": lambda: composition_chart([("Before", comp), ("After", comp)]),
    }


@pytest.mark.parametrize("name", list(_charts()))
def test_each_chart_spec_is_the_validated_conversion(name: str) -> None:
    build = _charts()[name]
    # Built with Altair's checks of each part on (its default), then validated whole.
    assert json.loads(chart_spec(build)) == _validated(build())


def test_building_leaves_altairs_theme_and_checks_as_they_were() -> None:
    before = alt.theme.active
    chart_spec(_charts()["budget bar"])
    assert alt.theme.active == before
    assert alt.utils.schemapi.DEBUG_MODE is True
    with alt.theme.enable("dark"):
        spec = json.loads(chart_spec(_charts()["budget bar"]))
        assert alt.theme.active == "dark"
    # Streamlit applies its own theme: the dark theme's background never reaches the spec.
    assert "background" not in spec.get("config", {})


def test_a_chart_built_wrong_still_fails_its_test() -> None:
    # What the unvalidated path lets through, the validated conversion above catches.
    def broken() -> alt.Chart:
        data = alt.InlineData(values=[{"x": 1}])
        return alt.Chart(data).mark_bar(opacity="half").encode(x="x:Q")

    chart_spec(broken)  # built and converted as given
    with alt.utils.schemapi.debug_mode(False):
        chart = broken()
    with pytest.raises(alt.utils.schemapi.SchemaValidationError):
        _validated(chart)
