"""What the agent defined: the functions and files it wrote, and the skills it loaded.

`definitions` come from the text a call wrote: the value of a written-text argument (content,
contents, file_text, new_string, new_str, CodeContent, code, text, new_content, replace…) and
the added lines (`+…`) of an `apply_patch` body. Two kinds:

- a signature: a line that defines a function (`def`, `defp`, `defmacro`, `function`, `fn`,
  `func`, after any of export/pub/public/private/static/async), whose key is its name and its
  parameter list, `name(params)` — spread over up to SIGNATURE_LINES lines, whitespace inside
  the brackets closed up; a Ruby-style `def name` without brackets is keyed `def name`;
  or a type (`class`, `struct`, `interface`, `trait`, `enum`, `defmodule`), keyed by its
  keyword and name;
- a file's doc line: the first line of a whole file written (a path and its content, or a
  patch's `Add File`) when it is a comment or a docstring (`#`, `//`, `/*`, `--`, `\"\"\"`,
  `@moduledoc \"\"\"`; a shebang is skipped), keyed by its text.

`skills`: the skills the agent loaded and the files they define — the value of a call's `skill`
argument, the folder after "Base directory for this skill:", and every path in a call's
arguments or in a skill's text (a result or user turn that opens with "Launching skill:" or
holds that base-directory line, or the result of a call on a `SKILL.md`) that lies under a
`skills/` folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from compaction.lab.structural.transcript import arguments, call_paths, leaves, path_words

SIGNATURE_LINES = 6
MIN_DOC_CHARS = 12
#: Argument names (lower case, no underscores) whose values are text the call writes.
WRITTEN_ARGUMENTS = frozenset(
    {
        "content",
        "contents",
        "filetext",
        "newstring",
        "newstr",
        "codecontent",
        "code",
        "text",
        "inserttext",
        "newcontent",
        "newtext",
        "replace",
        "replacement",
    }
)
#: The arguments that hold a whole file, not a part of one.
_WHOLE_FILE = frozenset({"content", "contents", "filetext", "codecontent", "newcontent"})
_MODIFIERS = r"(?:(?:export|pub(?:\([^)]*\))?|public|private|protected|static|async|default)\s+)*"
_FUNCTION = re.compile(
    _MODIFIERS + r"(?:def|defp|defmacro|function\*?|fn|func)\s+(?:\([^)]*\)\s*)?"
    r"([A-Za-z_$][\w$.!?]*)\s*(\(.*)?$"
)
_TYPE = re.compile(
    _MODIFIERS + r"(class|struct|interface|trait|enum|defmodule)\s+([A-Za-z_][\w.]*[\w])"
)
_COMMENT = re.compile(r'^(?:"""|\'\'\'|@moduledoc\s+"""|/\*+|\*|//[/!]?|#+|--|;+)\s*')
_NOT_A_COMMENT = re.compile(r"^#(?:include|define|pragma|import|\[|!|region)")
_PATCH_SECTION = re.compile(r"^\*\*\* (Add|Update) File: (.+)$")
_SKILL_FOLDER = re.compile(r"(?:^|[/\\])skills[/\\][^/\\]")
_SKILL_BASE = re.compile(r"Base directory for this skill:\s*(\S+)")


def written_texts(call: dict[str, Any]) -> Iterator[tuple[str, str, bool]]:
    """(path, text written, whole file) for each text `call` writes."""
    decoded = arguments(call)
    paths = call_paths(call)
    path = paths[0] if paths else ""
    for key, value in leaves(decoded):
        if "*** Begin Patch" in value:
            yield from _patch_texts(value)
        elif key.lower().replace("_", "") in WRITTEN_ARGUMENTS and "\n" in value.strip():
            yield path, value, key.lower().replace("_", "") in _WHOLE_FILE


