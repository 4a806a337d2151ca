"""Across all your sessions: scan, audit and tune over a corpus, on one machine or a cluster.

A decision about compaction (a threshold, a summary budget, which policy) is about every future
session, so it is measured over many: `sources` finds them (folders, or every agent session on
this machine), `scan` reads one file (its usage and every compaction its agent made, audited),
`stats` folds the rows into distributions per agent, `runner` runs a task over many items in
this process, local worker processes or a Dask cluster, and `scanning` ties them to the history
so a second scan reads only what changed. `compare` and `sweeping` run `eval` and `sweep`
session by session over the same selection.
"""
