"""The summariser's fast scans find exactly what their plain definitions find (issue 19).

mentioned_paths reads path hints with two patterns and path characters with a regex, identifiers
and the Active State skip patterns whose literal is absent, error_evidence skips the exception
pattern when no exception word is present, a plain command line is split without shlex, an error
line is tried only against the kinds whose word it holds: each test pins the result against the
plain reading.
"""

from __future__ import annotations

import random
import re
import shlex

from compaction.summarizers.extractive import facts, findings, shell_files
from compaction.summarizers.extractive import text as tx
from compaction.summarizers.extractive.state import StateTracker, command_effect
from compaction.text import one_liners as tool_summaries
from compaction.text import patterns as text_patterns
from compaction.text.one_liners import error_evidence
from compaction.text.patterns import identifiers

# The definition mentioned_paths had before it was made fast: one alternation of every hint,
# then a walk over str.isalnum() characters and "_.~-/@+" on both sides.
_PLAIN_HINT = re.compile(
    r"/|\.(?:" + tx._EXTENSIONS + r")\b"
    r"|\b(?:Makefile|Justfile|Dockerfile|Procfile|Gemfile|Rakefile)\b"
)


def _plain_mentioned_paths(text: str) -> list[str]:
    if "://" in text:
        text = tx._URL.sub(" ", text)
    found: list[str] = []
    covered = -1
    for hint in _PLAIN_HINT.finditer(text):
        if hint.start() < covered:
            continue
        start, end = hint.start(), hint.end()
        floor, ceiling = max(0, start - 300), min(len(text), end + 300)
        while start > floor and (text[start - 1].isalnum() or text[start - 1] in "_.~-/@+"):
            start -= 1
        while end < ceiling and (text[end].isalnum() or text[end] in "_.~-/@+"):
            end += 1
        covered = end
        if start > 0 and text[start - 1] in "$%{":
            continue
        candidate = text[start:end].rstrip(".,:;!?)'\"`")
        if candidate not in found and tx._plausible_path(candidate):
            found.append(candidate)
    return found


def test_named_files_slashes_and_extensions_come_back_in_text_order() -> None:
    text = "Edit the Makefile, then src/app.py; the Dockerfile and ./docs/guide.md stay."
    assert tx.mentioned_paths(text) == ["Makefile", "src/app.py", "Dockerfile", "./docs/guide.md"]


def test_non_ascii_letters_are_path_characters() -> None:
    assert tx.mentioned_paths("Look at src/café/naïve_ü.py please") == ["src/café/naïve_ü.py"]


