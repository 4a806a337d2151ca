"""What compaction really costs: the provider's recorded usage, priced, and a prompt-cache model.

- `pricing`: litellm's bundled cost map (offline) and `--price` overrides; "unknown price",
  never $0, for a model it does not know.
- `ledger`: every recorded call priced — fresh input, cache writes, cache reads, output — per
  turn and cumulative, and each compaction the agent made (its summary call when recorded, the
  cache it invalidated).
- `calibration`: our counter against the provider's count at every call (the hidden system
  prompt and tool schemas, the counter's drift), and the window the agent really worked in.
- `cache`: a deterministic prefix-cache model per provider (Anthropic, OpenAI, Gemini);
  `requests` builds what it replays (the agent's own calls, or the same calls under a replay);
  `check` sets its predictions beside the recorded reads and writes.
- `whatif`: the session priced under the agent's record, our pipeline, a cache-aware setting
  and each peer; `report`: all of it for `compaction cost` and the app.
"""
