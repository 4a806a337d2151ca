"""The Sweep page's form: which parameters over which ranges, on which sessions, then the run.

Ranges are turned into the same `field=START:STOP:STEP` / `field=V1,V2` specs the CLI takes and
parsed by `lab.sweep.grid.parse_param`, so the app and `compaction sweep` accept exactly the same
grids, with the same exact decimals and the same error messages. With the LLM summariser nothing
is sent until the user has seen the number of calls and litellm's price and clicked a confirm
button; a change of any input withdraws that confirmation.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import streamlit as st

from compaction.config import CompactionConfig
from compaction.errors import CompactionError
from compaction.lab.samples import list_samples, load_sample
from compaction.lab.sweep.grid import default_value, field_kind, parse_param, peer_field_names
from compaction.lab.sweep.run import Sweep, sweep
from compaction.summarizers.factory import make_summarizer
from compaction.ui.params import MODELS, Settings
from compaction.ui.state import get_loaded
from compaction.ui.stored_run import HistoryUnavailable, history_call

NO_SECOND = "(none)"
PENDING_KEY = "_sweep_pending_llm"  # the cost estimate waiting for the user's confirmation
DEFAULT_SAMPLE = "fix-failing-tests"
MANY_POINTS = 200  # above this the page warns that the run will take a while

#: Slider bounds of the float fields (the sidebar's own ranges).
FLOAT_BOUNDS: dict[str, tuple[float, float]] = {
    "threshold_ratio": (0.05, 1.0),
    "tail_token_ratio": (0.0, 1.0),
    "tail_soft_factor": (1.0, 3.0),
    "summary_ratio": (0.01, 1.0),
    "ineffective_savings_pct": (0.0, 100.0),
}
#: Default ranges of the two default parameters: a 4 × 3 grid around the defaults.
DEFAULT_RANGES: dict[str, tuple[float, float, float]] = {
    "tail_token_ratio": (0.1, 0.4, 0.1),
    "summary_ratio": (0.1, 0.3, 0.1),
}
CHOICES: dict[str, tuple[str, ...]] = {
    "orphan_strategy": ("stub", "strip"),
    "counter": ("tiktoken", "rough"),
    "model": MODELS,
}


@dataclass(frozen=True)
class GridChoice:
    """The `--param` specs the widgets describe, the point count, or what is wrong."""

    specs: list[str]
    points: int
    error: str | None = None


def _number_text(value: float) -> str:
    # Slider floats carry binary noise (0.30000000000000004); the spec must hold the decimal.
    return f"{round(value, 6):g}"


def _float_spec(name: str, column: Any) -> str:
    low, high = FLOAT_BOUNDS.get(name, (0.0, 1.0))  # a peer's float parameters are all shares
    default = default_value(name)
    start, stop, step = DEFAULT_RANGES.get(
        name, (max(low, default / 2), min(high, default * 2), (high - low) / 10)
    )
    span = column.slider(
        f"{name} range",
        low,
        high,
        value=(float(start), float(stop)),
        step=0.01 if high <= 3 else 1.0,
        key=f"sweep_range_{name}",
    )
    step_value = column.number_input(
        f"{name} step",
        min_value=0.001,
        value=float(step),
        step=0.01 if high <= 3 else 1.0,
        format="%.3f",
        key=f"sweep_step_{name}",
    )
    return f"{name}={_number_text(span[0])}:{_number_text(span[1])}:{_number_text(step_value)}"


def _int_spec(name: str, column: Any) -> str:
    default = int(default_value(name))
    low, step = max(1, default // 2), max(1, default // 2)
    high = max(low, default * 2)
    start_col, stop_col, step_col = column.columns(3)
    start = start_col.number_input(f"{name} from", min_value=0, value=low, key=f"sweep_from_{name}")
    stop = stop_col.number_input(f"{name} to", min_value=0, value=high, key=f"sweep_to_{name}")
    size = step_col.number_input(f"{name} step", min_value=1, value=step, key=f"sweep_by_{name}")
    return f"{name}={int(start)}:{int(stop)}:{int(size)}"


def _choice_spec(name: str, column: Any) -> str:
    options = CHOICES.get(name, (str(getattr(CompactionConfig(), name)),))
    picked = column.multiselect(
        f"{name} values", options, default=list(options[:2]), key=f"sweep_values_{name}"
    )
    return f"{name}={','.join(picked)}"


def _spec(name: str, column: Any) -> str:
    kind = field_kind(name)
    if kind is float:
        return _float_spec(name, column)
    if kind is int:
        return _int_spec(name, column)
    return _choice_spec(name, column)


def choose_grid() -> GridChoice:
    """One or two parameters (selectboxes over the config fields, then the peers' own
    `PEER.FIELD` parameters, which run that peer's policy) and a range for each."""
    names = [*CompactionConfig.field_names(), *peer_field_names()]
    first_col, second_col = st.columns(2)
    first = first_col.selectbox(
        "First parameter", names, index=names.index("tail_token_ratio"), key="sweep_param_1"
    )
    seconds = [NO_SECOND, *names]
    second = second_col.selectbox(
        "Second parameter",
        seconds,
        index=seconds.index("summary_ratio"),
        key="sweep_param_2",
        help="(none) sweeps one parameter and draws lines; two give heatmaps.",
    )
    specs = [_spec(first, first_col)]
    if second == first:
        return GridChoice(specs, 0, "pick two different parameters (or (none) for the second)")
    if second != NO_SECOND:
        specs.append(_spec(second, second_col))
    counts = []
    for spec in specs:
        try:
            counts.append(len(parse_param(spec)[1]))
        except CompactionError as exc:
            return GridChoice(specs, 0, str(exc))
    return GridChoice(specs, math.prod(counts))


@dataclass(frozen=True)
class Source:
    """One session to sweep: the loaded one, a sample, or a conversation stored in history."""

    kind: str  # "loaded" | "sample" | "history"
    ref: str  # content hash, sample id or session id
    title: str


def choose_sessions() -> list[Source]:
    """The loaded conversation (a toggle), sample sessions and sessions from the history."""
    loaded = get_loaded()
    chosen: list[Source] = []
    if loaded is not None and st.toggle(
        f"The loaded conversation: {loaded.title} ({len(loaded.messages)} messages)",
        value=True,
        key="sweep_use_loaded",
    ):
        chosen.append(Source("loaded", loaded.content_hash, loaded.title))
    samples = {sample.id: sample for sample in list_samples()}
    default = [] if loaded is not None or DEFAULT_SAMPLE not in samples else [DEFAULT_SAMPLE]
    picked = st.multiselect(
        "Sample sessions",
        list(samples),
        default=default,
        format_func=lambda sample_id: samples[sample_id].title,
        key="sweep_samples",
    )
    chosen += [Source("sample", sample_id, samples[sample_id].title) for sample_id in picked]
    try:
        stored = history_call(lambda history: history.sessions())
    except HistoryUnavailable as exc:
        st.caption(f"Sessions from the history are unavailable: {exc}")
        stored = []
    if stored:
        titles = {s.id: f"{s.title or s.id[:10]} ({s.message_count} messages)" for s in stored}
        from_history = st.multiselect(
            "Sessions from the history",
            list(titles),
            format_func=titles.__getitem__,
            key="sweep_history_sessions",
        )
        chosen += [Source("history", sid, titles[sid]) for sid in from_history]
    return chosen


def load_sources(sources: list[Source]) -> list[Any]:
    """Message lists (with title and format) for `sweep()`; raises CompactionError or
    HistoryUnavailable naming the session that could not be read."""
    conversations: list[Any] = []
    for source in sources:
        if source.kind == "loaded":
            loaded = get_loaded()
            if loaded is None or loaded.content_hash != source.ref:
                raise CompactionError("the loaded conversation changed: choose the sessions again")
            conversations.append(loaded)  # has .messages, .title and .format, like a Conversation
        elif source.kind == "sample":
            conversation = load_sample(source.ref)
            conversation.title = conversation.title or source.title
            conversations.append(conversation)
        else:
            conversations.append(_stored_session(source.ref))
    return conversations


def _stored_session(session_id: str) -> Any:
    # A SessionRow has .messages, .title and .format, which is all sweep() reads.
    return history_call(lambda history: history.session(session_id))


def signature(grid: GridChoice, sources: list[Source], base: CompactionConfig, who: str) -> str:
    """What a confirmed LLM estimate was for: any change asks again."""
    return json.dumps(
        [grid.specs, [(s.kind, s.ref) for s in sources], base.to_dict(), who], sort_keys=True
    )


def run_sweep(
    conversations: list[Any], specs: list[str], base: CompactionConfig, settings: Settings
) -> Sweep:
    """Run the sweep with a progress bar. Raises CompactionError for a bad grid or summariser."""
    summarizer = make_summarizer(
        settings.summarizer,
        model=settings.llm_model or None,
        summary_model=settings.llm_summary_model or None,
        api_base=settings.llm_api_base or None,
        api_key=settings.api_key,
    )
    bar = st.progress(0.0, text="Starting the sweep…")

    def progress(done: int, total: int) -> None:
        bar.progress(done / total if total else 1.0, text=f"{done} of {total} point(s)")

    # jobs=1: a process pool started from Streamlit's script thread takes seconds to spawn (each
    # worker re-imports the engine and re-warms the tokenizer) and its progress arrives out of
    # order, so inside the app the points run in this thread; `compaction sweep --jobs N` is
    # the way to use every core on big grids.
    result = sweep(
        conversations, specs, summarizer=summarizer, base_config=base, jobs=1, progress=progress
    )
    bar.empty()
    return result


def llm_estimate(
    conversations: list[Any], specs: list[str], base: CompactionConfig, settings: Settings
) -> str:
    """litellm's offline estimate of the calls and price (sends nothing)."""
    from compaction.lab.sweep.cost import estimate_cost

    model = settings.llm_summary_model or settings.llm_model
    return estimate_cost(conversations, specs, model, base).describe()


def pending_estimate(key: str) -> str | None:
    """The estimate awaiting confirmation for exactly these inputs (None: none, or stale)."""
    pending = st.session_state.get(PENDING_KEY)
    if isinstance(pending, dict) and pending.get("signature") == key:
        return str(pending["estimate"])
    st.session_state.pop(PENDING_KEY, None)
    return None


def remember_estimate(key: str, estimate: str) -> None:
    st.session_state[PENDING_KEY] = {"signature": key, "estimate": estimate}


def forget_estimate() -> None:
    st.session_state.pop(PENDING_KEY, None)
