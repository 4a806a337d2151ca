"""Active State for the extractive summary: where the agent is and what the last test said.

Agents rarely state their working directory or branch; the commands and their outputs do
(`cd /repo && …`, `On branch main`, `[main 7e2d976] message`, `Switched to branch 'fix'`). The
tracker reads those as the scan passes and keeps the latest of each, so the next context window
starts from the right place without re-running `pwd` and `git status`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import NamedTuple, Protocol

from compaction.summarizers.extractive.findings import StateLine
from compaction.summary.recorded import RecordedDirectory
from compaction.text.patterns import cut

_CD = re.compile(r"^\s*cd\s+(['\"]?)([^\s;&|'\"]+)\1")
_ON_BRANCH = re.compile(r"^On branch (\S+)", re.M)
_SWITCHED = re.compile(r"Switched to (?:a new )?branch '([^']+)'")
_COMMIT = re.compile(r"^\[([\w./-]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.{1,100})", re.M)
_CHECKOUT = re.compile(r"\bgit (?:checkout|switch)\s+(?:-[bcB]\s+)?([\w./-]+)\s*$")
_TEST_COMMAND = re.compile(
    r"\b(?:pytest|py\.test|unittest|tox|nox|cargo (?:test|nextest|llvm-cov)|go test|"
    r"npm (?:run )?test|yarn test|pnpm test|jest|vitest|mocha|rspec|phpunit|mvn test|"
    r"gradle test|make (?:test|check)|just (?:test|check)|ctest|dotnet test|runtests|mix test)\b"
)
_TEST_VERDICT = re.compile(
    r"\d+ (?:passed|failed|errors?|tests? (?:passed|failed))\b|test result:|Tests? run:"
    r"|^OK\b|^FAILED\b|Ran \d+ tests?"
)
_VERDICT_SCAN_LINES = 60


def is_test_command(command: str) -> bool:
    """The command's first line runs a test suite (pytest, cargo test, mix test, npm test…)."""
    return _TEST_COMMAND.search(command.split("\n", 1)[0]) is not None


class _FileRecordLike(Protocol):
    verbs: list[str]
    last_index: int


#: A value and the message that showed it.
Seen = tuple[str, tuple[int, ...]]


class StateTracker:
    """The latest working directory, branch, commit, test run and files changed, each with the
    message that showed it."""

    def __init__(self) -> None:
        self.cwd: Seen | None = None
        self.branch: Seen | None = None
        self.commit: Seen | None = None
        self.last_test: tuple[SuiteRun, tuple[int, ...]] | None = None
        self.changed: dict[str, int] = {}  # path -> message; insertion order, most recent last

    def modified(self, path: str, index: int) -> None:
        self.changed.pop(path, None)
        self.changed[path] = index

    def apply(self, effect: CommandEffect, sources: tuple[int, ...]) -> None:
        """Take in what one command showed (computed once per distinct command and output)."""
        if effect.cwd is not None:
            self.cwd = (effect.cwd, sources)
        if effect.branch is not None:
            self.branch = (effect.branch, sources)
        if effect.commit is not None:
            self.commit = (effect.commit, sources)
        if effect.last_test is not None:
            self.last_test = (effect.last_test, sources)

    def render(
        self, files: Mapping[str, _FileRecordLike], recorded: RecordedDirectory | None = None
    ) -> dict[str, StateLine]:
        """The Active State lines as key -> line (only what the turns or the record showed).

        The working directory the session file recorded wins over what the commands suggest:
        a `cd /tmp` inside one shell command says where that command ran, not where the
        session works. Without a record, a `cd` is shown as the evidence it is, and a
        directory common to the files written as the inference it is."""
        state: dict[str, StateLine] = {}
        if recorded is not None:
            state["Working directory"] = StateLine(
                recorded.path, (), f"recorded: {recorded.origin}"
            )
        elif self.cwd is not None:
            path, sources = self.cwd
            state["Working directory"] = StateLine(
                f"{path} (from `cd {path}` in a command)", sources
            )
        else:
            written = [
                path
                for path in files
                if path.startswith("/") and "mentioned" not in files[path].verbs
            ]
            common = _common_directory(written)
            if common:
                sources = tuple(files[path].last_index for path in written[-3:])
                state["Working directory"] = StateLine(
                    f"{common} (inferred from the paths of the files worked on)", sources
                )
        if self.branch:
            state["Branch"] = StateLine(*self.branch)
        if self.commit:
            state["Last commit"] = StateLine(*self.commit)
        if self.changed:
            recent = list(self.changed)[-12:]
            more = len(self.changed) - len(recent)
            shown = ", ".join(recent) + (f" (+{more} more)" if more > 0 else "")
            sources = tuple(self.changed[path] for path in recent)
            state["Files modified/created"] = StateLine(shown, sources)
        if self.last_test:
            run, sources = self.last_test
            state["Last test"] = StateLine(run.line(), sources)
        return state


