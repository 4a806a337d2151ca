"""Corpus: every session at once. Scan folders (or this machine's agent sessions), filter the
table, read the distributions per agent, open a session in Inspect or Audit, and sweep the
selection for a frontier across the corpus."""

from datetime import date, datetime, time
from pathlib import Path

import streamlit as st

from compaction.errors import CompactionError
from compaction.lab.corpus.records import ERROR
from compaction.ui import corpus_views as views
from compaction.ui.stored_run import HistoryUnavailable
from compaction.ui.untrusted import md_escape

FAILED_LISTED = 10

views.follow_open()
st.title("🗃️ Corpus")
st.caption(
    "Every session at once: what each agent's compactions cost and forgot, across all of them. "
    "The scan reads each session file once and is stored in the run history; scanning again "
    "reads only the files that changed. The same scan from a terminal: `compaction scan`."
)

with st.form("corpus_scan_form"):
    folders_text = st.text_area(
        "Folders or files to scan, one per line (empty: every agent session on this machine)",
        key="corpus_folders",
        height=80,
    )
    full = st.checkbox("Read every file again", key="corpus_full")
    scan_clicked = st.form_submit_button("Scan", type="primary", key="corpus_scan")
if scan_clicked:
    folders = [line.strip() for line in folders_text.splitlines() if line.strip()]
    try:
        done = views.run_scan(folders, full=full)
        st.session_state["_corpus_notice"] = (
            f"Scanned {len(done.files)} file(s): {done.read} read, {done.reused} unchanged, "
            f"{done.failed} in error."
        )
    except (CompactionError, HistoryUnavailable) as exc:
        st.error(f"The scan could not run: {md_escape(str(exc))}")
notice = st.session_state.get("_corpus_notice")
if notice:
    st.success(notice)

try:
    latest = views.latest_scan()
except HistoryUnavailable as exc:
    st.error(f"The run history is unavailable, so there is no scan to show: {exc}")
    st.stop()
if latest is None:
    st.info("No scan yet: give a folder above (or leave it empty for this machine) and scan.")
    st.stop()
scan, files = latest
st.caption(
    f"Scan {scan.id} of {', '.join(map(md_escape, scan.roots))}, {scan.created_at[:16]} UTC: "
    f"{scan.files} file(s) ({scan.where_run}, {scan.duration_s:.1f} s)"
    + (" — stopped before the end" if scan.stopped else "")
)

all_agents = sorted(
    {s.agent for f in files for s in f.sessions} | {f.agent for f in files if f.agent}
)
left, middle, right, last = st.columns(4)
agents = left.multiselect("Agents", all_agents, key="corpus_agents")
dates = [datetime.fromtimestamp(f.mtime).date() for f in files]
since_day = middle.date_input(
    "Modified since", value=min(dates) if dates else None, key="corpus_since"
)
min_kb = right.number_input("At least (KB)", min_value=0.0, value=0.0, key="corpus_min_kb")
compacted = last.checkbox("Only sessions whose agent compacted", key="corpus_compacted")
errors_only = last.checkbox("Only files in error", key="corpus_errors")
since = datetime.combine(since_day, time.min) if isinstance(since_day, date) else None
shown = views.filter_files(files, agents, since, float(min_kb), compacted, errors_only)
groups = views.recompute(shown)
total = views.everything(groups)

