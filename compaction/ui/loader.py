"""Loading a conversation: a sample (with its description), an upload of any format, or pasted JSON.

Every path goes through the same importers as the CLI, so the app accepts exactly what
`compaction convert` accepts. A bad file shows the importer's own message (which names the line or
index), never a traceback; the import warnings are shown, not swallowed.
"""

from __future__ import annotations

import importlib
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from compaction.config import CompactionConfig
from compaction.errors import CompactionError
from compaction.formats import load_conversations
from compaction.formats.conversation import Conversation
from compaction.lab.samples import Sample, list_samples, load_sample
from compaction.tokens import make_counter
from compaction.ui.conversation_link import adopt, is_landing
from compaction.ui.machine_sessions import (
    SOURCE_PREFIX,
    load_local,
    remember_followed,
    render_follow,
    render_machine_tab,
)
from compaction.ui.params import take_settings_notice
from compaction.ui.state import Loaded, from_conversation, get_loaded
from compaction.ui.untrusted import md_escape

LOAD_ERROR_KEY = "_load_error"
ADOPTED_UPLOAD_KEY = "_adopted_upload"  # file key and pick of the upload last put on view
MAX_WARNINGS_SHOWN = 20
_IMPORT_ERRORS = (CompactionError, ValueError, UnicodeError, RecursionError)


@st.cache_data(show_spinner=False)
def _samples() -> list[Sample]:
    return list_samples()


def _load_sample_clicked() -> None:
    sample_id = st.session_state.get("load_sample_id")
    sample = next((s for s in _samples() if s.id == sample_id), None)
    if sample is None:
        st.session_state[LOAD_ERROR_KEY] = f"No sample named {sample_id!r}."
        return
    try:
        conversation = load_sample(sample.id)
    except _IMPORT_ERRORS as exc:
        st.session_state[LOAD_ERROR_KEY] = f"Could not load the sample {sample.id}: {exc}"
        return
    # In a callback, so the sample's suggested settings reach the widgets before they are drawn.
    adopt(from_conversation(conversation, f"sample:{sample.id}", sample.title, sample.settings))


def _file_key(name: str, data: bytes) -> str:
    return f"{name}|{len(data)}|{hash(data)}"


def _parse_upload(name: str, data: bytes) -> list[Conversation]:
    cache: dict[str, Any] = st.session_state.setdefault("_upload_cache", {})
    key = _file_key(name, data)
    if key not in cache:
        cache.clear()  # one parsed upload is kept, not every file ever dropped in
        cache[key] = load_conversations(data)
    conversations: list[Conversation] = cache[key]
    return conversations


def _uploaded(conversations: list[Conversation], index: int, name: str, file_key: str) -> Loaded:
    # The upload widget hands the file over on every rerun; hashing 5,000 messages again each time
    # costs ~0.15 s, so the Loaded (with its content hash) is built once per file and pick.
    cache: dict[str, Loaded] = st.session_state.setdefault("_upload_loaded", {})
    key = f"{file_key}|{index}"
    if key not in cache:
        cache.clear()
        cache[key] = from_conversation(conversations[index], f"upload:{name}", None)
    return cache[key]


def _conversation_label(conversations: list[Conversation], index: int) -> str:
    conversation = conversations[index]
    title = conversation.title or "untitled"
    return f"{index}: {title} ({len(conversation.messages)} messages)"


@dataclass(frozen=True)
class _Upload:
    name: str
    file_key: str
    conversations: list[Conversation]


def _upload_tab() -> _Upload | None:
    """The file uploader; the parsed upload (its pick is drawn outside the Load panel)."""
    upload = st.file_uploader(
        "Conversation file (any supported agent format; JSON or JSONL)",
        key="load_upload",
        type=None,
    )
    if upload is None:
        st.session_state.pop(ADOPTED_UPLOAD_KEY, None)
        return None
    data = upload.getvalue()
    try:
        conversations = _parse_upload(upload.name, data)
    except _IMPORT_ERRORS as exc:
        st.error(f"Could not import {md_escape(upload.name)}: {md_escape(exc)}")
        return None
    return _Upload(upload.name, _file_key(upload.name, data), conversations)


