"""Reading text: the patterns the summariser and the probes share (patterns.py), tool outputs as
the lines they hold (tool_output.py), Phase 1's one-line summaries (one_liners.py), what a tool
call ran (tool_calls/), what in a user turn the user wrote (user_words.py), and secrets kept out
of anything that leaves the machine (redact.py)."""
