"""The lab around the engine: measuring what compaction does.

Nothing in the engine imports this package. probes.py mines the facts a compacted context should
still hold and scores recall; strategies.py holds the baselines (head-tail, truncate-outputs,
prune-only) beside the pipeline; evaluate.py runs them at one token target; judge.py adds the
model-judged probe run; drift.py follows facts across iterative summaries; timeline.py replays a
session with automatic compaction (`simulate`); sweep/ runs grids of budgets.
"""
