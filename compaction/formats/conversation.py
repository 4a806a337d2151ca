"""The result of importing a conversation file: canonical messages plus what the source told us.

Importers return this rather than a bare message list because the UI and the CLI need the rest:
which format was recognised, a title to show, the model and working directory when the source
records them, the tool schemas, and every repair or omission the import made (each warning names
the line or index it concerns, so a user can look it up in the original file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compaction.messages import Message


@dataclass
class Conversation:
    """One imported conversation in canonical OpenAI chat format."""

    messages: list[Message]
    format: str
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    tools: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "format": self.format,
            "title": self.title,
            "metadata": self.metadata,
            "tools": self.tools,
            "warnings": self.warnings,
            "source": self.source,
        }