class SuiteRun(NamedTuple):
    """A test command and the output it showed, for Active State's "Last test" line.

    Only the session's last run is shown, so its line is read (`line()`) once, at the end:
    reading the verdict scans up to _VERDICT_SCAN_LINES output lines with a pattern that has no
    literal to look for, and doing that for every test run of a session was wasted work."""

    first_line: str
    output: str
    code: int | None
    failed: bool

    def line(self) -> str:
        verdict = _verdict(self.output)
        # Without an exit code in the output, say what the output did show.
        code, failed = self.code, self.failed
        outcome = f"exit {code}" if code is not None else "failed" if failed else "no error seen"
        outcome += f", {verdict}" if verdict else ""
        return f"`{cut(self.first_line, 80)}` -> {outcome}"


class CommandEffect(NamedTuple):
    """What one command and its output say about the working directory, branch, last commit
    and last test run (None: nothing). A pure function of the strings, so it can be cached."""

    cwd: str | None
    branch: str | None
    commit: str | None
    last_test: SuiteRun | None


def command_effect(command: str, output: str, code: int | None, failed: bool) -> CommandEffect:
    first_line = command.split("\n", 1)[0]
    cwd = branch = commit_line = last_test = None
    moved = _CD.match(first_line)
    if moved and moved.group(2).startswith(("/", "~")):
        cwd = moved.group(2)
    # The later patterns win, as they are later news.
    for pattern, literal in ((_ON_BRANCH, "On branch "), (_SWITCHED, "Switched to ")):
        found = _search(pattern, literal, output)
        if found:
            branch = found.group(1)
    commit = _search(_COMMIT, "] ", output)
    if commit:
        branch = commit.group(1)
        commit_line = f"{commit.group(2)} {commit.group(3).strip()}"
    checkout = _CHECKOUT.search(first_line)
    if checkout and not failed and not checkout.group(1).startswith("-"):
        branch = checkout.group(1)
    if _TEST_COMMAND.search(first_line):
        last_test = SuiteRun(first_line, output, code, failed)
    return CommandEffect(cwd, branch, commit_line, last_test)


def _search(pattern: re.Pattern[str], literal: str, text: str) -> re.Match[str] | None:
    """`pattern.search(text)`, where every match of `pattern` contains `literal`: most outputs
    lack it, and a substring test is far cheaper than a line-anchored pattern tried at every
    line start."""
    return pattern.search(text) if literal in text else None


def _verdict(output: str) -> str | None:
    """The last line of a test run that states its result (`5 passed, 1 failed in 0.3s`)."""
    lines = output.rstrip().splitlines()[-_VERDICT_SCAN_LINES:]
    for line in reversed(lines):
        stripped = line.strip(" =-")
        if stripped and _TEST_VERDICT.search(stripped):
            return cut(stripped, 120)
    return None


def _common_directory(paths: list[str]) -> str | None:
    if len(paths) < 2:
        return None
    common = posixpath.commonpath(paths)
    return common if common not in ("", "/") else None
