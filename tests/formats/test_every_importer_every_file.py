"""No silent emptiness, for every importer on every file (issue 35): each format forced on each
real transcript (../shared/corpus and ../shared/corpus-more) and each hand-made file refuses it
(FormatError), or reads content, and when it reads less than half of the file's text it says
so and names what it left. None returns messages that hold nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_paths import corpus_files
from format_helpers import DATA

from compaction.errors import FormatError
from compaction.formats import FORMATS, load_conversations
from compaction.formats.coverage import has_content, measure
from compaction.formats.detect import as_document

SOURCES = [
    *corpus_files(),
    *sorted(p for p in DATA.iterdir() if p.is_file()),
    *sorted(p for p in DATA.iterdir() if p.is_dir()),  # task folders
]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name[:40])
def test_every_format_refuses_warns_or_reads_content(source: Path) -> None:
    document = as_document(source)
    read_by = []
    for name in FORMATS:
        try:
            conversations = load_conversations(document, format=name)
        except FormatError:
            continue  # refused, with a reason
        messages = [m for c in conversations for m in c.messages]
        assert any(has_content(m) for m in messages), f"{name} read {source.name} as empty"
        coverage = measure(document, conversations)
        if coverage.low:
            warned = [w for c in conversations for w in c.warnings if w.startswith("only ")]
            assert warned and "did not read these records" in warned[0], (name, source.name)
        read_by.append(name)
    # Auto-detection reads the file with one of the formats that read it.
    detected = load_conversations(document)[0].format
    assert detected in read_by, (source.name, detected, read_by)
