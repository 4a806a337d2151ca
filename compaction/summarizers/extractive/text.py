"""Sentence-level heuristics of the extractive summariser: what a sentence *is* (a constraint, a
decision, a question, an intent, a next step) and which file paths a piece of prose mentions.

They live apart from the scan so that each rule can be read, tested and tuned on its own. Every
pattern starts with a literal or a bounded class (no nested unbounded repetition), because these
run over every user and assistant message of sessions with thousands of turns.
"""

from __future__ import annotations

import re

from compaction.text.patterns import collapse, constraint_sentences, is_question_sentence
from compaction.text.user_words import prose_sentences

SENTENCE_MAX_CHARS = 240
#: A user's rule is kept whole up to this length: cut short, "never modify the migrations … and
#: a deploy" loses the part that says why.
CONSTRAINT_MAX_CHARS = 400
_CODE_FENCE = re.compile(r"```.*?(?:```|$)", re.S)


class _AnyCase:
    """A case-insensitive pattern, searched as a case-sensitive one in the lower-cased text
    wherever that decides the same: twice as fast on a sentence (the engine folds the case of
    every character it compares, at every position of a pattern that fails on most sentences).

    On ASCII text `lower()` changes only A-Z, one for one, and the pattern's literals are
    lower-case, so a match in the lower-cased text is a case-insensitive match in the text and
    back. Outside ASCII, case folding reaches further (the Kelvin sign matches "k", "İ" lowers
    to two characters), so such text gets the case-insensitive pattern itself."""

    def __init__(self, pattern: str) -> None:
        # Escapes (\S, \b) keep their case; every literal letter must be lower-case.
        if any(char.isupper() for char in re.sub(r"\\.", "", pattern)):
            raise ValueError(f"an upper-case literal in {pattern!r}")
        self.folded = re.compile(pattern, re.I)
        self.lowered = re.compile(pattern)

    def found(self, text: str) -> bool:
        if text.isascii():
            return self.lowered.search(text.lower()) is not None
        return self.folded.search(text) is not None


_DECISION = _AnyCase(
    r"\b(?:i'll use|i will use|we'll use|we will use|let's use|use \S+ instead|instead of|"
    r"rather than|decided|decide to|decision|going with|go with|chose|choose|opted|opt for|"
    r"because|switch(?:ed|ing)? to|the approach|the fix is|the cause is|root cause)\b"
)
_INTENT = re.compile(
    r"^(?:now,? )?(?:let me|let's|i'll|i will|i'm going to|i am going to|next,? i|"
    r"i need to|i should|i'm now|i am now)\b",
    re.I,
)
_NEXT_STEP = re.compile(
    r"^(?:next(?: steps?)?[,:]|then[,:]? i|todo[:\s]|remaining(?: work| steps| tasks)?:"
    r"|still need to|after that[,:]?|finally[,:]? i)",
    re.I,
)
_CHECKBOX_OPEN = re.compile(r"^\s*[-*]\s*\[ \]\s+(.{3,200})$", re.M)
_QUESTION_START = re.compile(
    r"^(?:what|how|why|where|when|which|who|can|could|should|would|is|are|does|do|did|will)\b",
    re.I,
)

_STOPWORDS = frozenset(
    "the a an and or of to in on for with from into about this that these those is are was were be"
    " been it its as at by not no but if then than so we you i me my our your their there here all"
    " any some more most other such only own same can will just should now also".split()
)
_WORD = re.compile(r"[a-z0-9_][a-z0-9_.\-/]{2,}")

# -- file paths in prose ---------------------------------------------------------------------------
_EXTENSIONS = (
    "py|pyi|rs|toml|md|rst|json|jsonl|js|mjs|cjs|ts|tsx|jsx|go|java|kt|swift|c|h|cc|cpp|hpp|cs"
    "|rb|php|sh|bash|zsh|yaml|yml|txt|cfg|ini|conf|lock|html|css|scss|sql|csv|xml|env|gradle"
    "|mk|ipynb|traj|vue|svelte|proto|tf|dockerfile"
)
# Paths are found from a cheap hint (a slash, a known extension, a well-known file name) and then
# read whole by walking the path characters on both sides: prose has few hints, so this costs far
# less than a pattern that must try every position of every sentence.
_PATH_HINT = re.compile(r"/|\.(?:" + _EXTENSIONS + r")\b")
_NAMED_FILES = ("Makefile", "Justfile", "Dockerfile", "Procfile", "Gemfile", "Rakefile")
# Apart from the hint above: a pattern that may start with \b is tried at every position, and
# in one alternation with the slash it made the whole hint scan four times slower.
_NAMED_FILE = re.compile(r"\b(?:" + "|".join(_NAMED_FILES) + r")\b")
# A run of path characters: letters and digits (`\w` is exactly str.isalnum() plus "_") and
# "_.~-/@+". Read at C speed from the hint outwards, where a character-by-character walk in
# Python cost most of mentioned_paths.
_PATH_RUN = re.compile(r"[\w.~\-/@+]*")
_PATH_MAX_CHARS = 300
_URL = re.compile(r"[A-Za-z][\w+.-]{0,15}://[^\s<>\"'`()\[\]{}]+")
_EXT_AT_END = re.compile(r"\.(?:" + _EXTENSIONS + r")$", re.I)
_TRAILING = ".,:;!?)'\"`"


