"""Which conversation a link names, the one the app opens on, and the URL that keeps naming it.

A link reproduces what its sender saw: the page is the URL's path, the settings are the sidebar's
URL-bound widgets, and the conversation is one of these query parameters:

    ?sample=<id>        a shipped sample (its suggested settings apply unless the link sets them)
    ?session=<path>     an agent session on this machine (the "On this machine" tab); only a
                        file under an agent's session folder, a folder scanned on the Corpus
                        page or one named in $COMPACTION_LAB_SESSION_DIRS: anything else is
                        refused, so a crafted link cannot make the app read any file
    ?from_run=<id>      the conversation of a run in the history
    ?stored=<sha256>    a conversation stored in the history (a sweep's, say)

Streamlit drops query parameters that no widget is bound to when the user switches pages, so
the frame writes the loaded conversation's parameter back on every run. An upload or a paste
cannot travel in a URL; its links name no conversation.

With nothing loaded and nothing named, the app opens on the last conversation the person had
open (remembered in a small file beside the history database) or else on the teaching example,
so the first page already shows the regions, the chart and the stepper.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from compaction.errors import CompactionError
from compaction.formats.local_sessions import SESSION_DIRS_VARIABLE, is_within, session_folders
from compaction.lab.samples import get_sample, load_sample
from compaction.ui.machine_sessions import SOURCE_PREFIX, load_local, remember_followed
from compaction.ui.params import CONFIG_KEYS, switch_suggested_settings
from compaction.ui.pins_view import PINS_KEY, forget_message_pins
from compaction.ui.state import Loaded, from_conversation, get_loaded, make_loaded, set_loaded

#: The query parameter of each kind of conversation reference, and its Loaded.source prefix.
PREFIXES = {"sample": "sample:", "session": SOURCE_PREFIX, "from_run": "run:", "stored": "stored:"}
LANDING_SAMPLE = "teaching-example"
WRITTEN_KEY = "_url_conversation"  # the reference this session last put in the URL
LANDING_KEY = "_landing_source"  # the source of the conversation the app opened on by itself
ERROR_KEY = "_load_error"  # the loader shows (and clears) it
LAST_OPEN_NAME = "last-open.json"
_IMPORT_ERRORS = (CompactionError, ValueError, UnicodeError, RecursionError, OSError)


@dataclass(frozen=True)
class Ref:
    """A conversation reference: `kind` is a key of PREFIXES, `value` the id, path or hash."""

    kind: str
    value: str

    @property
    def source(self) -> str:
        return PREFIXES[self.kind] + self.value

    def params(self) -> dict[str, str]:
        return {self.kind: self.value}


class LinkError(Exception):
    """The conversation a link names cannot be opened; the message says which and why."""


def ref_of(loaded: Loaded | None) -> Ref | None:
    """The reference that reopens `loaded`, or None (an upload, a paste)."""
    if loaded is None:
        return None
    for kind, prefix in PREFIXES.items():
        if loaded.source.startswith(prefix):
            return Ref(kind, loaded.source.removeprefix(prefix))
    return None


def url_ref() -> Ref | None:
    """The conversation the URL names, if any."""
    for kind in PREFIXES:
        value = st.query_params.get(kind)
        if value:
            return Ref(kind, str(value))
    return None


def link_params(loaded: Loaded | None = None) -> dict[str, str]:
    """The query parameters naming the loaded conversation (for st.switch_page, links)."""
    ref = ref_of(loaded if loaded is not None else get_loaded())
    return ref.params() if ref is not None else {}


def _history_conversation(ref: Ref) -> Loaded:
    # Imported here: the history package pulls in sqlite-utils (and pandas), which the landing
    # page does not otherwise need.
    from compaction.ui.stored_run import HistoryUnavailable, history_call

    try:
        if ref.kind == "from_run":
            run = history_call(lambda h: h.run(int(ref.value), full=False))
            session_id = run.session_id
            title = run.session_title
        else:
            session_id, title = ref.value, None
        row = history_call(lambda h: h.session(session_id))
    except (HistoryUnavailable, CompactionError, ValueError, LookupError) as exc:
        raise LinkError(f"the history has no {ref.kind}={ref.value}: {exc}") from exc
    return make_loaded(
        row.messages or [], title or row.title or "Stored conversation", row.format or "openai",
        ref.source,
    )  # fmt: skip


def _scanned_folders() -> list[Path]:
    """The folders and files the person scanned on the Corpus page (its rows open by link)."""
    from compaction.ui.stored_run import HistoryUnavailable, history_call

    try:
        scans = history_call(lambda h: h.scans(limit=None))
    except (HistoryUnavailable, CompactionError):
        return []
    # A scan of this machine's sessions is stored with the root "this machine": no folder.
    return [Path(root) for scan in scans for root in scan.roots if root != "this machine"]


def _check_session_folder(path: Path) -> None:
    """Refuse a link to a file outside the agents' session folders: the app shows code and
    secrets, and a crafted `?session=` link must not make it read any file the process can."""
    if is_within(path, session_folders()) or is_within(path, _scanned_folders()):
        return
    raise LinkError(
        f"{path} is not in an agent's session folder, so the link was not followed. The app "
        "opens by link only sessions under the agents' own folders (those of \"On this "
        f'machine"), folders scanned on the Corpus page, and folders named in '
        f"${SESSION_DIRS_VARIABLE}; to open this file, upload it in the loader."
    )


def open_ref(ref: Ref) -> Loaded:
    """Import the conversation `ref` names (LinkError when it cannot)."""
    try:
        if ref.kind == "sample":
            sample = get_sample(ref.value)
            conversation = load_sample(sample.id)
            return from_conversation(conversation, ref.source, sample.title, sample.settings)
        if ref.kind == "session":
            path = Path(ref.value)
            _check_session_folder(path)
            loaded = from_conversation(load_local(path), ref.source, None)
            remember_followed(path)
            return loaded
    except _IMPORT_ERRORS as exc:
        raise LinkError(f"Could not open {ref.kind} {ref.value}: {exc}") from exc
    return _history_conversation(ref)


def adopt(loaded: Loaded, keep: frozenset[str] = frozenset()) -> None:
    """Make `loaded` the conversation on view: its suggested settings replace the previous
    one's (except `keep`, which a link sets itself), and it is remembered for the next visit."""
    previous = get_loaded()
    st.session_state.pop(LANDING_KEY, None)
    set_loaded(loaded)
    if previous is None or previous.source != loaded.source or not loaded.settings:
        switch_suggested_settings(loaded.settings, keep)
    if previous is not None and previous.source != loaded.source and "pins" not in keep:
        forget_message_pins()
    if (ref := ref_of(loaded)) is not None:
        remember(ref)