def test_mentioned_paths_matches_its_plain_definition_on_random_text() -> None:
    pieces = [
        "Makefile", "Dockerfile", ".dockerfile", ".Makefile", "Gemfile", "/", ".py", ".mk", "x",
        "é", "٢", "ß", "$", "{", "%", " ", "\n", "a.b", "src", "//", "_", "-", "~/", "../", "://",
        "http", ".tf", "@", "+", ",", ")", "A" * 120,
    ]  # fmt: skip
    rng = random.Random(19)
    for _ in range(3_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        assert tx.mentioned_paths(text) == _plain_mentioned_paths(text), text


def test_host_ports_are_found_only_where_a_host_is_named() -> None:
    assert identifiers("serving on localhost:8080 and 127.0.0.1:5432, also 0.0.0.0:9000") == [
        ":8080",
        ":5432",
        ":9000",
    ]
    assert identifiers("no host here, just 8080 and v1.2.3") == ["v1.2.3"]


def test_error_evidence_without_an_exception_word_is_the_last_failure_line() -> None:
    assert error_evidence("grep: pattern\nsearch failed: nothing found\n", 1) == (
        "search failed: nothing found"
    )
    traceback = "Traceback (most recent call last):\n  x\nKeyError: 'missing'\nfailed"
    assert error_evidence(traceback, 1) == "KeyError: 'missing'"


def test_active_state_reads_branch_and_commit_only_from_outputs_that_show_them() -> None:
    shown = command_effect(
        "git commit -am fix", "On branch main\n[main 7e2d976] fix the parser\n", 0, False
    )
    assert (shown.branch, shown.commit) == ("main", "7e2d976 fix the parser")
    switched = command_effect("git checkout -b fix", "Switched to a new branch 'fix'\n", 0, False)
    assert switched.branch == "fix"
    silent = command_effect("ls", "README.md [draft] notes\n", 0, False)
    assert (silent.branch, silent.commit) == (None, None)


def _shlex_words(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    lexer.escape = ""
    try:
        return list(lexer)
    except ValueError:
        return line.split()


def test_a_plain_command_line_splits_into_the_words_shlex_reads() -> None:
    pieces = [*"ab/.-_=#\\$*?~ \t\r\n\x0b\xa0\u2003é`{}!", "pytest", " -x ", "tests/a.py", "'", ";"]
    rng = random.Random(5)
    for _ in range(5_000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
        assert shell_files._words(line) == _shlex_words(line), repr(line)


# The one pattern error_lines used before its three kinds were tried apart.
_PLAIN_ERROR_LINE = re.compile(
    r"[ \t]*(?:"
    r"(?:[A-Za-z_][\w.]*\.)?(?:[A-Z]\w*)?(?:Error|Exception)\b(?:\[\w+\])?:.*"
    r"|(?:error|fatal)(?:\[\w+\])?:.*"
    r"|.*\bFAILED\b.*"
    r"|.*(?i:\bexit(?:ed)?(?: with)? (?:code|status)|\"exit_code\")\s*[:=]?\s*-?[1-9]\d*\b.*"
    r")"
)


def test_an_error_line_is_what_the_single_pattern_said() -> None:
    pieces = [
        "Error", "Exception", "error", "fatal", "[E0308]", ":", " ", "\t", "FAILED", "xFAILED",
        "exit", "EXIT", "Exit", "EXİT", "exıt", "exited", " with", " code", " status", " ſtatus",
        '"exit_code"', "=", "-", "0", "1", "42", "Value", "pkg.mod.", "İ", "ı", "K", "done",
    ]  # fmt: skip
    rng = random.Random(21)
    for _ in range(20_000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        expected = _PLAIN_ERROR_LINE.fullmatch(line) is not None
        assert text_patterns._is_error_line(line) == expected, repr(line)


def test_hex_runs_are_the_matches_of_the_hex_pattern() -> None:
    pieces = [
        "a", "f", "0", "9", "deadbee", "1234567", "abc", "g", "A", "F", " ", "\n", "-", "_", "é",
        "٣", "x" * 3, "0123456789abcdef" * 3, "#", ".",
    ]  # fmt: skip
    rng = random.Random(1919)
    for _ in range(3_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        expected = [match.span() for match in text_patterns._HEX.finditer(text)]
        assert list(text_patterns.hex_runs(text)) == expected, text


def test_the_last_test_line_is_read_from_the_latest_run_only() -> None:
    tracker = StateTracker()
    runs = (("3 passed in 0.2s\n", 0), ("== 1 failed, 2 passed ==\n", 1))
    for index, (output, code) in enumerate(runs):
        effect = command_effect("cd /repo && pytest -x", output, code, code != 0)
        assert effect.last_test is not None
        tracker.apply(effect, (2 * index, 2 * index + 1))
    tracker.apply(command_effect("ls", "README.md\n", 0, False), (4, 5))  # not a test run
    last = tracker.render({})["Last test"]
    assert last.value == "`cd /repo && pytest -x` -> exit 1, 1 failed, 2 passed"
    assert last.sources == (2, 3)  # the call and the result of the run it reports


def test_a_text_without_digits_gives_what_the_full_scan_gives() -> None:
    # identifiers() stops after URLs when there is no digit; a lone digit on a line of its own
    # is no identifier and forces the full scan, so both readings must agree.
    pieces = [
        "https://x.org/a", "http://", "#", "v", ".", "port ", "localhost:", "0.0.0.", "abcdef",
        "deadbee", "a", " ", "\n", "-", "1", "٣", "é", ":", "rc",
    ]  # fmt: skip
    rng = random.Random(190)
    for _ in range(3_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
        assert identifiers(text) == identifiers(text + "\n0"), text
    assert identifiers("see https://example.org/docs.") == ["https://example.org/docs"]


def test_points_back_reads_as_its_word_boundary_definition() -> None:
    plain = re.compile(r"\b" + tx._POINTS_BACK.folded.pattern.removeprefix(r"(?<!\w)"), re.I)
    pieces = ["use", "reuse", " ", "that", "it", "go with", "option 3", "#4", "the same", "é", "_"]
    pieces += ["ſ", "K", "I'll ", "keep", "Take", "\n", "x", "one", "the first"]
    rng = random.Random(1912)
    for _ in range(3_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert tx._POINTS_BACK.found(text) == bool(plain.search(text)), text


def test_decision_patterns_read_in_the_lower_cased_text_decide_as_case_insensitive() -> None:
    # is_decision and decisions search ASCII sentences case-sensitively in their lower-cased
    # text: the same verdict as the case-insensitive pattern on the sentence, whatever the case,
    # and text outside ASCII (the Kelvin sign, İ, ı, ſ fold into ASCII letters) keeps the latter.
    pieces = ["I'LL USE", "i'll use", "We Will", "Use", " ", "x", "Instead", "of", "Rather Than"]
    pieces += ["DECIDED", "Because", "since", "As It", "Let Me", " know", "I CANNOT", "So That"]
    pieces += ["Go With", "THAT", "Option 7", "#2", "The Same", "one", "\u212a", "İ", "ı", "ſ"]
    pieces += ["é", "_", "-", "\n", "Keep", "it", "switchED to", "The Fix Is", "isn't", "ARE NOT"]
    pieces += ["possible", "Ɐ", "ǅ"]
    rng = random.Random(3407)
    patterns = (tx._DECISION, tx._DECIDER, tx._REASON, tx._POINTS_BACK)
    matched = 0
    for _ in range(4_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        for pattern in patterns:
            expected = pattern.folded.search(text) is not None
            assert pattern.found(text) == expected, (pattern.folded.pattern, text)
            matched += expected
    assert matched > 300  # the pieces do make matches, in every case
    assert tx.is_decision("Since the fare is non-refundable, I CANNOT cancel this booking.")
    assert tx.decisions(["Option 3 keeps the API stable.", "I'LL GO WITH OPTION 3."]) == [
        "Option 3 keeps the API stable. → I'LL GO WITH OPTION 3."
    ]


def test_the_failure_gates_never_hide_a_match() -> None:
    # failure_lines reads test verdicts, and _failed failure lines, only past a substring gate:
    # every text the full pattern matches must pass its gate.
    pieces = [
        "1", "٢", " failed", "failed", "FAILED ", "FAIL: ", "fatal: ", "error", "error[E1]: ",
        "ValueError: ", "Exception: ", "Traceback (most recent call last)", "== ", ", ", "\n",
        " ", "x", "=",
    ]  # fmt: skip
    rng = random.Random(1949)
    for _ in range(3_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        if findings._VERDICT.search(text):
            assert findings._counts_failures(text), text
        if facts._FAILURE_IN_OUTPUT.search(text):
            assert facts._failed("terminal", text, None), text


def test_exit_code_reads_what_its_patterns_read() -> None:
    # exit_code skips the case-insensitive text pattern on ASCII output that never says
    # "exit code" or "exit status": it must find what the two patterns alone find.
    pieces = [
        "exit", "EXIT", "Exit", " code", " CODE", " status", " Status", ": ", "=", " ", "1", "-2",
        "\n", "x", '"exit_code": 3', "ı", "ſ", "é", "exıt", "_",
    ]  # fmt: skip
    rng = random.Random(1913)
    for _ in range(3_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        match = tool_summaries._EXIT_JSON.search(text) or tool_summaries._EXIT_TEXT.search(text)
        assert tool_summaries.exit_code(text) == (int(match.group(1)) if match else None), text


def test_the_failure_line_is_found_where_the_pattern_finds_one() -> None:
    # _failure_line tries the pattern only at the starts of the lines holding one of its words:
    # the same verdict as searching the whole output, on outputs of many lines.
    pieces = [
        "Traceback (most recent call last)", "ValueError: ", "Error: ", "Exception: ", "error",
        "error[E0308]: ", "fatal: ", "FAILED ", "FAIL: ", "FAIL", "=== ", "== 2 failed", " failed",
        "3", ", ", "\n", "\r\n", " ", "x", "é", "_", ":", "Error", "a" * 61,
    ]  # fmt: skip
    rng = random.Random(2207)
    matched = 0
    for _ in range(5_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 16)))
        expected = facts._FAILURE_IN_OUTPUT.search(text) is not None
        assert facts._failure_line(text) == expected, text
        matched += expected
    assert matched > 500
    assert facts._failure_line("ok\nsome error here\n=== 1 failed, 2 passed ===")
    assert not facts._failure_line("ok\n  ValueError: indented, not a line start")


def _error_lines_by_hints(text: str) -> list[str]:
    # error_lines as it read before lines_holding: every hit of one alternation of the words,
    # each line once.
    hint = re.compile(r"rror|xception|FAILED|fatal|xit")
    lines: list[str] = []
    line_end = -1
    for hit in hint.finditer(text):
        if hit.start() <= line_end:
            continue
        start = text.rfind("\n", 0, hit.start()) + 1
        line_end = text.find("\n", hit.end())
        if line_end < 0:
            line_end = len(text)
        line = text_patterns._PYTEST_PREFIX.sub("", text[start:line_end].rstrip("\r"), count=1)
        if not text_patterns._is_error_line(line):
            continue
        collapsed = text_patterns.collapse(line)
        if (
            len(collapsed) > text_patterns.ERROR_MAX_CHARS
            and "exit" in collapsed.lower()
            and not text_patterns._NAMED_FAILURE.search(collapsed)
        ):
            continue
        lines.append(text_patterns.cut(collapsed, text_patterns.ERROR_MAX_CHARS))
    return lines


def test_lines_found_by_their_words_are_what_the_searches_find() -> None:
    # error_lines and the qualified exceptions of failure_lines try their patterns only at the
    # starts of the lines holding one of their words: the lines a search finds, in order.
    pieces = [
        "ValueError: bad", "error: x", "error[E1]: y", "fatal: no", "FAILED tests/t.py::a",
        "exit code 2", "Exited with status 1", "\"exit_code\": 3", "pkg.mod.KeyError: 'k'",
        "  E   assert 1 == 2", "E       a.b.Oops: why", "xit", "rror", ": ", ".", "a.b", "\n",
        "\r\n", " ", "x", "é", "Error", "Exception", "\t", "c" * 170,
    ]  # fmt: skip
    rng = random.Random(2718)
    seen_lines = qualified_seen = 0
    for _ in range(4_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        expected = _error_lines_by_hints(text)
        assert text_patterns.error_lines(text) == expected, text
        seen_lines += len(expected)
        searched = findings._QUALIFIED_EXCEPTION.findall(text)
        at_lines = [
            found.group(1)
            for start in text_patterns.lines_holding(text, (": ",))
            if (found := findings._QUALIFIED_EXCEPTION.match(text, start)) is not None
        ]
        assert at_lines == searched, text
        qualified_seen += len(searched)
    assert seen_lines > 1_000 and qualified_seen > 200
    assert text_patterns.lines_holding("a\nb rror rror\nc\nxit rror", ("rror", "xit")) == [2, 16]