def sentences(text: str) -> list[str]:
    """Sentences of prose (code fences dropped; a hard-wrapped paragraph read as one run, so no
    sentence is cut at a line break), whitespace collapsed, each cut to 240 chars."""
    if "```" in text:
        text = _CODE_FENCE.sub("\n\n", text)
    found = []
    for piece in prose_sentences(text):
        sentence = piece.lstrip("-*#> ").strip()
        if len(sentence) >= 8:
            found.append(cut_text(sentence, SENTENCE_MAX_CHARS))
    return found


def constraints(text: str) -> tuple[str, ...]:
    """The user's rules in `text` (the words they typed: user_words.own_words), whole (within
    CONSTRAINT_MAX_CHARS, else cut with "...").

    Whole sentences still contain the probe's 160-char prefix of each, so recall is unchanged.
    Beyond the shared rule words, a user's "should", "avoid", "instead" and "without" state
    what they want too ("the details should be in my profile", "cancel it instead"). A
    question is not a rule ("should i enable rls already?")."""
    found = constraint_sentences(text, None)
    if _SOFT_RULE.search(text):
        known = set(found)
        for piece in prose_sentences(text):
            sentence = piece.lstrip("-*•> ").strip()
            if len(sentence) >= 12 and sentence not in known and _SOFT_RULE.search(sentence):
                found.append(sentence)
    kept = [s for s in found if not is_question_sentence(s)]
    return tuple(cut_text(s, CONSTRAINT_MAX_CHARS) for s in kept)


_SOFT_RULE = re.compile(r"\b(?:should(?:n't| not)?|avoid|instead|without|no need to)\b", re.I)


def cut_text(text: str, limit: int) -> str:
    """Whitespace collapsed; over `limit` chars, cut at a word boundary with an ellipsis."""
    text = collapse(text)
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    if space > limit * 0.6:
        head = head[:space]
    return head.rstrip(" ,;:") + "..."


def first_sentences(text: str, count: int = 2, limit: int = 400) -> str:
    """The first `count` sentences of `text`, within `limit` chars: the Goal's condensed form."""
    found = sentences(text)[:count]
    return cut_text(" ".join(found), limit) if found else cut_text(text, limit)


# A choice or a refusal the assistant states with its reason ("Since it has been more than 24
# hours, I am unable to cancel this reservation."): what the next window must not undo or redo.
_DECIDER = _AnyCase(
    r"\b(?:i'll|i will|let's|let me(?! know)|i'm going to|i am going to|"
    r"i (?:cannot|can't|am unable to|won't|will not|am not able to)|"
    r"we (?:cannot|can't|won't|will not)|(?:is|are) not (?:possible|allowed|eligible))\b"
)
_REASON = _AnyCase(
    r"\b(?:because|since|so that|given that|as it|as the|to avoid|in order to|due to)\b"
)


def is_decision(sentence: str) -> bool:
    if len(sentence) < 20:
        return False
    if _DECISION.found(sentence):
        return True
    return _DECIDER.found(sentence) and _REASON.found(sentence)


# A decision that names its object only by pointing back ("I'll go with option 3.", "I'll use
# that alias") means nothing once the sentence before it is gone.
# `(?<!\w)` is `\b` here, as every alternative starts with a letter; the engine tries the
# lookbehind faster, and this pattern fails on most sentences, after trying every position.
_POINTS_BACK = _AnyCase(
    r"(?<!\w)(?:use|go with|going with|went with|choose|chose|opt for|opted for|pick|picked|"
    r"switch to|stick with|keep|decided on|take)\s+(?:that|this|it|these|those|them|"
    r"option \d+|#\d+|the (?:first|second|third|last|former|latter|above|same)|one)\b"
)
DEICTIC_MAX_CHARS = 100


def decisions(found: list[str]) -> list[str]:
    """The decision sentences of a message, each with its object: a short one that only points
    back gets the sentence before it (`Option 3 keeps the API stable. → I'll go with option 3.`);
    with nothing before it, it is left out."""
    chosen = []
    for position, sentence in enumerate(found):
        if not is_decision(sentence):
            continue
        if len(sentence) <= DEICTIC_MAX_CHARS and _POINTS_BACK.found(sentence):
            if position == 0:
                continue
            sentence = cut_text(f"{found[position - 1]} → {sentence}", SENTENCE_MAX_CHARS + 100)
        chosen.append(sentence)
    return chosen


def is_intent(sentence: str) -> bool:
    return _INTENT.search(sentence) is not None


def is_next_step(sentence: str) -> bool:
    return _NEXT_STEP.search(sentence) is not None


def is_question(sentence: str) -> bool:
    return sentence.endswith("?") and len(sentence) <= 300


