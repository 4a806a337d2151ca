"""Run bundles: one run exported as a self-contained JSON object (conversation, config, result
report), read back from a file with the loaders' guards, and imported as a new run."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compaction.errors import HistoryError

if TYPE_CHECKING:
    from compaction.history.store import History

BUNDLE_KIND = "compaction-lab/run"
BUNDLE_VERSION = 1


def read_bundle(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON object in the bundle file at `path`, read with the conversation loaders' guards
    (size limit, binary, UTF-8, nesting depth); every way it can fail is a HistoryError naming
    the file, never a RecursionError or ValueError from the parser."""
    from compaction.errors import FormatError
    from compaction.formats.source import json_kind, read_source

    name = str(path)
    try:
        document = read_source(Path(path), name=name)
    except FormatError as exc:
        detail = str(exc).removeprefix(f"{name}: ")
        if not Path(path).exists() or detail.startswith(("cannot read", "is a directory")):
            raise HistoryError(f"cannot read {name}: {detail}") from None
        raise HistoryError(f"{name}: not a JSON run bundle ({detail})") from None
    except RecursionError:
        raise HistoryError(f"{name}: JSON nested too deeply to read") from None
    except ValueError:
        # Python refuses to convert integers of more than 4,300 digits (CVE-2020-10735).
        raise HistoryError(
            f"{name}: not a JSON run bundle (it holds an integer of more than "
            f"{sys.get_int_max_str_digits()} digits)"
        ) from None
    if document.kind != "json" or not isinstance(document.value, dict):
        what = json_kind(document.value) if document.kind == "json" else "not JSON"
        if document.kind == "jsonl":
            what = "JSON Lines"
        raise HistoryError(f"{name}: not a JSON run bundle ({what}, not one JSON object)")
    return document.value


def export_run(history: History, run_id: int) -> dict[str, Any]:
    """A self-contained JSON bundle of a run: conversation, config and result report."""
    run = history.run(run_id)
    session = history.session(run.session_id)
    return {
        "kind": BUNDLE_KIND,
        "version": BUNDLE_VERSION,
        "conversation": {
            "title": session.full_title,
            "format": session.format,
            "messages": session.messages,
        },
        "config": run.config,
        "result": run.report,
        "run": {
            "created_at": run.created_at,
            "label": run.full_label,
            "note": run.note,
            "summarizer_info": run.summarizer_info,
        },
    }


def import_run(history: History, bundle: Any) -> int:
    """Store a run from an `export()` bundle (a new run id; same session if already known)."""
    if not isinstance(bundle, dict) or bundle.get("kind") != BUNDLE_KIND:
        raise HistoryError(f"not a compaction-lab run bundle (expected kind {BUNDLE_KIND!r})")
    version = bundle.get("version") or 0
    if isinstance(version, bool) or not isinstance(version, int):
        raise HistoryError(f"the run bundle's version is {json_repr(version)}, not a number")
    if version > BUNDLE_VERSION:
        raise HistoryError(
            f"the run bundle has version {bundle.get('version')}; this version of "
            f"compaction-lab reads version {BUNDLE_VERSION}: upgrade to import it"
        )
    conversation = bundle.get("conversation")
    result = bundle.get("result")
    if not isinstance(conversation, dict) or not isinstance(conversation.get("messages"), list):
        raise HistoryError("the run bundle has no 'conversation.messages' list")
    if not isinstance(result, dict):
        raise HistoryError("the run bundle has no 'result' report")
    meta_raw = bundle.get("run")
    meta: dict[str, Any] = meta_raw if isinstance(meta_raw, dict) else {}
    report = dict(result)
    if isinstance(bundle.get("config"), dict):
        report["config"] = bundle["config"]
    label, note = meta.get("label"), meta.get("note")
    try:
        return history._insert(
            BundleConversation(conversation),
            report,
            str(label) if label is not None else None,
            str(note) if note is not None else None,
            meta.get("summarizer_info") if isinstance(meta.get("summarizer_info"), dict) else None,
            str(meta["created_at"]) if meta.get("created_at") else None,
        )
    except RecursionError:
        raise HistoryError("the run bundle is nested too deeply to store") from None
    except OverflowError as exc:
        # A count beyond SQLite's 64-bit integers, or an infinite float made an int.
        raise HistoryError(f"the run bundle holds a number out of range ({exc})") from None


# -- lifecycle -------------------------------------------------------------------------


def json_repr(value: Any) -> str:
    """A short JSON rendering of a bundle value for an error message."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:39] + "…"


class BundleConversation:
    """The conversation part of a bundle, shaped like a Conversation for `session_record`."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.messages: list[Any] = data["messages"]
        self.title: str | None = data.get("title")
        self.format: str | None = data.get("format")
