"""The provider's usage per call read from the raw session files with plain JSON, independent of
the importers: what the usage and dollar tests compare the lab's figures with.

Each reader returns one `Hand` per model call, in file order, with the model named by the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Hand:
    prompt: int  # the whole prompt: fresh + cache read + cache write
    read: int
    write: int
    write_1h: int
    output: int
    model: str
    call_id: str | None = None


def lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    return [
        (number, json.loads(text))
        for number, text in enumerate(path.read_text().splitlines(), 1)
        if text.strip()
    ]


def claude_code(path: Path) -> list[Hand]:
    """One call per message.id (streamed records repeat it), its largest output_tokens."""
    records = lines(path)
    sidechain_file = all(r.get("isSidechain") for _, r in records if "uuid" in r)
    by_id: dict[str, list[dict[str, Any]]] = {}
    models: dict[str, str] = {}
    for _, record in records:
        if record.get("type") != "assistant":
            continue
        if record.get("isSidechain") and not sidechain_file:
            continue
        message = record["message"]
        if message.get("model") == "<synthetic>":
            continue
        by_id.setdefault(message["id"], []).append(message["usage"])
        models[message["id"]] = message["model"]
    out = []
    for message_id, usages in by_id.items():
        last = max(usages, key=lambda u: u["output_tokens"])
        read = last.get("cache_read_input_tokens", 0)
        write = last.get("cache_creation_input_tokens", 0)
        write_1h = (last.get("cache_creation") or {}).get("ephemeral_1h_input_tokens", 0)
        prompt = last["input_tokens"] + read + write
        if prompt == 0 and last["output_tokens"] == 0:
            continue
        out.append(
            Hand(
                prompt, read, write, write_1h, last["output_tokens"], models[message_id], message_id
            )
        )
    return out


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def codex(path: Path) -> tuple[list[Hand], int]:
    """(calls, model_context_window): last_token_usage at each new running total, after a forked
    thread's replay of its parent (those records carry the fork's own timestamp)."""
    records = lines(path)
    first = records[0][1]
    own = 0
    if first["payload"].get("forked_from_id"):
        fork = _seconds(first["timestamp"])
        own = next(
            number
            for number, r in records
            if r["type"] == "event_msg"
            and r["payload"]["type"] == "task_started"
            and _seconds(r["timestamp"]) - fork >= 0.5
        )
    out: list[Hand] = []
    previous, window, model = None, 0, ""
    for number, record in records:
        payload = record.get("payload", {})
        if number < own:
            continue
        if record["type"] == "turn_context":
            model = payload["model"]
        if record["type"] != "event_msg" or payload.get("type") != "token_count":
            continue
        info = payload.get("info")
        if not info:
            continue
        window = info["model_context_window"]
        if info["total_token_usage"] == previous:
            continue
        previous = info["total_token_usage"]
        last = info["last_token_usage"]
        if last["input_tokens"] or last["output_tokens"]:
            out.append(
                Hand(
                    last["input_tokens"],
                    last["cached_input_tokens"],
                    0,
                    0,
                    last["output_tokens"],
                    model,
                )
            )
    return out, window


def _gemini(tokens: dict[str, Any], model: str) -> Hand:
    return Hand(
        tokens["input"] + tokens.get("tool", 0),
        tokens["cached"],
        0,
        0,
        tokens["output"] + tokens["thoughts"],
        model,
    )


def gemini_json(path: Path) -> list[Hand]:
    raw = json.loads(path.read_text())
    return [
        _gemini(m["tokens"], m["model"])
        for m in raw["messages"]
        if m["type"] == "gemini" and "tokens" in m
    ]


def gemini_jsonl(path: Path) -> list[Hand]:
    """A rewritten message (same id) counts once, with its last version, at its first place."""
    last: dict[str, dict[str, Any]] = {}
    for _, record in lines(path):
        if record.get("type") == "gemini" and "tokens" in record:
            last[record["id"]] = record
    return [_gemini(r["tokens"], r["model"]) for r in last.values()]


def opencode(path: Path) -> list[Hand]:
    """A `step-finish` part per call: `tokens.input` is the fresh part; reasoning is added back
    to the output only where `total` counts it apart."""
    export = json.loads(path.read_text())
    out = []
    for message in export["messages"]:
        info = message["info"]
        for part in message["parts"]:
            if part["type"] != "step-finish":
                continue
            tokens = part["tokens"]
            read, write = tokens["cache"]["read"], tokens["cache"]["write"]
            prompt = tokens["input"] + read + write
            output = tokens["output"]
            if (
                tokens.get("reasoning")
                and tokens.get("total") == prompt + output + tokens["reasoning"]
            ):
                output += tokens["reasoning"]
            out.append(Hand(prompt, read, write, 0, output, info["modelID"]))
    return out


def dollars(hand: Hand, entry: dict[str, Any]) -> float:
    """A call's price from a litellm cost-map entry, by hand: fresh, writes (5 min and 1 h),
    reads and output at their rates; a provider without a write rate bills writes as input."""
    fresh_rate = entry["input_cost_per_token"]
    write_rate = entry.get("cache_creation_input_token_cost") or fresh_rate
    hour_rate = entry.get("cache_creation_input_token_cost_above_1hr") or write_rate
    read_rate = entry.get("cache_read_input_token_cost") or fresh_rate
    fresh = hand.prompt - hand.read - hand.write
    return (
        fresh * fresh_rate
        + (hand.write - hand.write_1h) * write_rate
        + hand.write_1h * hour_rate
        + hand.read * read_rate
        + hand.output * entry["output_cost_per_token"]
    )
