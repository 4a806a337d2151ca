"""The files a shell command or a patch body reads, writes, creates, moves or deletes.

Codex runs everything through `exec_command`/`shell` (`{"cmd": …}`) and Claude Code through
`Bash`: the files an agent changes live inside the command line (`sed -i … src/a.py`,
`cat > f <<EOF`, `mv a b`, `git add …`) or a patch body (`*** Update File: …`), not in a `path`
argument. Each segment of the command's first line is split as the shell would (quotes
respected) and read by what its program does; the program itself (`/usr/bin/time`, `python`) is
never a file. A heredoc body is file content, not shell syntax, so only the first line is read.
"""

from __future__ import annotations

import re
import shlex

#: (path, what happened) pairs, in command order.
Effects = list[tuple[str, str]]

_PATCH_LINE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
_PATCH_VERBS = {"Add": "created", "Update": "edited", "Delete": "deleted"}
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")"})
_PREFIXES = frozenset({"sudo", "time", "env", "nohup", "exec", "command", "xargs", "then", "do"})
_READERS = frozenset(
    {"cat", "head", "tail", "less", "more", "wc", "grep", "rg", "diff", "nl", "bat", "jq", "sort"}
)
_RUNNERS = frozenset({"python", "python3", "bash", "sh", "node", "ruby", "perl", "deno", "bun"})
_TESTERS = frozenset({"pytest", "py.test", "jest", "vitest", "mocha", "rspec", "phpunit", "tox"})
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
_SED_SCRIPT = re.compile(r"^[sy]?([/|#,:@]).*\1")
#: Shell syntax, quotes and newlines: a word holding any of them is not a file name.
_NOT_IN_A_FILE_NAME = re.compile("[" + re.escape("$`*?{}=\n\"'<>|;&") + "]")


def patch_effects(text: str) -> Effects:
    """Files an apply_patch body adds, updates, deletes or moves."""
    effects: Effects = []
    for verb, path, moved in _PATCH_LINE.findall(text):
        if moved:
            effects.append((moved.strip(), "created (moved)"))
        else:
            effects.append((path.strip(), _PATCH_VERBS[verb]))
    return effects


#: What makes shlex's reading of a line differ from splitting it at blanks: quotes and the
#: punctuation it splits at (escapes and comments are off, below).
_SHELL_SYNTAX = "'\";&|()<>"
# One search for any of them: a generator testing each character in turn cost more than the
# rest of reading a plain command.
_SHELL_SYNTAX_CHAR = re.compile("[" + re.escape(_SHELL_SYNTAX) + "]")
#: shlex's whitespace (str.split() would also split at Unicode spaces, which shlex keeps).
_SHLEX_BLANKS = re.compile(r"[ \t\r\n]+")


def _words(line: str) -> list[str]:
    if _SHELL_SYNTAX_CHAR.search(line) is None:
        # Most commands are plain words (`pytest -x tests/test_api.py -q`): the same words as
        # shlex's, without its character-by-character lexer in Python.
        return [word for word in _SHLEX_BLANKS.split(line) if word]
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        lexer.commenters = ""
        lexer.escape = ""  # a backslash is a Windows path separator as often as an escape
        return list(lexer)
    except ValueError:  # unbalanced quotes: plain words are the best reading left
        return line.split()


def looks_like_file(word: str) -> bool:
    if len(word) < 2 or len(word) > 300 or word.startswith("-") or "://" in word:
        return False
    if _NOT_IN_A_FILE_NAME.search(word) or word.startswith("/dev/"):
        return False
    if not any(char.isalpha() for char in word) or _SED_SCRIPT.match(word):
        return False
    return "/" in word or "\\" in word or _EXTENSION.search(word) is not None


