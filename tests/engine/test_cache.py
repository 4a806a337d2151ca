"""The engine's memory of content (compaction/cache.py) is bounded in bytes and belongs to its
Compactor: nothing grows with the number of conversations compacted, and nothing is shared
behind a caller's back."""

from __future__ import annotations

import gc

import pytest

from compaction import CompactionConfig, Compactor, compress
from compaction.cache import CompactionCache, Memo, current_cache
from compaction.errors import ConfigError
from compaction.input.growing import LastConversation
from compaction.tokens import make_counter


def _conversation(seed: int, size: int = 60) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [{"role": "user", "content": f"task {seed}: fix it"}]
    for step in range(size):
        call_id = f"c{seed}_{step}"
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "bash", "arguments": f'{{"command": "ls {step}"}}'},
                    }
                ],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": f"{seed} {step} " * 200}
        )
    return messages


def test_the_memo_evicts_the_least_recently_used_within_its_bytes() -> None:
    memo = Memo(max_bytes=1_000)
    computed: list[str] = []

    def get(key: str, chars: int) -> str:
        def compute() -> str:
            computed.append(key)
            return key.upper()

        return memo.get(key, chars, compute)

    assert get("ab", 100) == "AB"
    assert get("cd", 100) == "CD"
    assert get("ab", 100) == "AB"  # a hit: "cd" is now the least recently used
    assert get("ef", 500) == "EF"  # 300 + 300 + 700 > 1,000: "cd" goes
    assert computed == ["ab", "cd", "ef"]
    assert memo.info() == {"hits": 1, "misses": 3, "entries": 2, "bytes": 1_000}
    assert get("huge", 5_000) == "HUGE"  # larger than the whole bound: computed, not kept
    assert memo.info()["entries"] == 2
    memo.clear()
    assert memo.info() == {"hits": 0, "misses": 0, "entries": 0, "bytes": 0}


def test_a_cache_stays_within_its_bound_over_many_conversations() -> None:
    cache = CompactionCache(max_bytes=2 * 1024 * 1024)
    config = CompactionConfig(context_length=8_000)
    for seed in range(40):  # ~5 MB of distinct text: more than twice the bound
        Compactor(config, cache=cache).compress(_conversation(seed), force=True)
        assert cache.nbytes <= cache.max_bytes
    assert cache.memo.info()["entries"] > 0


def test_a_compress_remembers_nothing_after_it_returns() -> None:
    """compress() makes a Compactor with a cache of its own: once the result is dropped, so is
    everything it remembered (no process-wide memory of conversations)."""
    import weakref

    messages = _conversation(1)
    result = compress(messages, CompactionConfig(context_length=8_000))
    probe = weakref.ref(result)
    assert current_cache() is None  # nothing left current after the call
    del result
    gc.collect()
    assert probe() is None


def test_a_compactor_made_inside_another_ones_run_shares_its_cache() -> None:
    cache = CompactionCache()
    with cache.active():
        assert Compactor().cache is cache
    assert Compactor().cache is not cache


def test_a_shared_cache_makes_a_rerun_count_and_read_nothing_again() -> None:
    cache = CompactionCache()
    messages = _conversation(7)
    Compactor(CompactionConfig(context_length=8_000), cache=cache).compress(messages, force=True)
    misses = cache.memo.info()["misses"]
    counter = make_counter("tiktoken", "gpt-4o", cache)
    last = cache.conversation
    assert isinstance(last, LastConversation)
    counts = last.counts[id(counter)][1]
    Compactor(CompactionConfig(context_length=12_000), cache=cache).compress(messages, force=True)
    assert cache.memo.info()["misses"] == misses  # no message's facts read again
    # ...and the same tally: what the first run counted is not counted again.
    assert last.counts[id(counter)][1] is counts
    assert last.conversation.remembers_start_of(messages)


def test_a_bad_cache_or_bound_is_named() -> None:
    with pytest.raises(ConfigError, match="cache must be a CompactionCache"):
        Compactor(cache={})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 1 MiB"):
        CompactionCache(max_bytes=10)
