"""The shared sidebar: every compaction parameter, bound to the URL, with its derived budget.

Widgets bind to query parameters so a view can be shared by URL. The API key is the exception: it
lives in a password field that is never bound, never stored in history and never logged. Defaults
come from CompactionConfig itself, so the sidebar cannot drift from the library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from compaction.config import CompactionConfig, whole_tokens
from compaction.errors import ConfigError
from compaction.summarizers.factory import SUMMARIZER_KINDS
from compaction.ui.pins_view import (
    called_tools,
    pin_specs,
    pins_of,
    render_pins_control,
    seed_pins_from_url,
)
from compaction.ui.state import get_loaded

DEFAULTS = CompactionConfig()
API_KEY_KEY = "llm_api_key"  # session-state key of the password field; never query-bound
SUMMARY_BUDGET_SLOT = "_summary_budget_slot"
#: The model picker's names: each one litellm's bundled map knows, so "Use the model's window"
#: never answers "unknown" for a name the app itself offered (a typed name may still be).
MODELS = (
    "gpt-4o",
    "gpt-4o-mini",
    "gpt-4.1",
    "gpt-5",
    "o3",
    "o4-mini",
    "gpt-4",
    "gpt-3.5-turbo",
    "claude-sonnet-4-5",
    "claude-opus-4-1",
    "gemini-2.5-pro",
)

#: Widget keys (also the URL's query-parameter names) of the config fields.
CONFIG_KEYS: dict[str, str] = {name: f"p_{name}" for name in CompactionConfig.field_names()}


@dataclass(frozen=True)
class Settings:
    """What the sidebar says: a valid config (or the error), the focus, the summariser choice."""

    config: CompactionConfig | None
    config_error: str | None
    focus: str | None
    summarizer: str
    llm_model: str = ""
    llm_summary_model: str = ""
    llm_api_base: str = ""
    force: bool = True
    save_history: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def api_key(self) -> str | None:
        """Read from session state on demand, so the key is never part of a cache key or log."""
        value = st.session_state.get(API_KEY_KEY)
        return value or None

    def summarizer_info(self) -> dict[str, Any]:
        """What history may store about the summariser (never the key)."""
        info: dict[str, Any] = {"kind": self.summarizer}
        if self.summarizer == "llm":
            info.update(
                model=self.llm_model,
                summary_model=self.llm_summary_model or None,
                api_base=self.llm_api_base or None,
            )
        return info

    def summarizer_key(self) -> str:
        """A cache key for the summariser choice (no key material)."""
        if self.summarizer != "llm":
            return self.summarizer
        return f"llm|{self.llm_model}|{self.llm_summary_model}|{self.llm_api_base}"


def _init(key: str, default: Any) -> None:
    # Seeding session state (not `value=`) lets callbacks such as "load sample" set a widget's
    # value without Streamlit's "default value and Session State" warning.
    if key not in st.session_state:
        st.session_state[key] = default


def _number(name: str, label: str, step: int, help: str | None = None) -> None:
    key = CONFIG_KEYS[name]
    _init(key, getattr(DEFAULTS, name))
    st.number_input(label, min_value=0, step=step, key=key, bind="query-params", help=help)


def _ratio(name: str, label: str, low: float, high: float, step: float = 0.05) -> None:
    key = CONFIG_KEYS[name]
    _init(key, float(getattr(DEFAULTS, name)))
    st.slider(label, low, high, step=step, key=key, bind="query-params")


def apply_sample_settings(settings: dict[str, Any]) -> None:
    """Put settings (a sweep point's config) into the widgets (call from a callback only)."""
    for name, value in settings.items():
        if name in CONFIG_KEYS:
            st.session_state[CONFIG_KEYS[name]] = value
        elif name == "focus":
            st.session_state["p_focus"] = str(value)


#: The suggested settings of the loaded conversation as they were applied (name -> value).
SUGGESTED_KEY = "_suggested_settings"
PENDING_KEY = "_pending_settings"  # name -> value, put into the widgets before they are drawn
NOTICE_KEY = "_settings_notice"  # the lines saying what changed, shown once by the loader


def _widget_key(name: str) -> str | None:
    if name in CONFIG_KEYS:
        return CONFIG_KEYS[name]
    return "p_focus" if name == "focus" else None


def _default(name: str) -> Any:
    return "" if name == "focus" else getattr(DEFAULTS, name)


def _shown(name: str, value: Any) -> str:
    if name == "focus":
        return f"“{value}”" if value else "none"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def switch_suggested_settings(
    suggested: dict[str, Any], keep: frozenset[str] = frozenset()
) -> None:
    """A new conversation is loaded: its suggested settings replace the previous one's.

    A previous sample's suggestion that is still in force (the user did not change it) goes
    back to its default, so a focus topic meant for one sample does not follow the user to the
    next; the new suggestions (except `keep`, settings a shared link sets itself) are applied.
    The widgets are set before they are drawn, by `apply_pending_settings` in the frame."""
    previous: dict[str, Any] = st.session_state.get(SUGGESTED_KEY, {})
    pending: dict[str, tuple[Any, str]] = {}
    for name, value in previous.items():
        key = _widget_key(name)
        if name in suggested or key is None or st.session_state.get(key) != value:
            continue
        pending[name] = (_default(name), "the previous conversation suggested it")
    usable = {
        name: value
        for name, value in suggested.items()
        if _widget_key(name) is not None and name not in keep
    }
    for name, value in usable.items():
        pending[name] = (str(value) if name == "focus" else value, "suggested for this sample")
    st.session_state[SUGGESTED_KEY] = usable
    st.session_state[PENDING_KEY] = pending


def apply_pending_settings() -> None:
    """Put the pending setting changes into the widgets (before they exist in this run) and
    note what changed, for the loader's notice."""
    pending: dict[str, tuple[Any, str]] = st.session_state.pop(PENDING_KEY, {})
    lines = []
    for name, (value, why) in pending.items():
        key = _widget_key(name)
        if key is None:
            continue
        before = st.session_state.get(key, _default(name))
        if before == value:
            continue
        st.session_state[key] = value
        label = SETTING_LABELS.get(name, name)
        lines.append(f"{label}: {_shown(name, before)} → {_shown(name, value)} ({why})")
    if lines:
        st.session_state[NOTICE_KEY] = lines


def take_settings_notice() -> list[str]:
    """What the last conversation switch changed in the sidebar (once)."""
    lines: list[str] = st.session_state.pop(NOTICE_KEY, [])
    return lines


SETTING_LABELS = {
    "context_length": "Context length",
    "threshold_ratio": "Threshold ratio",
    "tail_token_ratio": "Tail token ratio",
    "protect_first_n": "Protected head",
    "focus": "Focus topic",
    "model": "Model",
    "summary_ratio": "Summary ratio",
}


def _values() -> dict[str, Any]:
    return {
        name: st.session_state[key] for name, key in CONFIG_KEYS.items() if key in st.session_state
    }


def _seed_from_url() -> None:
    """Put the URL's settings into session state before any widget exists.

    The config is built before the widgets below the window are drawn (their captions show its
    budgets), and a URL-bound widget only takes its value from the URL when it is created: so on
    a shared link's first run the threshold, head and tail settings would still be the defaults
    while their sliders already showed the link's values."""
    for name, key in CONFIG_KEYS.items():
        raw = st.query_params.get(key)
        if raw is None or key in st.session_state:
            continue
        default = getattr(DEFAULTS, name)
        try:
            value: Any = type(default)(raw) if isinstance(default, int | float) else str(raw)
        except ValueError:
            continue  # the widget reports a value it cannot take
        st.session_state[key] = value


def render_sidebar() -> Settings:
    """Draw the parameters in the sidebar and return the Settings they describe."""
    _seed_from_url()
    seed_pins_from_url()
    with st.sidebar:
        st.header("Parameters")
        _model_and_window()
        values = _values()
        config, error = _build_config(values)
        shown = config or DEFAULTS
        _budgets(shown)
        loaded = get_loaded()
        render_pins_control(called_tools(loaded.content_hash, loaded.messages) if loaded else [])
        _pruning()
        _anti_thrash()
        focus = _focus_and_summariser()
        if error:
            st.error(f"Invalid parameters: {error}")
        return Settings(
            config=config,
            config_error=error,
            focus=focus or None,
            summarizer=str(st.session_state["p_summarizer"]),
            llm_model=str(st.session_state.get("p_llm_model", "")).strip(),
            llm_summary_model=str(st.session_state.get("p_llm_summary_model", "")).strip(),
            llm_api_base=str(st.session_state.get("p_llm_api_base", "")).strip(),
            force=bool(st.session_state["p_force"]),
            save_history=bool(st.session_state["p_save_history"]),
        )


def _build_config(values: dict[str, Any]) -> tuple[CompactionConfig | None, str | None]:
    try:
        pins = pins_of(pin_specs())
        return CompactionConfig.from_dict(values).replace(pins=pins), None
    except ConfigError as exc:
        return None, str(exc)


def _model_and_window() -> None:
    _init(CONFIG_KEYS["model"], DEFAULTS.model)
    st.selectbox(
        "Model",
        MODELS,
        key=CONFIG_KEYS["model"],
        bind="query-params",
        accept_new_options=True,
        help="Picks the tokenizer (o200k for gpt-4o/4.1/5/o-series, cl100k otherwise).",
    )
    _init(CONFIG_KEYS["counter"], DEFAULTS.counter)
    st.selectbox(
        "Token counter",
        ("tiktoken", "rough"),
        key=CONFIG_KEYS["counter"],
        bind="query-params",
        help="tiktoken is exact; rough is characters / 4, as some agents estimate.",
    )
    _number("context_length", "Context length (tokens)", 1_000)
    st.button(
        "Use the model's window",
        key="use_model_window",
        on_click=_set_window_from_model,
        help="Reads the model's input window from litellm's bundled model map.",
    )
    if message := st.session_state.pop("_window_message", None):
        st.caption(message)


def _set_window_from_model() -> None:
    from compaction.config import model_context_length

    model = str(st.session_state.get(CONFIG_KEYS["model"], DEFAULTS.model))
    try:
        window = model_context_length(model)
    except ConfigError as exc:
        st.session_state["_window_message"] = f"⚠️ {exc}"
        return
    st.session_state[CONFIG_KEYS["context_length"]] = window
    st.session_state["_window_message"] = f"{model}: window {window:,} tokens"


def _budgets(config: CompactionConfig) -> None:
    _ratio("threshold_ratio", "Threshold ratio", 0.05, 1.0)
    st.caption(f"compaction triggers at **{config.threshold_tokens:,} tokens**")
    _number("protect_first_n", "Protect first N messages (head)", 1)
    st.caption(f"head: the first {config.protect_first_n} messages, whole tool groups")
    _ratio("tail_token_ratio", "Tail token ratio", 0.0, 1.0)
    st.caption(f"tail budget **{config.tail_budget_tokens:,} tokens**")
    _ratio("tail_soft_factor", "Tail soft factor", 1.0, 3.0, 0.1)
    st.caption(f"soft ceiling **{config.tail_soft_ceiling:,} tokens**")
    _number("min_tail_messages", "Minimum tail messages", 1)
    _ratio("summary_ratio", "Summary ratio", 0.01, 1.0, 0.01)
    _number("summary_min_tokens", "Summary minimum (tokens)", 500)
    _number("summary_max_tokens", "Summary maximum (tokens)", 500)
    slot = st.empty()
    slot.caption(
        f"summary budget = {config.summary_ratio:.0%} of the middle, clamped to "
        f"{config.summary_min_tokens:,}–{config.summary_max_tokens:,} tokens"
    )
    st.session_state[SUMMARY_BUDGET_SLOT] = slot


def show_summary_budget(config: CompactionConfig, middle_tokens: int) -> None:
    """Pages that know the middle fill in the summary budget next to its sliders."""
    slot = st.session_state.get(SUMMARY_BUDGET_SLOT)
    if slot is None:
        return
    if middle_tokens == 0:
        # Phase 1's one-liners made everything after the head fit the tail: no summary is written,
        # and a "0 → clamped to 2,000" budget would read as if one were.
        slot.caption("summary budget: no middle is left after Phase 1, so no summary is written")
        return
    raw = whole_tokens(middle_tokens * config.summary_ratio)
    budget = config.summary_budget(middle_tokens)
    clamp = "" if raw == budget else f" → clamped to **{budget:,}**"
    slot.caption(
        f"summary budget: {config.summary_ratio:.0%} of the {middle_tokens:,}-token middle "
        "(after Phase 1) = "
        f"{raw:,}{clamp} tokens (clamp {config.summary_min_tokens:,}–"
        f"{config.summary_max_tokens:,})"
    )


def _pruning() -> None:
    with st.expander("Pruning and tool calls"):
        _number("prune_min_chars", "Prune outputs longer than (chars)", 50)
        st.caption("outputs at or below this length are never pruned")
        _number("args_max_chars", "Shrink arguments longer than (chars)", 50)
        _number("args_keep_chars", "Keep per argument string (chars)", 50)
        _init(CONFIG_KEYS["orphan_strategy"], DEFAULTS.orphan_strategy)
        st.selectbox(
            "Orphan strategy",
            ("stub", "strip"),
            key=CONFIG_KEYS["orphan_strategy"],
            bind="query-params",
            help="stub: insert a stub result for a call that lost its result; strip: remove it",
        )


def _anti_thrash() -> None:
    with st.expander("Anti-thrash"):
        _ratio("ineffective_savings_pct", "Ineffective below (% saved)", 0.0, 100.0, 1.0)
        _number("max_ineffective", "Ineffective compactions before /new", 1)


def _focus_and_summariser() -> str:
    st.subheader("Summary")
    _init("p_focus", "")
    focus = st.text_input(
        "Focus topic", key="p_focus", bind="query-params", placeholder="e.g. the auth refactor"
    )
    _init("p_summarizer", "extractive")
    kind = st.selectbox(
        "Summariser",
        SUMMARIZER_KINDS,
        key="p_summarizer",
        bind="query-params",
        help="extractive: offline and deterministic; static: the marker only; llm: any model "
        "litellm reaches (runs only when you click Phase 3).",
    )
    if kind == "llm":
        _init("p_llm_model", "gpt-4o-mini")
        st.text_input("LLM model", key="p_llm_model", bind="query-params")
        _init("p_llm_summary_model", "")
        st.text_input("Summary model (optional)", key="p_llm_summary_model", bind="query-params")
        _init("p_llm_api_base", "")
        st.text_input(
            "API base (optional)",
            key="p_llm_api_base",
            bind="query-params",
            placeholder="http://localhost:11434/v1",
        )
        # Never bound to the URL and never stored: the key only lives in this session.
        st.text_input("API key", key=API_KEY_KEY, type="password")
    _init("p_force", True)
    st.toggle(
        "Compact below the threshold",
        key="p_force",
        bind="query-params",
        help="A manual /compress runs whatever the size; off shows what automatic compaction does.",
    )
    _init("p_save_history", True)
    st.toggle("Save runs to history", key="p_save_history", bind="query-params")
    return str(focus or "").strip()
