"""Small wording helpers shared by the pages, so counts read as English everywhere."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """`1 message`, `2 messages`, `1,024 messages` (thousands separated)."""
    word = noun if count == 1 else plural_form or f"{noun}s"
    return f"{count:,} {word}"


def when(iso: str | None, now: datetime | None = None) -> str:
    """A stored UTC timestamp as a person reads it, in this machine's time zone: "just now",
    "12 min ago", "today 14:05", "yesterday 09:30", "3 Dec 14:05", "3 Dec 2025 14:05".
    Text that is not a timestamp is returned as it is."""
    if not iso:
        return ""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # the history writes UTC
    current = now or datetime.now(UTC)
    seconds = (current - moment).total_seconds()
    local = moment.astimezone(current.tzinfo if now is not None else None)
    today = current.astimezone(local.tzinfo).date()
    clock = local.strftime("%H:%M")
    if 0 <= seconds < 60:
        return "just now"
    if 0 <= seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if local.date() == today:
        return f"today {clock}"
    if local.date() == today - timedelta(days=1):
        return f"yesterday {clock}"
    day = f"{local.day} {local.strftime('%b')}"
    if local.year != today.year:
        day += f" {local.year}"
    return f"{day} {clock}"
