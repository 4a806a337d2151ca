"""Drawing the Inspect charts without validating their Altair specs on every rerun.

`st.altair_chart` turns a chart into its Vega-Lite spec each time the script runs, and Altair
validates that spec against the Vega-Lite JSON schema as it goes: ~30 ms a chart on this
machine, three charts on every Inspect rerun (a click in the phase picker, a slider move), for
charts whose spec has not changed since the last run. Altair also validates each part of a
chart as it is built (its "debug mode"): a third of building a 900-message chart. Here a chart
is built and becomes its spec once, the way Streamlit converts it (no Altair theme: Streamlit
applies its own; the chart's inline data in the spec's datasets), without either check, and the
spec is drawn with `st.vega_lite_chart`, which sends the same element. The tests hold every
chart the app draws to the schema, and to the spec Altair's validated conversion gives.

The spec is kept as JSON text: a cached chart is shared by every session of the server, and a
dict handed to Streamlit on each run could be changed in place by it; text cannot be.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import altair as alt
import streamlit as st

# The theme and the debug mode are Altair's global state: turning them off for one chart must
# not race another session's thread building or converting a chart at the same moment.
_ALTAIR_LOCK = threading.Lock()


def chart_spec(build: Callable[[], alt.TopLevelMixin]) -> str:
    """The Vega-Lite spec, as JSON text, of the chart `build()` returns, as `st.altair_chart`
    would send it; built and converted without Altair's schema checks."""
    with _ALTAIR_LOCK, alt.utils.schemapi.debug_mode(False), alt.theme.enable("none"):
        spec = build().to_dict(validate=False)
    spec.setdefault("datasets", {})
    return json.dumps(spec)


def draw_chart(spec: str, **options: Any) -> Any:
    """`st.vega_lite_chart` of a spec from `chart_spec` (the options are `st.altair_chart`'s:
    key, on_select, selection_mode, width), returning what it returns (a selection's state)."""
    return st.vega_lite_chart(spec=json.loads(spec), **options)
