"""What a session file records beside its messages that a summary may state as fact.

Agents rarely say where they work, but many session formats record it: Claude Code writes the
working directory (`cwd`) on every record, Codex on `session_meta` and every `turn_context`,
Copilot CLI in `session.start` and `session.context_changed`. A summary that infers the working
directory from a `cd /tmp` inside one shell command states a guess where the file holds the
answer; so the importer's record wins, and a summary line built from it names the record it
came from (origin). The record is passed beside the messages — never inside them, where a
provider that rejects unknown keys would refuse the conversation; so are the marks that say
which user turns the harness sent (hook output, reminders), which the summary never quotes as
the user's words.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RecordedDirectory:
    """From message `position` on, the session's working directory was `path` (per `origin`)."""

    position: int
    path: str
    origin: str  # where the file says so: "`cwd` of the Claude Code record on line 12"


@dataclass(frozen=True)
class SessionRecord:
    """What the session file recorded beside its messages, for the engine: each working
    directory and where it took effect (in message order), and which user-role messages the
    agent's harness sent (`marks`: (index, kind) pairs, kinds of messages.INJECTED_KINDS)."""

    working_directories: tuple[RecordedDirectory, ...] = ()
    marks: tuple[tuple[int, str], ...] = ()

    def mark_map(self) -> dict[int, str]:
        return dict(self.marks)

    def working_directory_at(self, position: int) -> RecordedDirectory | None:
        """The recorded working directory in effect at message `position`: the latest recorded
        at or before it, else the first recorded (a session's directory is set before its first
        message, even when the first record that carries it comes later)."""
        found = None
        for entry in self.working_directories:
            if entry.position > position:
                break
            found = entry
        if found is None and self.working_directories:
            return self.working_directories[0]
        return found

    @classmethod
    def from_changes(cls, changes: list[tuple[int, str, str]]) -> SessionRecord:
        """From (position, path, origin) in file order, keeping each change of directory."""
        kept: list[RecordedDirectory] = []
        for position, path, origin in changes:
            if not path or (kept and kept[-1].path == path):
                continue
            kept.append(RecordedDirectory(position, path, origin))
        return cls(tuple(kept))

    def with_marks(self, marks: dict[int, str]) -> SessionRecord:
        return SessionRecord(self.working_directories, tuple(sorted(marks.items())))