a, b, c, d = st.columns(4)
a.metric("Files", total.files)
b.metric("Sessions", total.sessions)
c.metric("Compactions (auto / manual)", f"{total.compactions} ({total.auto} / {total.manual})")
d.metric("Files in error", total.failed)
failed = views.failed_files(shown)
if failed:
    # Named in text, not only in the grid: the grid draws its rows on a canvas and shows the
    # first screenful, and what could not be read is what a person must act on.
    listed = "\n".join(
        f"- **{md_escape(Path(f.path).name)}** in {md_escape(str(Path(f.path).parent))}: "
        f"{md_escape(f.error or '')}"
        for f in failed[:FAILED_LISTED]
    )
    more = len(failed) - FAILED_LISTED
    errors = sum(f.status == ERROR for f in failed)
    # Said apart, so the count agrees with "Files in error": a README beside the sessions is
    # not a session, not a failure.
    others = len(failed) - errors
    kinds = ", ".join(
        part
        for part in (
            f"{errors} in error" if errors else "",
            f"{others} not a session" if others else "",
        )
        if part
    )
    st.warning(
        f"{len(failed)} file(s) could not be read ({kinds}):\n\n{listed}"
        + (f"\n\n…and {more} more (tick *Only files in error*)." if more > 0 else "")
    )

rows = views.session_rows(shown)
st.markdown("#### Sessions")
st.caption("Sortable by any column; pick a row to open its session.")
st.dataframe(
    rows,
    key=views.PICK_KEY,
    on_select="rerun",
    selection_mode="single-row",
    hide_index=True,
    column_order=[
        "agent",
        "file",
        "status",
        "error",
        "conversation",
        "modified",
        "size KB",
        "messages",
        "tokens",
        "calls",
        "compactions",
        "trigger tokens",
        "forgotten",
        "title",
        "model",
    ],
    column_config={
        "modified": st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm"),
        "error": st.column_config.TextColumn(width="medium"),
    },
)
open_left, open_right, _ = st.columns([1, 1, 4])
open_left.button(
    "Open in Inspect",
    key="corpus_open_inspect",
    on_click=views.request_open,
    args=(rows, "inspect"),
)
open_right.button(
    "Open in Audit", key="corpus_open_audit", on_click=views.request_open, args=(rows, "audit")
)

st.markdown("#### Per agent")
st.dataframe(views.group_rows(groups), hide_index=True, key="corpus_groups")
compactions = views.compaction_rows(shown)
if compactions:
    st.markdown("#### Distributions of the agents' compactions")
    columns = st.columns(len(views.CHARTS))
    for column, (title, metric, axis) in zip(columns, views.CHARTS, strict=True):
        column.plotly_chart(
            views.distribution_chart(compactions, metric, title, axis), key=f"corpus_{metric}"
        )
else:
    st.info("No session in this selection records a compaction its agent made.")

st.markdown("#### Sweep the selection")
with st.form("corpus_sweep_form"):
    specs_text = st.text_input(
        "Parameters (FIELD=V1,V2 or FIELD=START:STOP:STEP; several separated by ';')",
        value="tail_token_ratio=0.1,0.2,0.3,0.5",
        key="corpus_sweep_params",
    )
    window = st.number_input(
        "Context length (tokens)", min_value=1_000, value=32_000, step=1_000, key="corpus_window"
    )
    target = st.slider("Recommend for at least this savings (%)", 0, 95, 30, key="corpus_target")
    sweep_clicked = st.form_submit_button("Sweep", key="corpus_sweep")
if sweep_clicked:
    specs = [spec.strip() for spec in specs_text.split(";") if spec.strip()]
    try:
        st.session_state["_corpus_sweep"] = views.run_corpus_sweep(shown, specs, int(window))
    except (CompactionError, HistoryUnavailable) as exc:
        st.error(f"The sweep could not run: {md_escape(str(exc))}")
corpus_sweep = st.session_state.get("_corpus_sweep")
if corpus_sweep is not None:
    st.plotly_chart(views.frontier_chart(corpus_sweep.sweep, float(target)), key="corpus_frontier")
    recommendation = corpus_sweep.recommendation(float(target))
    if recommendation is None:
        st.info(f"No valid point saves {target}% or more: lower the target or widen the grid.")
    else:
        st.markdown(f"**Recommended:** {md_escape(recommendation.sentence())}")
        reasons = recommendation.loss_reasons()
        if reasons:
            st.caption(
                "Where it loses: "
                + ", ".join(f"{n} {md_escape(reason)}" for reason, n in reasons.items())
            )
