"""Prices per model: litellm's bundled cost map (offline), or the user's override.

A price is five rates per token — fresh input, output, a cache write at the 5-minute TTL, a cache
write at the 1-hour TTL, a cache read — plus, where the map has one, the higher rates a provider
charges for the whole request once its prompt passes a size (`*_above_200k_tokens`,
`*_above_272k_tokens`). A provider that bills no cache write (OpenAI, Gemini's implicit cache)
has no write rate in the map: its writes cost the input rate, since they are input it counted.

A model the map does not know has no price: `PriceBook.get` returns None and every figure that
needs it says "unknown price", never $0. `--price MODEL=in,out,cache_write,cache_read` (per
million tokens; an optional fifth value is the 1-hour write) prices it, or replaces the map's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from compaction.errors import ConfigError
from compaction.litellm_loader import load_litellm

PER_MILLION = 1_000_000
UNKNOWN_PRICE = "unknown price"
#: The long-context tiers of the map (the plain ones, not batch, flex or priority).
_TIER = re.compile(r"^input_cost_per_token_above_(\d+)k_tokens$")
_DATE = re.compile(r"-\d{8}$")


@dataclass(frozen=True)
class Rates:
    """USD per token."""

    input: float
    output: float
    cache_write: float
    cache_read: float
    cache_write_1h: float

    def to_dict(self) -> dict[str, float]:
        return {
            "input": self.input,
            "output": self.output,
            "cache_write": self.cache_write,
            "cache_read": self.cache_read,
            "cache_write_1h": self.cache_write_1h,
        }


@dataclass(frozen=True)
class Price:
    """What one model costs, and where the figures come from."""

    model: str
    rates: Rates
    source: str  # "litellm's bundled map (KEY)" or "--price"
    provider: str | None = None  # litellm's `litellm_provider`
    #: Above this many prompt tokens the whole request is billed at `long_rates`.
    long_context: int | None = None
    long_rates: Rates | None = None

    def rates_for(self, prompt_tokens: int) -> Rates:
        long = self.long_context
        if long is not None and self.long_rates is not None and prompt_tokens > long:
            return self.long_rates
        return self.rates

    def per_million(self) -> dict[str, float]:
        return {key: round(value * PER_MILLION, 6) for key, value in self.rates.to_dict().items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "source": self.source,
            "provider": self.provider,
            "per_million": self.per_million(),
            "long_context": self.long_context,
        }


def parse_price(text: str) -> Price:
    """`MODEL=in,out,cache_write,cache_read[,cache_write_1h]`, USD per million tokens."""
    model, sep, values = text.partition("=")
    parts = [part.strip() for part in values.split(",")] if sep else []
    if not model.strip() or len(parts) not in (4, 5):
        raise ConfigError(
            f"--price {text!r}: write MODEL=in,out,cache_write,cache_read (USD per million "
            "tokens, e.g. claude-sonnet-4-6=3,15,3.75,0.3; a fifth value is the 1-hour write)"
        )
    try:
        numbers = [float(part) for part in parts]
    except ValueError:
        raise ConfigError(f"--price {text!r}: the prices must be numbers") from None
    if any(number < 0 for number in numbers):
        raise ConfigError(f"--price {text!r}: a price cannot be negative")
    rates = [number / PER_MILLION for number in numbers]
    one_hour = rates[4] if len(rates) == 5 else rates[2]
    return Price(
        model=model.strip(),
        rates=Rates(rates[0], rates[1], rates[2], rates[3], one_hour),
        source="--price",
    )


def _cost_map() -> dict[str, Any]:
    litellm = load_litellm()  # the bundled map, never the network
    model_cost: dict[str, Any] = litellm.model_cost
    return model_cost


def _rate(entry: dict[str, Any], key: str, fallback: float) -> float:
    value = entry.get(key)
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else fallback
    )


def _rates(entry: dict[str, Any], suffix: str = "") -> Rates | None:
    fresh = entry.get(f"input_cost_per_token{suffix}")
    output = entry.get(f"output_cost_per_token{suffix}")
    if not isinstance(fresh, int | float) or not isinstance(output, int | float):
        return None
    write = _rate(entry, f"cache_creation_input_token_cost{suffix}", float(fresh))
    return Rates(
        input=float(fresh),
        output=float(output),
        cache_write=write,
        cache_read=_rate(entry, f"cache_read_input_token_cost{suffix}", float(fresh)),
        cache_write_1h=_rate(entry, "cache_creation_input_token_cost_above_1hr", write)
        if not suffix
        else write,
    )


def _candidates(model: str) -> list[str]:
    """The map keys a recorded model name may be under: as written, without a provider prefix
    (`openai/gpt-5.3-codex`), without a date (`claude-opus-4-5-20251101` is in the map, but a
    newer date may not be) or a bracketed variant (`claude-opus-4-6[1m]`)."""
    names = [model]
    bare = model.split("[", 1)[0]
    names.append(bare)
    if "/" in bare:
        names.append(bare.split("/", 1)[1])
    names += [_DATE.sub("", name) for name in list(names)]
    return list(dict.fromkeys(names))


def litellm_price(model: str) -> Price | None:
    """litellm's bundled price for `model`, or None when its map does not know it."""
    cost_map = _cost_map()
    for key in _candidates(model):
        entry = cost_map.get(key)
        if not isinstance(entry, dict):
            continue
        rates = _rates(entry)
        if rates is None:
            continue
        long_context = long_rates = None
        for name in entry:
            match = _TIER.match(name)
            if match:
                long_context = int(match.group(1)) * 1000
                long_rates = _rates(entry, f"_above_{match.group(1)}k_tokens")
                break
        provider = entry.get("litellm_provider")
        return Price(
            model=model,
            rates=rates,
            source=f"litellm's bundled map ({key})",
            provider=provider if isinstance(provider, str) else None,
            long_context=long_context if long_rates is not None else None,
            long_rates=long_rates,
        )
    return None


@dataclass
class PriceBook:
    """Prices by model: the overrides first, then litellm's map; each looked up once."""

    overrides: dict[str, Price] = field(default_factory=dict)
    _known: dict[str, Price | None] = field(default_factory=dict, repr=False)

    @classmethod
    def from_specs(cls, specs: list[str] | tuple[str, ...]) -> PriceBook:
        prices = [parse_price(spec) for spec in specs]
        return cls({price.model: price for price in prices})

    def get(self, model: str | None) -> Price | None:
        if not model:
            return None
        if model in self.overrides:
            return self.overrides[model]
        if model not in self._known:
            self._known[model] = litellm_price(model)
        return self._known[model]

    def unknown(self, models: list[str | None]) -> list[str]:
        """The models in `models` that have no price, each once."""
        return sorted({m for m in models if m and self.get(m) is None})