def _segments(words: list[str]) -> list[tuple[list[str], list[tuple[str, str]]]]:
    """(program and arguments, redirections as (operator, target)) per pipeline segment."""
    segments: list[tuple[list[str], list[tuple[str, str]]]] = []
    current: list[str] = []
    redirects: list[tuple[str, str]] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in _SEPARATORS:
            segments.append((current, redirects))
            current, redirects = [], []
        elif word in (">", ">>", "<") and index + 1 < len(words):
            operator = word
            target = words[index + 1]
            if operator == ">" and target == ">":  # ">>" split by the lexer
                operator, index = ">>", index + 1
                target = words[index + 1] if index + 1 < len(words) else ""
            if target == "&" or target.isdigit():  # 2>&1
                index += 2
                continue
            if target == "<":  # "<<": a heredoc marker follows
                index += 3
                continue
            redirects.append((operator, target))
            index += 1
        elif word.isdigit() and index + 1 < len(words) and words[index + 1] in (">", ">>"):
            pass  # the file descriptor of "2>" — the redirection itself follows
        else:
            current.append(word)
        index += 1
    segments.append((current, redirects))
    return segments


#: Verbs that change a file: what Active State lists as modified.
CHANGING = (
    "written",
    "appended",
    "edited",
    "created",
    "deleted",
    "moved",
    "copied from",
    "restored",
)


def changes(verb: str) -> bool:
    return verb.startswith(CHANGING) or verb.startswith("reverted")


def command_effects(command: str) -> Effects:
    """What the command does to each file it names, program by program."""
    if "*** Begin Patch" in command:
        return patch_effects(command)
    first = command.strip().split("\n", 1)[0]
    effects: Effects = []
    for words, redirects in _segments(_words(first)):
        while words and ("=" in words[0] and not words[0].startswith("-")):
            words = words[1:]  # FOO=1 cmd
        while words and words[0].rsplit("/", 1)[-1] in _PREFIXES:
            words = words[1:]  # `/usr/bin/time -v rm x` runs rm
            while words and words[0].startswith("-"):
                words = words[1:]
        if words:
            effects += _program_effects(words)
        for operator, target in redirects:
            if looks_like_file(target):
                verb = "appended" if operator == ">>" else "read" if operator == "<" else "written"
                effects.append((target, verb))
    return effects


def _files(arguments: list[str]) -> list[str]:
    return [word for word in arguments if looks_like_file(word)]


def _program_effects(words: list[str]) -> Effects:
    program = words[0].rsplit("/", 1)[-1]
    arguments = words[1:]
    if program == "git" and arguments:
        sub, rest = arguments[0], arguments[1:]
        verbs = {"add": "staged (git add)", "rm": "deleted (git rm)", "restore": "restored"}
        if sub in verbs:
            return [(path, verbs[sub]) for path in _files(rest)]
        if sub == "mv" and len(_files(rest)) == 2:
            source, target = _files(rest)
            return [(source, f"moved to {target}"), (target, f"moved from {source}")]
        if sub == "checkout" and "--" in rest:
            return [(path, "reverted (git checkout)") for path in _files(rest)]
        return [(path, "used in a command") for path in _files(rest) if "/" in path or "\\" in path]
    files = _files(arguments)
    if program == "sed" and any(word.startswith("-i") for word in arguments):
        return [(path, "edited (sed -i)") for path in files]
    if program in ("mv", "cp") and len(files) >= 2:
        *sources, target = files
        verb = "moved" if program == "mv" else "copied"
        effects = [(source, f"{verb} to {target}") for source in sources]
        return [*effects, (target, f"{verb} from {', '.join(sources)}")]
    if program in ("rm", "unlink", "rmdir"):
        return [(path, "deleted") for path in files]
    if program == "touch":
        return [(path, "created") for path in files]
    if program == "mkdir":
        return [(path, "created (directory)") for path in files]
    if program == "tee":
        return [(path, "written") for path in files]
    if program in ("chmod", "chown"):
        return [(path, "permissions changed") for path in files]
    if program == "cd":
        return []  # the working directory (Active State), not a file
    if program in _TESTERS or (program in ("cargo", "go", "mix", "npm") and "test" in arguments):
        return [(path, "tested") for path in files]
    if program in _READERS:
        return [(path, "read") for path in files]
    if program in _RUNNERS and files:
        return [(files[0], "ran"), *((path, "used in a command") for path in files[1:])]
    return [(path, "used in a command") for path in files if "/" in path or "\\" in path]
