"""Structural recall: a second fact set, defined only by the shape of the transcript.

The probes (probes.py) mine facts with the same text patterns the extractive summariser uses
(compaction/text_patterns.py), so their recall is an upper bound by construction: whatever the
patterns find, the summary was built to keep. This measure is independent on purpose. It imports
neither the summarisers nor text_patterns; every fact is defined by where it sits in the
transcript, not by what a pattern of ours recognises in prose:

- `latest_request`: the user's latest message of their own (not hook output, a system reminder,
  a command wrapper or a tool-result carrier), its first line;
- `constraints`: every sentence of the user's own messages that states a rule (must, never,
  always, don't, only, make sure, avoid…);
- `paths`: every path in a tool call's arguments — the value of an argument whose name says it
  is a path or file, the file names of an `apply_patch` body, and every path-like word of a
  command line that is not the program itself (`sed -i s/a/b/ src/a.py` → `src/a.py`);
- `errors`: the error lines of every failed call — a result whose exit status is non-zero, or
  that the agent's harness marked as an error, or that opens with a traceback — the last few
  lines of it that name an error, an exception, a failure or a panic, each keyed without a
  log's prefix up to its timestamp and without the `===` rules around it (a summary quotes
  `ERROR tests/x.py::t` and `1 failed in 0.9s`, not the CI runner's columns);
- `urls`: every http(s) URL anywhere in the conversation;
- `missing_paths` (missing.py): the paths a call's result says do not exist — a line of a failed
  or short result saying `No such file or directory`, `ENOENT`, `does not exist`, `cannot find`,
  `not found`, `cannot access`, `can't cd to` or `did not match any file` names the path; a
  result that names none (`File does not exist.`) is about the call's one path. Kept when a line
  of the context names the path and says it is missing, or the failed call is kept with its
  result: a summary line `src/x.py does not exist` keeps it, the bare path does not;
- `early_errors`: the error lines (as `errors`) of the failed calls in the first half of the
  conversation, oldest first. `errors` keeps the newest MAX_PER_CATEGORY, which a long session's
  first errors never reach; the two overlap on a short one, on purpose: an early error counts
  in both, as the probe questions ask about the start of a session as often as its end;
- `definitions` (definitions.py): what the agent defined in the text it wrote (a write's
  content, an edit's new text, a patch's added lines): each function, keyed by its name and
  parameters (`load(path, strict=False)`, whitespace inside the brackets closed up), each type
  (`class Loader`), and the first line of a whole file written when it is a comment or a
  docstring (what the file is for);
- `skills` (definitions.py): the skills loaded (a call's `skill` argument, a skill's base
  folder) and the files they define: paths under a `skills/` folder in a call's arguments or in
  a skill's text;
- `decisions`: the assistant's sentences (code blocks left out) that state a decision with its
  reason — a decision verb (I'll, let's, use, keep, remove, switch, instead…) and a reason
  (because, since, so that, so I, instead of, rather than, to avoid, in order to), whole.

The user's own messages are found from the transcript's structure too: a user-role message the
importer marked as injected (`messages.INJECTED_KEY`), or whose text opens with a harness wrapper
(`<command-name>`, `<system-reminder>`, `<task-notification>`, "Stop hook feedback:", …), is not
the user speaking. Each category keeps its newest MAX_PER_CATEGORY facts (`early_errors` its
oldest); a fact counts as kept when its key — its normalised text (a prefix of FACT_PREFIX_CHARS
for long lines), or the part named above (a definition's signature, a doc line) — appears in one
message of the compacted conversation, except a missing path, which must be said missing.

Every fact also records its position: the third of the conversation (early, middle, late) that
the message it was mined from sits in, so a recall can be split by where the facts came from.

The modules: transcript (whose words, a call's paths, failures), facts (the value types),
missing and definitions (the miners above that need more than a line), mining (every category
in one pass), scoring (what a compacted context kept), report (the eval's row columns and the
summary a worker sends back).
"""

from compaction.lab.structural.facts import (
    BASE_CATEGORIES,
    CATEGORIES,
    FACT_PREFIX_CHARS,
    POSITIONS,
    StructuralFact,
    StructuralRecall,
    Tally,
    normalise,
    position_of,
)
from compaction.lab.structural.mining import LATEST_REQUEST_CHARS, MAX_PER_CATEGORY, mine
from compaction.lab.structural.scoring import structural_recall
from compaction.lab.structural.transcript import (
    ERROR_LINES_PER_CALL,
    call_paths,
    command_paths,
    failed,
    failure_lines,
    latest_request,
    own_words,
)

__all__ = [
    "BASE_CATEGORIES",
    "CATEGORIES",
    "ERROR_LINES_PER_CALL",
    "FACT_PREFIX_CHARS",
    "LATEST_REQUEST_CHARS",
    "MAX_PER_CATEGORY",
    "POSITIONS",
    "StructuralFact",
    "StructuralRecall",
    "Tally",
    "call_paths",
    "command_paths",
    "failed",
    "failure_lines",
    "latest_request",
    "mine",
    "normalise",
    "own_words",
    "position_of",
    "structural_recall",
]
