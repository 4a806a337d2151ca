"""What a corpus run reads: the session files under some folders, or every agent session on this
machine (the app's "On this machine" listing), each with the size and mtime that make a second
scan incremental.

A folder may hold more than sessions (a samples folder's build scripts, a README beside the
transcripts). Files whose suffix no agent writes sessions in are left out when a folder is
walked (`NOT_SESSIONS`); anything else is read, and a file that turns out not to be a session is
reported as such, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from compaction.errors import FormatError

#: Suffixes of files no agent writes sessions in; skipped quietly when a folder is walked (a file
#: named on the command line is always read, and fails loudly if it is not a session).
NOT_SESSIONS = frozenset(
    {
        ".py",
        ".pyc",
        ".sh",
        ".toml",
        ".cfg",
        ".ini",
        ".lock",
        ".png",
        ".jpg",
        ".jpeg",
        ".gif",
        ".svg",
        ".ico",
        ".pdf",
        ".zip",
        ".gz",
        ".tar",
        ".whl",
        ".so",
        ".db",
        ".sqlite",
        ".sqlite3",
    }
)


@dataclass(frozen=True)
class Source:
    """One session file (or an address inside a database, `<db>#<session id>`) to read.

    `size` and `mtime` are what the file system said when it was listed: a later scan that finds
    both unchanged reuses what the history already holds for it. `agent` is the agent whose
    folder it was found in, when the discovery knows it (a folder scan does not: the format
    names the agent then).
    """

    path: str
    size: int
    mtime: float
    agent: str | None = None
    project: str = ""
    named: bool = False  # named on the command line, rather than found in a folder


def walk(paths: Sequence[str | Path], skip_suffixes: bool = True) -> Iterator[tuple[Path, bool]]:
    """(file, named explicitly) for each path; folders are walked in name order, hidden entries
    skipped, and `NOT_SESSIONS` suffixes too unless the caller counts them itself
    (`skip_suffixes=False`). FormatError for a path that does not exist."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                relative = child.relative_to(path).parts
                if any(part.startswith(".") for part in relative) or not child.is_file():
                    continue
                if skip_suffixes and child.suffix.lower() in NOT_SESSIONS:
                    continue
                yield child, False
        elif path.exists():
            yield path, True
        else:
            raise FormatError("no such file or folder", source=str(raw))


def sources_under(paths: Sequence[str | Path]) -> list[Source]:
    """Every file to scan under `paths` (files and folders), each stat-ed once."""
    found: dict[str, Source] = {}
    for path, named in walk(paths):
        try:
            info = path.stat()
        except OSError:
            continue  # removed while walking
        key = str(path)
        found.setdefault(key, Source(key, info.st_size, info.st_mtime, named=named))
    return list(found.values())


def machine_sources(agents: tuple[str, ...] | None = None) -> list[Source]:
    """Every agent session on this machine, as the app's "On this machine" tab lists them
    (`formats.local_sessions`: the same roots and environment overrides)."""
    from compaction.formats.local_sessions import list_sessions

    return [
        Source(str(s.path), s.size, s.modified, agent=s.agent, project=s.project)
        for s in list_sessions(agents)
    ]