#: Settings a sample suggests that the link's sender set back to their defaults: Streamlit
#: leaves a widget at its default out of the URL, which would let the suggestion come back.
DROPPED_PARAM = "unsuggested"


def _settings_in_url() -> frozenset[str]:
    names = {name for name, key in CONFIG_KEYS.items() if key in st.query_params}
    if "p_focus" in st.query_params:
        names.add("focus")
    if PINS_KEY in st.query_params:
        names.add("pins")
    dropped = str(st.query_params.get(DROPPED_PARAM) or "")
    names.update(name for name in dropped.split(",") if name)
    return frozenset(names)


def _dropped_suggestions(loaded: Loaded | None) -> str:
    """The loaded conversation's suggested settings the person has changed and whose widget
    is not in the URL (at its default), comma-separated; "" when there are none."""
    if loaded is None:
        return ""
    dropped = []
    for name, value in loaded.settings.items():
        key = CONFIG_KEYS.get(name) or ("p_focus" if name == "focus" else None)
        if key is None or key in st.query_params or key not in st.session_state:
            continue
        if st.session_state[key] != (str(value) if name == "focus" else value):
            dropped.append(name)
    return ",".join(sorted(dropped))


def follow_url() -> None:
    """Before the sidebar: open the conversation the URL names when it changed from outside
    (a shared link, back/forward), or the landing conversation when nothing is loaded."""
    named = url_ref()
    written = st.session_state.get(WRITTEN_KEY)
    loaded = get_loaded()
    if named is not None and (loaded is None or named not in (written, ref_of(loaded))):
        _open(named)
    elif named is None and loaded is None:
        landing = recall() or Ref("sample", LANDING_SAMPLE)
        if not _open(landing, quiet=True) and landing.kind != "sample":
            landing = Ref("sample", LANDING_SAMPLE)
            _open(landing, quiet=True)
        st.session_state[LANDING_KEY] = landing.source


def is_landing(loaded: Loaded) -> bool:
    """Whether `loaded` is the conversation the app opened on by itself (not one picked)."""
    return bool(st.session_state.get(LANDING_KEY) == loaded.source)


def _open(ref: Ref, quiet: bool = False) -> bool:
    try:
        loaded = open_ref(ref)
    except LinkError as exc:
        if not quiet:
            st.session_state[ERROR_KEY] = f"The link's conversation cannot be opened: {exc}"
        return False
    adopt(loaded, _settings_in_url())
    return True


def write_url() -> None:
    """Name the loaded conversation in the URL (page switches drop the parameter; a new load
    replaces it), and no other: a link must not name a conversation it no longer shows."""
    wanted = ref_of(get_loaded())
    for kind in PREFIXES:
        present = st.query_params.get(kind)
        if wanted is not None and kind == wanted.kind:
            if present != wanted.value:
                st.query_params[kind] = wanted.value
        elif present is not None:
            st.query_params.pop(kind, None)
    dropped = _dropped_suggestions(get_loaded())
    if dropped != str(st.query_params.get(DROPPED_PARAM) or ""):
        if dropped:
            st.query_params[DROPPED_PARAM] = dropped
        else:
            st.query_params.pop(DROPPED_PARAM, None)
    st.session_state[WRITTEN_KEY] = wanted


# -- the last conversation the person had open -------------------------------------------------


def _last_open_path() -> Path:
    # Beside the history database ($COMPACTION_LAB_DB or the user data directory), without
    # importing the history package (sqlite-utils costs a third of a second to import).
    configured = os.environ.get("COMPACTION_LAB_DB")
    if configured:
        return Path(configured).expanduser().with_name(LAST_OPEN_NAME)
    import platformdirs

    return Path(platformdirs.user_data_dir("compaction-lab")) / LAST_OPEN_NAME


def remember(ref: Ref) -> None:
    """Keep `ref` as the conversation to open next time (best effort: a read-only disk is fine)."""
    path = _last_open_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"kind": ref.kind, "value": ref.value}), encoding="utf-8")
    except OSError:
        pass


def recall() -> Ref | None:
    """The conversation the person last had open, if it was remembered and is still known."""
    try:
        data = json.loads(_last_open_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    kind, value = data.get("kind"), data.get("value")
    if kind not in PREFIXES or not isinstance(value, str) or not value:
        return None
    return Ref(kind, value)
