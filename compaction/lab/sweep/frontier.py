"""From sweep points to a decision: the Pareto frontier, the recommendation, paste-ready snippets.

A sweep of a hundred points is too many to read. Only the points that no other point beats on
both savings and recall (the frontier) are worth considering, and for a savings target the user
sets, one of them is the answer: the best recall that reaches the target. The snippets turn that
answer into settings for the places users put them: Python, the `compaction` CLI,
hermes-agent's `compression:` YAML section, and an agent built on LangChain, Pydantic AI or the
OpenAI Agents SDK (the adapters' one line, `lab/adapter_snippets.py`).

Points may be `SweepPoint`s or plain mappings with the same keys (what a chart or a stored sweep
holds), so the app can call these on rows it reads back from the history.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from itertools import groupby
from typing import Any, TypeVar

from compaction.config import CompactionConfig
from compaction.lab.adapter_snippets import adapter_snippets, config_expression

P = TypeVar("P")

_DEFAULTS = CompactionConfig()

#: `compaction compress` flags with a name of their own; every other field goes through --set.
CLI_FLAGS: dict[str, str] = {
    "context_length": "--context-length",
    "threshold_ratio": "--threshold",
    "protect_first_n": "--head",
    "tail_token_ratio": "--tail-ratio",
    "orphan_strategy": "--orphans",
    "counter": "--counter",
    "model": "--model",
}

# hermes-agent's `compression:` section. This mapping is OURS, not hermes-agent's documented
# schema: hermes names the trigger `threshold` (a share of the window) and has `enabled` and
# `protect_first_n`; for the budgets it has no exact equivalent of we keep our field names
# (tail_token_ratio, summary_ratio, ...), so a user can see what to set and where.
HERMES_KEYS: dict[str, str] = {
    "threshold_ratio": "threshold",
    "protect_first_n": "protect_first_n",
    "tail_token_ratio": "tail_token_ratio",
    "summary_ratio": "summary_ratio",
}
# Fields that describe the lab's measurement, not an agent setting: never in the YAML.
_LAB_ONLY = ("model", "counter")


def value_of(point: Any, key: str) -> Any:
    """`key` of a SweepPoint (attribute) or of a mapping (item)."""
    if isinstance(point, Mapping):
        return point[key]
    return getattr(point, key)


def pareto_frontier(points: Sequence[P], x: str = "savings_pct", y: str = "recall") -> list[P]:
    """The points not dominated on (x, y), both maximised, in ascending x (ties: input order).

    A point is dominated when another is at least as good on both and better on one; points
    equal on both are all kept. O(n log n): walk x from high to low, keeping the best y seen at
    strictly higher x.
    """
    order = sorted(range(len(points)), key=lambda i: -float(value_of(points[i], x)))
    keep: set[int] = set()
    best_y = float("-inf")
    for _, group in groupby(order, key=lambda i: float(value_of(points[i], x))):
        members = list(group)
        top = max(float(value_of(points[i], y)) for i in members)
        if top > best_y:
            keep.update(i for i in members if float(value_of(points[i], y)) == top)
            best_y = top
    chosen = sorted(keep, key=lambda i: (float(value_of(points[i], x)), i))
    return [points[i] for i in chosen]


def _is_valid(point: Any) -> bool:
    return (
        int(value_of(point, "openai_errors")) == 0 and int(value_of(point, "anthropic_errors")) == 0
    )


def recommend(points: Sequence[P], min_savings_pct: float) -> P | None:
    """The point with the best recall among those saving at least `min_savings_pct`.

    Ties go to higher savings, then fewer tokens after, then the earlier point. Points whose
    compacted request a provider would reject are never recommended. None when no valid point
    reaches the target.
    """
    candidates = [
        (index, point)
        for index, point in enumerate(points)
        if float(value_of(point, "savings_pct")) >= min_savings_pct and _is_valid(point)
    ]
    if not candidates:
        return None
    _, best = min(
        candidates,
        key=lambda pair: (
            -float(value_of(pair[1], "recall")),
            -float(value_of(pair[1], "savings_pct")),
            int(value_of(pair[1], "tokens_after")),
            pair[0],
        ),
    )
    return best


def non_default_fields(config: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of `config` (a `to_dict()` or any mapping of fields) that differ from the
    defaults, in declaration order."""
    full = CompactionConfig.from_dict(dict(config))
    return {
        name: getattr(full, name)
        for name in CompactionConfig.field_names()
        if getattr(full, name) != getattr(_DEFAULTS, name)
    }