def looks_like_question(sentence: str) -> bool:
    """A question by its mark, or by its first word when users skip the mark."""
    return is_question(sentence) or (
        len(sentence) <= 200 and _QUESTION_START.search(sentence) is not None
    )


def open_checkboxes(text: str) -> list[str]:
    """Unticked markdown checklist items (`- [ ] ...`)."""
    if "[ ]" not in text:
        return []  # most texts: one substring test instead of a pattern tried at every position
    return [collapse(item) for item in _CHECKBOX_OPEN.findall(text)]


def content_words(text: str) -> set[str]:
    """Lower-case words of 3+ chars that carry meaning (stop words dropped)."""
    return {word for word in _WORD.findall(text.lower()) if word not in _STOPWORDS}


_STEM_WORD = re.compile(r"[a-z0-9]+")
# Longest first: "tests" -> "test", "testing" -> "test", "migrations" -> "migr",
# "migrated" -> "migrat" (stems_match reads one as the start of the other).
_SUFFIXES = (
    "ations",
    "ation",
    "ings",
    "ing",
    "ies",
    "ied",
    "ers",
    "er",
    "es",
    "ed",
    "ly",
    "s",
    "y",
)


def stem(word: str) -> str:
    """A word's crude stem: lower case, one common English suffix off, never under 3 letters —
    enough that "Rust tests" matches "cargo test" and "migrations" matches "migrated"."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word


def stems(text: str) -> set[str]:
    """The stems of the words of `text` (paths and identifiers split at their punctuation, so
    `tests/test_auth.py` holds "test" and "auth"), stop words dropped."""
    return {
        stem(word)
        for word in _STEM_WORD.findall(text.lower())
        if len(word) >= 3 and word not in _STOPWORDS
    }


FOCUS_PREFIX_MIN = 4


def stems_match(focus: set[str], words: set[str]) -> set[str]:
    """The focus stems found among `words`: equal, or one the start of the other when both have
    at least FOCUS_PREFIX_MIN letters ("migr" and "migrat", "auth" and "authentic")."""
    found = focus & words
    for wanted in focus - found:
        if len(wanted) < FOCUS_PREFIX_MIN:
            continue
        for word in words:
            if len(word) >= FOCUS_PREFIX_MIN and (
                word.startswith(wanted) or wanted.startswith(word)
            ):
                found.add(wanted)
                break
    return found


def _path_run(text: str, start: int, stop: int) -> int:
    """How many path characters run in `text` from `start`, up to `stop`."""
    run = _PATH_RUN.match(text, start, stop)
    return run.end() - start if run else 0


def _path_hints(text: str) -> list[tuple[int, int]]:
    """Where paths may be, in text order: slashes, known extensions, well-known file names."""
    hints = [hint.span() for hint in _PATH_HINT.finditer(text)]
    if any(name in text for name in _NAMED_FILES):
        # A name holds no slash or dot, so the two kinds of hint never overlap: in text order,
        # they are what one alternation of both patterns would find.
        hints = sorted(hints + [hint.span() for hint in _NAMED_FILE.finditer(text)])
    return hints


def mentioned_paths(text: str) -> list[str]:
    """File paths mentioned in prose, in order, deduplicated; URLs are not paths."""
    if "://" in text:
        text = _URL.sub(" ", text)
    found: list[str] = []
    seen: set[str] = set()
    covered = -1
    for hint_start, hint_end in _path_hints(text):
        if hint_start < covered:
            continue  # inside the path just read
        start = hint_start
        floor = max(0, start - _PATH_MAX_CHARS)
        # Backwards: the same run, read forwards in the reversed text before the hint.
        start -= _path_run(text[floor:start][::-1], 0, start - floor)
        end = hint_end
        end += _path_run(text, end, min(len(text), end + _PATH_MAX_CHARS))
        covered = end
        if start > 0 and text[start - 1] in "$%{":
            continue  # a variable or a template, not a path
        candidate = text[start:end].rstrip(_TRAILING)
        if candidate in seen or not _plausible_path(candidate):
            continue
        seen.add(candidate)
        found.append(candidate)
    return found


def _plausible_path(candidate: str) -> bool:
    if len(candidate) < 3 or not any(char.isalpha() for char in candidate):
        return False
    if candidate.startswith("//") or "//" in candidate:
        return False
    if "/" not in candidate:
        return True  # a bare file name: the pattern already required a known extension or name
    if candidate.startswith("/"):
        # "/tmp/x" is a path; "/add", "/ls" are chat commands, "/Button" an import tail.
        return candidate.count("/") >= 2 and candidate != "/dev/null"
    if candidate.startswith(("./", "../", "~/")):
        return len(candidate) > 3
    if _EXT_AT_END.search(candidate):
        return True
    # "and/or", "I/O", "read/write" are prose; "src/" and "a/b/c" are paths.
    if candidate.count("/") == 1 and candidate.endswith("/"):
        return len(candidate) >= 5 and candidate[:-1].replace("_", "").replace("-", "").isalnum()
    return candidate.count("/") >= 2
