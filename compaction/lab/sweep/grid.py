"""Sweep grids: `field=start:stop:step` or `field=v1,v2` parsed into exact values, and their points.

Why decimals: `0.05:0.5:0.05` built with float arithmetic gives 0.15000000000000002 and may miss
0.5 altogether, which then shows up in tables, charts and the recommended config. The range is
computed in `Decimal` and each value is converted once, so `0.15` is the float literal `0.15`.

Why two validation steps: a single value is checked against its own field's range as soon as the
parameter is parsed (so `tail_token_ratio=0:2:0.5` fails naming 2.0), while rules that tie two
fields together (`summary_min_tokens <= summary_max_tokens`) can only be judged per combination,
in `grid_configs`, which names the failing combination.

A peer's own parameters are axes too, named `PEER.FIELD` (`hermes.protect_last_n=10,20,40`,
`openhands.max_size=60:180:60`): a point with peer fields runs that peer's policy (lab/peers/)
at the base config's window instead of our pipeline. One peer per grid; `point_peer` builds it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from compaction.config import CompactionConfig
from compaction.errors import ConfigError
from compaction.lab.peers import PEERS, Peer, get_peer, make_peer
from compaction.lab.peers.base import peer_fields

#: A sweep grid: each swept field with its values, in the order the user gave them.
Grid = dict[str, list[Any]]

#: More values than this for one parameter is almost certainly a typo in the step.
MAX_VALUES_PER_PARAM = 1_000
#: A cartesian product larger than this is refused before anything runs.
MAX_POINTS = 20_000

_DEFAULTS = CompactionConfig()
# Partners of the cross-field rules set to their loosest values, so that checking one value
# judges only that field's own range (see the module docstring).
_LOOSE = {
    "summary_min_tokens": 50,
    "summary_max_tokens": 1_000_000,
    "args_keep_chars": 1,
    "args_max_chars": 1_000_000_000,
}


def split_peer_field(name: str) -> tuple[str, str] | None:
    """("hermes", "protect_last_n") for "hermes.protect_last_n"; None for an engine field."""
    peer, separator, field = name.partition(".")
    return (peer, field) if separator else None


def peer_field_names() -> list[str]:
    """Every peer parameter as a sweep axis name, peer by peer."""
    return [f"{name}.{field}" for name, peer in PEERS.items() for field in peer_fields(peer)]


def default_value(name: str) -> Any:
    """The default of an engine field or of a peer's parameter."""
    split = split_peer_field(name)
    if split is None:
        field_kind(name)  # names the sweepable fields when `name` is none of them
        return getattr(_DEFAULTS, name)
    peer, field = split
    fields = peer_fields(get_peer(peer))
    if field not in fields:
        raise ConfigError(f"unknown parameter {name!r}: {peer} has {', '.join(fields)}")
    return fields[field]


#: The same for a peer's cross-field rule (OpenHands keeps keep_first + 1 under max_size // 2).
_PEER_LOOSE: dict[str, dict[str, Any]] = {
    "openhands.max_size": {"keep_first": 0},
    "openhands.keep_first": {"max_size": 1_000_000_000},
}


def field_kind(name: str) -> type:
    """int, float, bool or str: the type of the field's default value."""
    if split_peer_field(name) is not None:
        return type(default_value(name))
    if name not in CompactionConfig.field_names():
        raise ConfigError(
            f"unknown parameter {name!r}: sweepable fields are "
            f"{', '.join(CompactionConfig.field_names())}, or a peer's PEER.FIELD "
            f"({', '.join(PEERS)})"
        )
    return type(getattr(_DEFAULTS, name))


def _decimal(name: str, text: str, spec: str) -> Decimal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise ConfigError(f"--param {spec!r}: {text.strip()!r} is not a number") from None
    if not value.is_finite():
        raise ConfigError(f"--param {spec!r}: {text.strip()!r} is not a finite number")
    return value


