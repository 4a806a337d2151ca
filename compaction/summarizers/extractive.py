"""Placeholder replaced by the real extractive summariser below in this commit series."""

from __future__ import annotations

from typing import Any

from compaction.summarizers.base import OnToken, SummaryRequest
from compaction.summary import render_summary


class ExtractiveSummarizer:
    name = "extractive"

    def __init__(self) -> None:
        self.last_details: dict[str, Any] = {}

    def summarize(self, request: SummaryRequest, on_token: OnToken | None = None) -> str:
        text = render_summary({"Active Task": request.latest_user_request or "None."})
        if on_token is not None:
            on_token(text)
        return text