def _patch_texts(patch: str) -> Iterator[tuple[str, str, bool]]:
    path, whole = "", False
    added: list[str] = []
    for line in patch.splitlines():
        section = _PATCH_SECTION.match(line)
        if section or line.startswith("*** End Patch"):
            if added:
                yield path, "\n".join(added), whole
            added = []
            if section:
                path, whole = section.group(2).strip(), section.group(1) == "Add"
        elif line.startswith("+") and not line.startswith("+++"):
            added.append(line[1:])
    if added:
        yield path, "\n".join(added), whole


def tight(signature: str) -> str:
    """Whitespace closed up inside brackets: `f( a,\n  b, )` and `f(a, b)` are one signature."""
    signature = " ".join(signature.split())
    signature = re.sub(r"([(\[])\s+", r"\1", signature)
    return re.sub(r",?\s+([)\]])", r"\1", signature)


def _parameters(lines: list[str], start: int, opening: str) -> str:
    """The bracketed parameter list that opens on `lines[start]`, read over SIGNATURE_LINES
    lines; the first line's part of it when it does not close by then."""
    joined = " ".join([opening, *lines[start + 1 : start + SIGNATURE_LINES]])
    depth = 0
    for position, char in enumerate(joined):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return joined[: position + 1]
    return opening


def signatures(written: str) -> list[tuple[str, str]]:
    """(the line as written, its key) of every function or type `written` defines."""
    lines = written.splitlines()
    found: list[tuple[str, str]] = []
    for number, line in enumerate(lines):
        stripped = line.strip()
        function = _FUNCTION.match(stripped)
        if function:
            name, opening = function.group(1), function.group(2)
            key = tight(name + _parameters(lines, number, opening)) if opening else f"def {name}"
            found.append((stripped, key))
            continue
        kind = _TYPE.match(stripped)
        if kind:
            found.append((stripped, f"{kind.group(1)} {kind.group(2)}"))
    return found


def _comment_text(line: str) -> str:
    marker = _COMMENT.match(line)
    rest = line[marker.end() :] if marker else line
    for closing in ('"""', "'''", "*/", "-->"):
        rest = rest.split(closing)[0]
    return rest.strip()


def doc_line(written: str) -> str | None:
    """The first line of a written file, when it is a comment or a docstring: what it is for."""
    lines = [line.strip() for line in written.splitlines() if line.strip()]
    if lines and lines[0].startswith("#!"):
        lines = lines[1:]
    if not lines or _NOT_A_COMMENT.match(lines[0]) or not _COMMENT.match(lines[0]):
        return None
    doc = _comment_text(lines[0])
    if not doc and len(lines) > 1:
        # `"""`, `/**` or `@moduledoc """` alone on its line: the doc is the next line
        doc = _comment_text(lines[1])
    return doc if len(doc) >= MIN_DOC_CHARS and " " in doc else None


# -- skills -----------------------------------------------------------------------------------


def is_skill_text(content: str) -> bool:
    return content.lstrip().startswith("Launching skill:") or bool(_SKILL_BASE.search(content))


def skill_paths(content: str) -> list[str]:
    """The base folder a skill's text names and the paths under a `skills/` folder in it."""
    found = [match.group(1).rstrip("/\\") for match in _SKILL_BASE.finditer(content)]
    for line in content.splitlines():
        found += [word for word in path_words(line) if _SKILL_FOLDER.search(word)]
    return list(dict.fromkeys(found))


def call_skills(call: dict[str, Any]) -> list[str]:
    """The skill a call loads (its `skill` argument) and the paths under a `skills/` folder in
    its arguments."""
    found: list[str] = []
    for key, value in leaves(arguments(call)):
        if key.lower() == "skill" and value.strip() and "\n" not in value.strip():
            found.append(value.strip())
        else:
            for line in value.splitlines():
                found += [word for word in path_words(line) if _SKILL_FOLDER.search(word)]
    return list(dict.fromkeys(found))


def names_a_skill_file(call: dict[str, Any]) -> bool:
    names = (path.replace("\\", "/").rsplit("/", 1)[-1] for path in call_paths(call))
    return "SKILL.md" in names