def _places(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


def _range(name: str, body: str, spec: str) -> list[Decimal]:
    parts = body.split(":")
    if len(parts) != 3:
        raise ConfigError(
            f"--param {spec!r}: a range is START:STOP:STEP (three numbers), got {body!r}"
        )
    start, stop, step = (_decimal(name, part, spec) for part in parts)
    if step <= 0:
        raise ConfigError(f"--param {spec!r}: the step must be positive, got {step}")
    if start > stop:
        raise ConfigError(f"--param {spec!r}: start {start} is above stop {stop}")
    count = int((stop - start) / step) + 1
    if count > MAX_VALUES_PER_PARAM:
        raise ConfigError(
            f"--param {spec!r}: {count:,} values (more than {MAX_VALUES_PER_PARAM:,}); "
            "use a larger step"
        )
    # Every value is rounded to the finest decimals among start, stop and step: exact steps.
    quantum = Decimal(1).scaleb(-max(_places(start), _places(stop), _places(step)))
    return [(start + step * i).quantize(quantum) for i in range(count)]


_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def _convert(name: str, kind: type, raw: Decimal | str, spec: str) -> Any:
    if kind is str:
        return str(raw)
    if kind is bool:  # a switch (cache_aware): both of its values can be swept
        text = str(raw).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise ConfigError(f"--param {spec!r}: {name} takes true or false, got {str(raw)!r}")
    number = raw if isinstance(raw, Decimal) else _decimal(name, raw, spec)
    if kind is int:
        if number != number.to_integral_value():
            raise ConfigError(f"--param {spec!r}: {name} takes whole numbers, got {number}")
        return int(number)
    return float(number)


def check_value(name: str, value: Any) -> None:
    """Raise ConfigError naming `name` and `value` when the value is outside the field's range."""
    split = split_peer_field(name)
    if split is not None:
        try:
            make_peer(split[0], {**_PEER_LOOSE.get(name, {}), split[1]: value})
        except ConfigError as exc:
            raise ConfigError(f"invalid value {value!r} for parameter {name}: {exc}") from None
        return
    loose = {k: v for k, v in _LOOSE.items() if k != name}
    try:
        CompactionConfig(**{**loose, name: value})
    except (ConfigError, TypeError, ValueError) as exc:
        raise ConfigError(f"invalid value {value!r} for parameter {name}: {exc}") from None


def parse_param(spec: str) -> tuple[str, list[Any]]:
    """`"tail_token_ratio=0.05:0.5:0.05"` or `"orphan_strategy=stub,strip"` → (field, values).

    A range includes STOP when it falls on the grid. Values keep their order; repeats are merged.
    Raises ConfigError naming the parameter and the bad value.
    """
    name, separator, body = spec.partition("=")
    name, body = name.strip(), body.strip()
    if not separator or not name or not body:
        raise ConfigError(
            f"--param {spec!r}: expected FIELD=START:STOP:STEP or FIELD=VALUE1,VALUE2,..."
        )
    kind = field_kind(name)
    raw: Sequence[Decimal | str]
    if kind not in (str, bool) and ":" in body:
        raw = _range(name, body, spec)
    else:
        raw = [item.strip() for item in body.split(",")]
        if any(not item for item in raw):
            raise ConfigError(f"--param {spec!r}: an empty value in the list {body!r}")
    values: list[Any] = []
    for item in raw:
        value = _convert(name, kind, item, spec)
        if value not in values:
            check_value(name, value)
            values.append(value)
    return name, values


def parse_grid(specs: Iterable[str]) -> Grid:
    """Several `--param` specs into one grid; a field given twice is an error."""
    grid: Grid = {}
    for spec in specs:
        name, values = parse_param(spec)
        if name in grid:
            raise ConfigError(f"parameter {name} is given more than once")
        grid[name] = values
    if not grid:
        raise ConfigError("a sweep needs at least one parameter (--param FIELD=VALUES)")
    return grid


def normalise_grid(grid: Mapping[str, Sequence[Any]]) -> Grid:
    """A grid given as a mapping (library callers), checked like parsed parameters."""
    if not grid:
        raise ConfigError("a sweep needs at least one parameter")
    checked: Grid = {}
    for name, values in grid.items():
        kind = field_kind(name)
        if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
            raise ConfigError(f"parameter {name}: give a non-empty list of values")
        converted: list[Any] = []
        for value in values:
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if value not in converted:
                check_value(name, value)
                converted.append(value)
        checked[name] = converted
    return checked


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """The cartesian product as a list of {field: value}, first parameter varying slowest."""
    names = list(grid)
    count = 1
    for values in grid.values():
        count *= len(values)
    if count > MAX_POINTS:
        raise ConfigError(
            f"the grid has {count:,} points (more than {MAX_POINTS:,}); sweep fewer values"
        )
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*grid.values())]


def describe_point(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{name}={value}" for name, value in params.items())


def grid_configs(
    grid: Mapping[str, Sequence[Any]], base: CompactionConfig | None = None
) -> list[tuple[dict[str, Any], CompactionConfig]]:
    """Each point with its full config; an invalid combination is a ConfigError naming it."""
    base = base or CompactionConfig()
    configs = []
    for params in grid_points(grid):
        engine = {k: v for k, v in params.items() if split_peer_field(k) is None}
        try:
            config = base.replace(**engine)
            point_peer(params)
        except (ConfigError, TypeError, ValueError) as exc:
            raise ConfigError(f"invalid combination {describe_point(params)}: {exc}") from None
        configs.append((params, config))
    return configs


def point_peer(params: Mapping[str, Any]) -> Peer | None:
    """The peer a point runs (its `PEER.FIELD` values applied), or None for our pipeline."""
    chosen: dict[str, dict[str, Any]] = {}
    for name, value in params.items():
        split = split_peer_field(name)
        if split is not None:
            chosen.setdefault(split[0], {})[split[1]] = value
    if not chosen:
        return None
    if len(chosen) > 1:
        raise ConfigError(
            f"a sweep varies one peer's parameters at a time, got {', '.join(chosen)}"
        )
    [(peer, values)] = chosen.items()
    return make_peer(peer, values)
