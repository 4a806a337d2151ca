"""The sample sessions the project ships, as an index the app and the CLI can list and load.

The samples are package data beside this module (written by `sample_sessions/build_samples.py`
at the repository root), so an installed wheel has them as a checkout does. A folder without
them still gives `list_samples() == []` rather than failing: the app must start.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compaction.errors import CompactionError

if TYPE_CHECKING:
    from compaction.formats.conversation import Conversation

SAMPLES_DIR = Path(__file__).resolve().parent
INDEX_NAME = "index.json"


class SampleNotFoundError(CompactionError, LookupError):
    """No sample with the requested id is in the index."""


@dataclass(frozen=True)
class Sample:
    """One indexed sample session: where it is, its format and what the app says about it."""

    id: str
    path: Path
    format: str
    title: str
    description: str
    #: Suggested settings for the app (e.g. `context_length`, `focus`); never required.
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": str(self.path),
            "format": self.format,
            "title": self.title,
            "description": self.description,
            "settings": dict(self.settings),
        }


def _read_index(directory: Path) -> list[dict[str, Any]]:
    index_path = directory / INDEX_NAME
    if not index_path.is_file():
        return []
    try:
        data = json.loads(index_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CompactionError(
            f"{index_path}: the sample index is not readable JSON ({error})"
        ) from error
    entries = data.get("samples") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise CompactionError(f"{index_path}: expected an object with a 'samples' list")
    return [entry for entry in entries if isinstance(entry, dict)]


def list_samples(directory: Path | None = None) -> list[Sample]:
    """Every sample in the index, in index order; [] when the folder or index is absent."""
    folder = directory if directory is not None else SAMPLES_DIR
    samples = []
    for position, entry in enumerate(_read_index(folder)):
        missing = [key for key in ("id", "file", "format", "title") if not entry.get(key)]
        if missing:
            raise CompactionError(
                f"{folder / INDEX_NAME}: sample {position} lacks {', '.join(missing)}"
            )
        settings = entry.get("settings")
        samples.append(
            Sample(
                id=str(entry["id"]),
                path=folder / str(entry["file"]),
                format=str(entry["format"]),
                title=str(entry["title"]),
                description=str(entry.get("description", "")),
                settings=dict(settings) if isinstance(settings, dict) else {},
            )
        )
    return samples


def get_sample(sample_id: str, directory: Path | None = None) -> Sample:
    samples = list_samples(directory)
    for sample in samples:
        if sample.id == sample_id:
            return sample
    known = ", ".join(sample.id for sample in samples) or "none (the samples' folder is missing)"
    raise SampleNotFoundError(f"no sample named {sample_id!r}; available: {known}")


def load_sample(sample_id: str, directory: Path | None = None) -> Conversation:
    """The sample's Conversation, imported through the format loader like any user file."""
    # Imported here so listing samples (the app's picker) does not load every importer.
    from compaction.formats import load_conversation

    sample = get_sample(sample_id, directory)
    return load_conversation(sample.path, format=sample.format)
