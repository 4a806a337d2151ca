"""Every error the library raises, in one hierarchy, so callers can catch what they can act on.

    CompactionError
    ├── InvalidConversationError   a message list the engine cannot accept (carries the index)
    ├── ConfigError                a setting that cannot be used (also a ValueError)
    ├── TokenizerError             no offline tokenizer could be loaded
    ├── SummarizationError         a summariser failed (the Compactor degrades to the fallback)
    │   └── SummarizerUnavailable  a summariser cannot run at all (e.g. cooldown active)
    ├── FormatError                a conversation file that cannot be imported
    │   └── UnknownFormatError     no importer recognises the content
    └── HistoryError               the run history database cannot be used

Messages are written for the person who must fix the problem: they say what is wrong and where.
"""

from __future__ import annotations


class CompactionError(Exception):
    """Root of every error raised by the compaction library."""


class InvalidConversationError(CompactionError):
    """The conversation cannot be compacted as given.

    `index` is the position of the offending message in the input list (None when the problem is
    the list itself); `problem` says what is wrong with it.
    """

    def __init__(self, problem: str, index: int | None = None) -> None:
        self.problem = problem
        self.index = index
        where = f"message {index}: " if index is not None else ""
        super().__init__(f"{where}{problem}")


class ConfigError(CompactionError, ValueError):
    """A configuration value is out of range or cannot be resolved (e.g. an unknown model)."""


class TokenizerError(CompactionError):
    """No tokenizer could be loaded offline for the requested model or encoding."""


class SummarizationError(CompactionError):
    """A summariser failed; the Compactor falls back to the static marker or extractive summary.

    `kind` classifies the failure the way the failure policy needs it:
    ``"unavailable"`` (model not found), ``"transient"`` (timeout, rate limit, connection, 5xx),
    ``"cooldown"`` (no call made because a cooldown is active) or ``"failed"`` (anything else).
    `details` carries what the UI and the report show (error class, message, cooldown end...).
    """

    def __init__(
        self,
        message: str,
        kind: str = "failed",
        details: dict[str, object] | None = None,
    ) -> None:
        self.kind = kind
        self.details: dict[str, object] = dict(details or {})
        super().__init__(message)


class SummarizerUnavailable(SummarizationError):
    """The summariser made no attempt (for example, its cooldown is still active)."""


class FormatError(CompactionError):
    """A conversation file could not be imported. `source` names the file, `line` the line."""

    def __init__(self, message: str, source: str | None = None, line: int | None = None) -> None:
        self.source = source
        self.line = line
        where = ""
        if source:
            where = f"{source}: "
        if line is not None:
            where += f"line {line}: "
        super().__init__(f"{where}{message}")


class UnknownFormatError(FormatError):
    """No importer recognises the content; the message lists what was tried."""


class HistoryError(CompactionError):
    """The run history database cannot be opened, migrated or written."""