def _pick_upload(upload: _Upload) -> None:
    """Which conversation of the upload is on view: a picker in plain sight (not folded away
    in the Load panel) when the file holds several, and the upload adopted when it, or its
    pick, is new. A sample loaded later is not undone by the file still sitting in the widget."""
    conversations = upload.conversations
    index = 0
    if len(conversations) > 1:
        index = st.selectbox(
            f"{upload.name} holds {len(conversations):,} conversations: pick one",
            range(len(conversations)),
            format_func=lambda i: _conversation_label(conversations, i),
            key="load_pick",
        )
    picked = f"{upload.file_key}|{index}"
    if st.session_state.get(ADOPTED_UPLOAD_KEY) == picked:
        return
    st.session_state[ADOPTED_UPLOAD_KEY] = picked
    loaded = _uploaded(conversations, index, upload.name, upload.file_key)
    current = get_loaded()
    if current is None or current.content_hash != loaded.content_hash:
        adopt(loaded)
        # The Load panel was labelled (and opened) before the upload was read: one rerun,
        # before the page draws anything heavy, shows "Loaded: …" and folds it.
        st.rerun()


def _open_local(path: Path) -> None:
    """Load a session from this machine (the "On this machine" tab, and each follow reload)."""
    try:
        conversation = load_local(path)
    except _IMPORT_ERRORS as exc:
        st.session_state[LOAD_ERROR_KEY] = f"Could not import {path}: {exc}"
        return
    remember_followed(path)
    adopt(from_conversation(conversation, f"{SOURCE_PREFIX}{path}", None))


def _paste_clicked() -> None:
    text = str(st.session_state.get("load_paste") or "").strip()
    if not text:
        st.session_state[LOAD_ERROR_KEY] = "Paste a conversation (JSON or JSONL) first."
        return
    try:
        conversations = load_conversations(text)
    except _IMPORT_ERRORS as exc:
        st.session_state[LOAD_ERROR_KEY] = f"Could not import the pasted text: {exc}"
        return
    adopt(from_conversation(conversations[0], "paste", "Pasted conversation"))
    if len(conversations) > 1:
        st.session_state[LOAD_ERROR_KEY] = (
            f"The pasted text holds {len(conversations)} conversations; the first was loaded "
            "(upload it as a file to pick another)."
        )


@st.cache_resource(show_spinner=False)
def _warm_up() -> Future[None]:
    """Load the default tokenizer and pandas once per server, in the background.

    Both cost about a second on first use (tiktoken builds its BPE tables; st.dataframe imports
    pandas). The page with nothing loaded starts them while the user picks a file, so the first
    run with a conversation does not pay for them. make_counter is shared and locked, so a run
    that needs the counter before the warm-up finishes simply waits for it.
    """

    def warm() -> None:
        importlib.import_module("pandas")  # kept in sys.modules for st.dataframe

        config = CompactionConfig()
        make_counter(config.counter, config.model)

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warm-up")
    future = pool.submit(warm)
    pool.shutdown(wait=False)
    return future


PICKED_SAMPLE_KEY = "_picked_sample"  # (loaded source, the picker's sample) as last drawn


def _sample_picked() -> None:
    loaded = get_loaded()
    source = loaded.source if loaded is not None else None
    st.session_state[PICKED_SAMPLE_KEY] = (source, st.session_state.get("load_sample_id"))


def _sync_sample_picker(loaded: Loaded | None, by_id: dict[str, Sample]) -> None:
    """Put the picker on the sample on view, or on the one the person picked while it was on
    view. Set on every run: a page switch drops the widget's state, and the picker fell back to
    the first sample under "Loaded: <another one>"."""
    source = loaded.source if loaded is not None else None
    remembered = st.session_state.get(PICKED_SAMPLE_KEY)
    if remembered is not None and remembered[0] == source and remembered[1] in by_id:
        wanted = remembered[1]
    elif source is not None and source.removeprefix("sample:") in by_id:
        wanted = source.removeprefix("sample:")
    else:
        return
    st.session_state["load_sample_id"] = wanted
    st.session_state[PICKED_SAMPLE_KEY] = (source, wanted)


