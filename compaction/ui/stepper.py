"""The stepper: Phase 1 … Phase 5 and Fit one click each, "Run all", and which step is on view.

The step only reveals phases: with an offline summariser all five are computed (and cached) at
once, so stepping is instant. With an LLM the click on Phase 3 (or Run all) is the request to call
the model; until then phases 3–5 are not shown.

"Run all" lands on the result (before → after, the 13 section cards, the orphan fixes), not on
the last phase: that is what a person runs the phases for. A phase button that is already
revealed only shows that phase: the later ones stay revealed (Reset, and only Reset, hides them).
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from compaction.result import PHASE_NAMES

STEP_KEY = "inspect_step"
VIEW_KEY = "phase_view"
LLM_REQUEST_KEY = "llm_requested"
#: Set by a click that runs the phases to the end: the run it shows is saved to the history.
SAVE_NEXT_KEY = "_save_next_run"
PHASE_BUTTONS = (
    "1 · Prune",
    "2 · Boundaries",
    "3 · Summarise",
    "4 · Assemble",
    "5 · Cleanup",
    "6 · Fit",
)
#: The step after which the run is complete (the before → after view follows Cleanup; Fit is
#: part of that result, so the view stays on show when Fit is revealed).
CLEANUP_STEP = 5
LAST_STEP = len(PHASE_BUTTONS)
#: The view of the whole run (before → after, the summary, the orphan fixes): picked as 0,
#: before the phases' numbers.
RESULT_VIEW = 0
RESULT_LABEL = "Result"


def current_step() -> int:
    return int(st.session_state.get(STEP_KEY, 0))


def go_to(step: int, view: int | None = None) -> None:
    """Reveal phases up to `step` and show that phase, or `view` (callbacks and pages both use
    it; only Reset and a changed LLM run reveal fewer)."""
    step = max(0, min(LAST_STEP, step))
    st.session_state[STEP_KEY] = step
    st.session_state[VIEW_KEY] = view if view is not None else (step if step else None)


def _clicked(step: int, llm: bool) -> None:
    current = current_step()
    if llm and step >= 3 and current < 3:
        st.session_state[LLM_REQUEST_KEY] = True
    if step <= current:
        # Already revealed: show it, and keep every later phase (stepping back used to reveal
        # only up to here, silently hiding phases 2–6 after Run all).
        st.session_state[VIEW_KEY] = step
        return
    if step >= CLEANUP_STEP:
        st.session_state[SAVE_NEXT_KEY] = True
    go_to(step)


def _run_all(llm: bool) -> None:
    if llm and current_step() < 3:
        st.session_state[LLM_REQUEST_KEY] = True
    st.session_state[SAVE_NEXT_KEY] = True
    go_to(LAST_STEP, RESULT_VIEW)


def render_stepper(llm: bool, llm_done: bool) -> int:
    """The buttons; returns how many steps are revealed (0..6)."""
    step = current_step()
    st.markdown("**Run step by step**")
    # A wrapping row of buttons as wide as their labels: fixed columns cut the labels to
    # "1 · P…" in a 1024-pixel window (eight columns beside the sidebar); this row wraps instead.
    row = st.container(horizontal=True, wrap=True, gap="small", key="stepper_row")
    for number, label in enumerate(PHASE_BUTTONS, 1):
        text = label + (" (LLM)" if llm and number == 3 and not llm_done else "")
        row.button(
            text,
            key=f"step_{number}",
            disabled=number > step + 1,
            type="primary" if number == step + 1 else "secondary",
            on_click=_clicked,
            args=(number, llm),
            width="content",
        )
    row.button(
        "Run all",
        key="step_all",
        on_click=_run_all,
        args=(llm,),
        type="primary" if step < LAST_STEP else "secondary",
        width="content",
    )
    row.button("Reset", key="step_reset", on_click=go_to, args=(0,), width="content")
    if step >= 2:
        st.caption(
            f"Phases 1–{step} are revealed: a phase's button shows it again and keeps the later "
            "ones; Reset starts over."
        )
    return current_step()


def phase_picker(step: int, available: Sequence[str], result: bool = False) -> str | None:
    """Which revealed view to show: a phase by name, or RESULT_LABEL (with `result`: once the
    run is complete, before the phases); None before the first step.

    `available` are the phases the run has (a skipped run has no Phase 3 or 4).
    """
    numbers = [n for n, name in enumerate(PHASE_NAMES, 1) if name in available and n <= step]
    if result and step >= CLEANUP_STEP:
        numbers.insert(0, RESULT_VIEW)
    if not numbers:
        return None
    if st.session_state.get(VIEW_KEY) not in numbers:
        st.session_state[VIEW_KEY] = numbers[-1]
    choice = st.segmented_control(
        "Show",
        numbers,
        format_func=lambda n: RESULT_LABEL if n == RESULT_VIEW else PHASE_BUTTONS[n - 1],
        key=VIEW_KEY,
        required=True,
    )
    picked = numbers[-1] if choice is None else int(choice)
    return RESULT_LABEL if picked == RESULT_VIEW else PHASE_NAMES[picked - 1]
