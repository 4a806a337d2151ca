"""Where the shared real transcripts are: `../shared/corpus` (the formats read since the start)
and `../shared/corpus-more` (OpenCode, Cursor: issue 35), both beside the project. Tests that
go over "every corpus file" take both; a fresh clone has neither, and those tests skip."""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CORPUS = SHARED / "corpus"
CORPUS_MORE = SHARED / "corpus-more"
CORPUS_DIRS = (CORPUS, CORPUS_MORE)


def corpus_files(suffixes: tuple[str, ...] | None = None) -> list[Path]:
    """Every transcript of both folders (READMEs left out), sorted by name within each."""
    found = []
    for folder in CORPUS_DIRS:
        if not folder.is_dir():
            continue
        found += sorted(p for p in folder.iterdir() if p.is_file() and p.name != "README.md")
    if suffixes is not None:
        found = [p for p in found if p.suffix in suffixes]
    return found


def corpus_path(name: str) -> Path | None:
    """The corpus file of that name, in whichever folder holds it."""
    for folder in CORPUS_DIRS:
        if (folder / name).exists():
            return folder / name
    return None
