"""The loader's "On this machine" source: the agent sessions stored here, and following one live.

A person watching their own agent wants the session it is writing right now, not a file they
have to find and upload. The table lists every agent's sessions newest first (counts come from
the shared cache, filled on demand or when a session is opened); opening one loads it like an
upload. With
"Follow" on, a fragment polls the file's size and mtime every couple of seconds and reloads it
when the agent has written to it, so the context can be watched filling up.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import streamlit as st

from compaction.errors import CompactionError
from compaction.formats import load_conversations
from compaction.formats.conversation import Conversation
from compaction.formats.local_sessions import (
    ROOTS,
    SessionFile,
    default_cache,
    describe,
    list_sessions,
    modified_since,
    root_of,
)
from compaction.ui.state import Loaded, get_loaded
from compaction.ui.untrusted import md_escape

SOURCE_PREFIX = "local:"
FOLLOW_KEY = "machine_follow"
FOLLOWED_KEY = "_machine_followed"  # (path, mtime, size) of the loaded local session
RELOADED_KEY = "_machine_reloaded"  # (path, time, messages before, after) of the last reload
COUNTED_NEWEST = 20  # sessions one click of "Count" imports
FOLLOW_EVERY_S = 2.0


@st.cache_data(ttl=5, show_spinner=False)
def _cached_listing(roots: tuple[str, ...]) -> list[SessionFile]:
    return list_sessions()


def _listing() -> list[SessionFile]:
    # Keyed by the roots, so moving one (an environment variable) is seen at once.
    return _cached_listing(tuple(str(root_of(root)) for root in ROOTS))


@st.cache_resource(show_spinner=False)
def _facts_cache() -> Any:
    return default_cache()


def _count(sessions: list[SessionFile]) -> None:
    cache = _facts_cache()
    for session in sessions:
        describe(session, cache)
    cache.save()


def _rows(sessions: list[SessionFile]) -> list[dict[str, Any]]:
    # Only cached counts here: the loader runs on every page, and importing a dozen large
    # sessions would slow each first render; counting is one click away.
    cache = _facts_cache()
    rows = []
    for session in sessions:
        facts = cache.get(session)
        rows.append(
            {
                "modified": time.strftime("%Y-%m-%d %H:%M", time.localtime(session.modified)),
                "agent": session.agent,
                "project": session.project,
                "messages": facts.messages if facts is not None else None,
                "tokens": facts.tokens if facts is not None else None,
                "agent compacted": (
                    None
                    if facts is None or facts.compactions is None
                    else f"★ {facts.compactions}"
                    if facts.compactions
                    else "—"
                ),
                "size (KB)": round(session.size / 1024, 1),
                "path": str(session.path),
            }
        )
    return rows


def _matches(session: SessionFile, query: str) -> bool:
    haystack = f"{session.agent} {session.project} {session.path}".lower()
    return all(word in haystack for word in query.lower().split())


def load_local(path: Path) -> Conversation:
    """The first conversation of a session file (CompactionError when it cannot be imported)."""
    return load_conversations(path)[0]


def remember_followed(path: Path) -> None:
    try:
        info = path.stat()
    except OSError:
        return
    st.session_state[FOLLOWED_KEY] = (str(path), info.st_mtime, info.st_size)


def render_machine_tab(on_open: Any) -> None:
    """The table and the open button; `on_open(path)` loads the chosen session."""
    sessions = _listing()
    if not sessions:
        where = "; ".join(f"{root.agent}: {root_of(root)} (${root.variable})" for root in ROOTS)
        st.info(f"No agent sessions were found on this machine. Looked in {md_escape(where)}.")
        return
    query = st.text_input(
        "Search sessions (agent, project, path)", key="machine_query", placeholder="e.g. codex api"
    )
    shown = [s for s in sessions if _matches(s, query)] if query else sessions
    if st.checkbox(
        "Only sessions whose agent compacted (counted ones)",
        key="machine_compacted",
        help="Sessions where the agent itself compacted its context: open one on the Audit "
        "page to see what each compaction forgot.",
    ):
        cache = _facts_cache()
        shown = [s for s in shown if (facts := cache.get(s)) is not None and facts.compactions]
    st.caption(
        f"{len(shown)} of {len(sessions)} session(s), newest first. Messages and tokens are "
        "counted on demand and cached until the file changes."
    )
    if not shown:
        return
    st.button(
        f"Count messages and tokens (newest {min(len(shown), COUNTED_NEWEST)})",
        key="machine_count",
        on_click=_count,
        args=(shown[:COUNTED_NEWEST],),
    )
    st.dataframe(_rows(shown), hide_index=True, key="machine_table")
    by_path = {str(s.path): s for s in shown}
    chosen = st.selectbox(
        "Session",
        list(by_path),
        format_func=lambda p: f"{by_path[p].agent} · {by_path[p].project or '—'} · {Path(p).name}",
        key="machine_pick",
    )
    st.button(
        "Open session", key="machine_open", on_click=on_open, args=(Path(chosen),), type="primary"
    )


def render_follow(loaded: Loaded, reload: Any) -> None:
    """The follow toggle for a session loaded from this machine, and the polling fragment."""
    if not loaded.source.startswith(SOURCE_PREFIX):
        return
    following = st.toggle(
        "Follow: reload when the agent writes to this session",
        key=FOLLOW_KEY,
        help="Checks the file every couple of seconds and reloads it when it grows.",
    )
    if following:
        _poll(reload)


@st.fragment(run_every=FOLLOW_EVERY_S)
def _poll(reload: Any) -> None:
    followed = st.session_state.get(FOLLOWED_KEY)
    if not followed:
        return
    path, mtime, size = followed
    if not modified_since(Path(path), mtime, size):
        st.caption(_follow_status(path))
        return
    before = _message_count()
    try:
        reload(Path(path))
    except CompactionError as exc:
        # A half-written last line is reported by the importer as a warning; anything worse is
        # shown and the previous state kept, so following survives a bad moment in the file.
        st.warning(f"Could not reload {md_escape(Path(path).name)}: {md_escape(exc)}")
        return
    st.session_state[RELOADED_KEY] = (path, time.strftime("%H:%M:%S"), before, _message_count())
    st.rerun(scope="app")


def _message_count() -> int | None:
    loaded = get_loaded()
    return len(loaded.messages) if loaded is not None else None


def _follow_status(path: str) -> str:
    """What following has seen: the last reload (when, and the count it changed) or, before
    any, that the file is as it was opened. "Since it was loaded" alone read as stale once a
    reload had changed the count."""
    name = md_escape(Path(path).name)
    reloaded = st.session_state.get(RELOADED_KEY)
    if reloaded is not None and reloaded[0] == path:
        _, at, before, after = reloaded
        counts = f"{before:,} → {after:,} messages" if None not in (before, after) else "reloaded"
        return f"Following {name}: reloaded at {at} ({counts}); no change since."
    count = _message_count()
    held = f" ({count:,} messages)" if count is not None else ""
    return f"Following {name}{held}: no change since it was opened."
