"""Learn: the algorithm taught with the seed's worked example and a tiny conversation."""

import streamlit as st

from compaction.compactor import compress
from compaction.ui.frame import current_settings
from compaction.ui.learn_content import (
    SEED_HEAD_TOKENS,
    SEED_SUMMARY_SAID,
    TINY_CONFIG,
    WHY,
    tiny_conversation,
    worked_example,
)
from compaction.ui.params import DEFAULTS
from compaction.ui.phase_views import PHASE_TITLES, render_phase

st.title("🎓 Learn: how compaction works")
settings = current_settings()
config = settings.config or DEFAULTS

st.header("The worked example")
st.markdown(
    "A conversation that has just reached the trigger, split by the budgets in the sidebar "
    "(with the defaults this is the seed's 128K example). Move the sliders and the numbers follow."
)
head = st.number_input(
    "Head tokens (the first messages: system prompt and the opening exchange)",
    min_value=0,
    value=SEED_HEAD_TOKENS,
    step=100,
    key="learn_head_tokens",
)
example = worked_example(config, int(head))
rows = {
    "step": [
        "Window (context_length)",
        f"Trigger = window × {config.threshold_ratio:.0%}",
        f"Head (first {config.protect_first_n} messages)",
        f"Tail budget = trigger × {config.tail_token_ratio:.0%}",
        "Middle = trigger − head − tail",
        f"Summary budget = middle × {config.summary_ratio:.0%}",
        f"Clamped to {config.summary_min_tokens:,}–{config.summary_max_tokens:,}",
        "After compaction = head + summary + tail",
    ],
    "tokens": [
        example.window,
        example.trigger,
        example.head,
        example.tail,
        example.middle,
        example.summary_raw,
        example.summary,
        example.after,
    ],
}
st.dataframe(rows, hide_index=True, key="learn_worked_example")
columns = st.columns(3)
columns[0].metric("Trigger", f"{example.trigger:,}")
columns[1].metric(
    "Summary budget", f"{example.summary:,}", help=f"before clamp {example.summary_raw:,}"
)
columns[2].metric("Savings", f"{example.savings_pct:.1f}%")
if example.clamped:
    # Said to the learner, with the live numbers: why the budget is not simply ratio × middle.
    bound = "at most" if example.summary < example.summary_raw else "at least"
    st.info(
        f"**Why {example.summary:,} and not {example.summary_raw:,}?** "
        f"{config.summary_ratio:.0%} of the {example.middle:,}-token middle is "
        f"{example.summary_raw:,} tokens, but a summary's budget is kept between "
        f"{config.summary_min_tokens:,} and {config.summary_max_tokens:,} tokens, so this one "
        f"gets {bound} {example.summary:,}. (You may meet {SEED_SUMMARY_SAID:,} — “9.8K” — for "
        "these settings elsewhere: that figure leaves the clamp out.)"
    )

st.header("A small conversation, phase by phase")
messages = tiny_conversation()
result = compress(messages, TINY_CONFIG)
st.caption(
    f"{len(messages)} messages, {result.tokens_before:,} tokens; window "
    f"{TINY_CONFIG.context_length:,}, tail budget {TINY_CONFIG.tail_budget_tokens:,} tokens."
)
phase_number = st.select_slider(
    "Phase",
    options=list(range(1, len(result.phases) + 1)),
    format_func=lambda n: PHASE_TITLES[result.phases[n - 1].name],
    key="learn_phase",
)
render_phase(result, result.phases[int(phase_number) - 1].name, messages)

st.header("Why each rule exists")
for title, text in WHY:
    st.markdown(f"**{title}.** {text}")