def render_loader() -> Loaded | None:
    """The Load panel; returns the loaded conversation (also kept in session state)."""
    loaded = get_loaded()
    if loaded is None:
        _warm_up()
    label = (
        "Load a conversation"
        if loaded is None
        else f"Loaded: {md_escape(loaded.title)} — load another"
    )
    # The conversation the app opened on was not the person's choice: the panel stays open, so
    # loading their own is one click away.
    with st.expander(label, expanded=loaded is None or is_landing(loaded)):
        sample_tab, upload_tab, machine_tab, paste_tab = st.tabs(
            ["Sample", "Upload", "On this machine", "Paste JSON"]
        )
        with sample_tab:
            samples = _samples()
            if samples:
                by_id = {sample.id: sample for sample in samples}
                _sync_sample_picker(loaded, by_id)
                chosen = st.selectbox(
                    "Sample session",
                    list(by_id),
                    format_func=lambda i: by_id[i].title,
                    key="load_sample_id",
                    on_change=_sample_picked,
                )
                st.caption(by_id[chosen].description)
                st.button("Load sample", key="load_sample_btn", on_click=_load_sample_clicked)
            else:
                st.info("No sample sessions were found in the package (compaction/lab/samples/).")
        with upload_tab:
            upload = _upload_tab()
        with machine_tab:
            render_machine_tab(_open_local)
        with paste_tab:
            st.text_area("Conversation JSON", key="load_paste", height=150)
            st.button("Load pasted JSON", key="load_paste_btn", on_click=_paste_clicked)
    if upload is not None:
        _pick_upload(upload)
    if error := st.session_state.pop(LOAD_ERROR_KEY, None):
        st.error(md_escape(error))
    if changed := take_settings_notice():
        lines = "\n".join(f"- {md_escape(line)}" for line in changed)
        st.info(f"The sidebar's settings changed with the conversation:\n{lines}")
    loaded = get_loaded()
    if loaded is not None and not is_landing(loaded):  # an open Load panel already shows it
        _render_sample_hint(loaded)
        render_follow(loaded, _open_local)
        _render_import_report(loaded)
    if loaded is not None and loaded.warnings:
        shown = loaded.warnings[:MAX_WARNINGS_SHOWN]
        more = len(loaded.warnings) - len(shown)
        text = "\n".join(f"- {md_escape(warning)}" for warning in shown)
        if more:
            text += f"\n- … and {more} more"
        st.warning(f"Import warnings ({len(loaded.warnings)}):\n{text}")
    return loaded


def _render_sample_hint(loaded: Loaded) -> None:
    """A sample's description (it says which phase shows what the sample is for) stays in
    view once the sample is loaded, not only inside the folded Load panel."""
    if not loaded.source.startswith("sample:"):
        return
    sample_id = loaded.source.removeprefix("sample:")
    sample = next((s for s in _samples() if s.id == sample_id), None)
    if sample is not None and sample.description:
        st.caption(f"ℹ️ {sample.description}")  # the project's own text, as in the picker


def _render_import_report(loaded: Loaded) -> None:
    """What the import read and skipped, and the compactions the agent itself made."""
    if loaded.compactions:
        lines = "\n".join(f"- {md_escape(line)}" for line in loaded.compactions)
        st.info(
            f"The agent compacted this session itself {len(loaded.compactions)} time(s); "
            f"its summary is kept where the agent continued from it:\n{lines}"
        )
    if not loaded.report:
        return
    summary, *skipped = loaded.report
    if not skipped:
        st.caption(f"Import: {md_escape(summary)}.")
        return
    with st.expander(f"Import: {md_escape(summary)}"):
        # Record kinds come from the file: shown as plain text, never as Markdown.
        st.text("\n".join(skipped))