def _python(changed: Mapping[str, Any]) -> str:
    return config_expression(changed)


def _cli(changed: Mapping[str, Any]) -> str:
    parts = ["compaction", "compress", "INPUT"]
    for name, value in changed.items():
        if name in CLI_FLAGS:
            parts += [CLI_FLAGS[name], shlex.quote(str(value))]
        else:
            parts += ["--set", shlex.quote(f"{name}={value}")]
    return " ".join(parts)


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)  # a double-quoted JSON string is a valid YAML scalar
    return repr(value)


def _yaml(config: CompactionConfig, changed: Mapping[str, Any]) -> str:
    lines = [
        "# hermes-agent config.yaml (our mapping of CompactionConfig onto its section;",
        "# keys hermes does not know are ours: check your hermes-agent version)",
        "compression:",
        "  enabled: true",
    ]
    for name, key in HERMES_KEYS.items():
        lines.append(f"  {key}: {_yaml_scalar(getattr(config, name))}")
    for name, value in changed.items():
        if name in HERMES_KEYS or name in _LAB_ONLY:
            continue
        note = "  # the window the sweep assumed" if name == "context_length" else ""
        lines.append(f"  {name}: {_yaml_scalar(value)}{note}")
    return "\n".join(lines)


def recommendation_snippets(point: Any) -> dict[str, str]:
    """Ready-to-paste settings of `point`: "python", "cli", "yaml" and one per agent-framework
    adapter (`adapter_snippets.ADAPTERS`): only what differs from the defaults, except the YAML,
    which always states hermes-agent's main keys. A peer's point has no adapter snippets."""
    has_params = "params" in point if isinstance(point, Mapping) else hasattr(point, "params")
    params = dict(value_of(point, "params")) if has_params else {}
    peer_params = {name: value for name, value in params.items() if "." in name}
    if peer_params:
        return _peer_snippets(peer_params)
    return config_snippets(CompactionConfig.from_dict(dict(value_of(point, "config"))))


def config_snippets(
    config: CompactionConfig, *, agent_model_summary: bool = False, focus: str | None = None
) -> dict[str, str]:
    """The snippets of `config` (the Inspect page's current settings, a sweep's point): the
    adapters' with the agent's model writing the summary when `agent_model_summary`, and the
    summary's `focus` when given."""
    changed = non_default_fields(config.to_dict())
    return {
        "python": _python(changed),
        "cli": _cli(changed),
        "yaml": _yaml(config, changed),
        **adapter_snippets(changed, agent_model_summary=agent_model_summary, focus=focus),
    }


def _peer_snippets(peer_params: Mapping[str, Any]) -> dict[str, str]:
    """A point of a peer's policy: how to run it in the lab (it is not a config of ours)."""
    peer = next(iter(peer_params)).partition(".")[0]
    fields = {name.partition(".")[2]: value for name, value in peer_params.items()}
    return {
        "python": (
            f"from compaction.lab.peers import make_peer\npeer = make_peer({peer!r}, {fields!r})"
        ),
        "cli": f"compaction eval INPUT --strategies {peer},compaction",
        "yaml": (
            f"# {peer}'s policy as the lab implements it (lab/peers/); set these in {peer} itself\n"
            + "\n".join(f"{name}: {_yaml_scalar(value)}" for name, value in fields.items())
        ),
    }
