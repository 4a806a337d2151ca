"""What a file the agent wrote defines: its functions and types by signature, and what its first
doc line says it is for.

"What does `mint/2` take?", "which files did the skill define?", "what is `review_token_store`
for?" are what an agent resuming the work asks, and a summary that says only "wrote
src/lib.rs (120 lines)" cannot answer them. The written text is in the call's arguments (a
whole file's `content`, an edit's `new_string`, the `+` lines of an `apply_patch` body), so the
answer costs no model: each definition line is read as the signature it states, `name(params)`
with the whitespace inside the brackets closed up (as a reader would search for it), and a whole
file's opening comment or docstring as its purpose.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

#: Arguments whose value is text a call writes (lower case, underscores dropped).
_WRITTEN = frozenset(
    "content contents filetext newstring newstr codecontent code text newcontent newtext "
    "inserttext replacement".split()
)
_WHOLE_FILE = frozenset({"content", "contents", "filetext", "codecontent", "newcontent"})
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "targetfile", "absolutepath")
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
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update) File: (.+)$")
SIGNATURE_LINES = 6
SIGNATURE_MAX_CHARS = 90
DOC_MIN_CHARS = 12
DOC_MAX_CHARS = 120
#: The most definitions one written text gives (a generated file may define hundreds).
MAX_PER_TEXT = 12


def _loose(key: str) -> str:
    return key.lower().replace("_", "")


def _path(arguments: dict[str, Any]) -> str:
    loose = {_loose(k): v for k, v in arguments.items() if isinstance(k, str)}
    for key in _PATH_KEYS:
        value = loose.get(_loose(key))
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def written_texts(arguments: dict[str, Any]) -> Iterator[tuple[str, str, bool]]:
    """(path, text written, whether it is a whole file) for each text a call writes."""
    path = _path(arguments)
    for key, value in arguments.items():
        if not isinstance(key, str) or not isinstance(value, str):
            continue
        if "*** Begin Patch" in value:
            yield from _patch_texts(value)
        elif _loose(key) in _WRITTEN and "\n" in value.strip():
            yield path, value, _loose(key) in _WHOLE_FILE


def _patch_texts(patch: str) -> Iterator[tuple[str, str, bool]]:
    path, whole = "", False
    added: list[str] = []
    for line in patch.splitlines():
        section = _PATCH_FILE.match(line)
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
    """Whitespace collapsed and closed up inside brackets: `f( a,\\n b, )` is `f(a, b)`."""
    signature = " ".join(signature.split())
    signature = re.sub(r"([(\[])\s+", r"\1", signature)
    return re.sub(r",?\s+([)\]])", r"\1", signature)


def _parameters(lines: list[str], start: int, opening: str) -> str:
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


def signatures(text: str) -> list[str]:
    """The functions and types `text` defines: `name(params)`, `class Name`."""
    lines = text.splitlines()
    found: list[str] = []
    for number, line in enumerate(lines):
        stripped = line.strip()
        function = _FUNCTION.match(stripped)
        if function:
            name, opening = function.group(1), function.group(2)
            signature = tight(name + _parameters(lines, number, opening)) if opening else name
            if len(signature) <= SIGNATURE_MAX_CHARS:
                found.append(signature)
        else:
            kind = _TYPE.match(stripped)
            if kind:
                found.append(f"{kind.group(1)} {kind.group(2)}")
        if len(found) >= MAX_PER_TEXT:
            break
    return list(dict.fromkeys(found))


def doc_line(text: str) -> str | None:
    """A whole file's opening comment or docstring, when it says something."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and lines[0].startswith("#!"):
        lines = lines[1:]
    if not lines or _NOT_A_COMMENT.match(lines[0]) or not _COMMENT.match(lines[0]):
        return None
    doc = _comment_text(lines[0])
    if not doc and len(lines) > 1:
        doc = _comment_text(lines[1])  # `"""` or `/**` alone on its line
    if len(doc) < DOC_MIN_CHARS or " " not in doc:
        return None
    return doc if len(doc) <= DOC_MAX_CHARS else doc[: DOC_MAX_CHARS - 3].rstrip() + "..."


def _comment_text(line: str) -> str:
    marker = _COMMENT.match(line)
    rest = line[marker.end() :] if marker else line
    for closing in ('"""', "'''", "*/", "-->"):
        rest = rest.split(closing)[0]
    return rest.strip()


def definition_paths(arguments: dict[str, Any]) -> tuple[str, ...]:
    """The paths every definition of `definitions(arguments)` can name ("" for a text written
    without a path argument), without reading the texts for their signatures."""
    return tuple(dict.fromkeys(path for path, _, _ in written_texts(arguments)))


def definitions(arguments: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """(path, what it defines) for every written text of a call: each signature, and a whole
    file's doc line in quotes."""
    found: list[tuple[str, str]] = []
    for path, text, whole in written_texts(arguments):
        if whole:
            doc = doc_line(text)
            if doc:
                found.append((path, f'"{doc}"'))
        found.extend((path, signature) for signature in signatures(text))
    return tuple(dict.fromkeys(found))
