"""JavaScript's tokens, as far as reading the literals of a code-mode cell needs: strings with
both quotes and their escapes, template literals (their text and their `${…}` expressions),
numbers, names, punctuation, and regular expressions told apart from division by what comes
before them; spaces and comments are skipped. A string or template left open (a cell cut short
by a shrunk argument) runs to its line's or the cell's end. Lexing never raises but for nesting
deeper than Python's stack (a template inside a template's `${…}`, thousands deep).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple


class Expression(NamedTuple):
    """The source of a template literal's `${…}`."""

    source: str


class Token(NamedTuple):
    kind: str  # "str", "tpl", "num", "name", "punct", "regex"
    value: Any  # a string's decoded text, a template's parts, else the source text
    start: int
    end: int


_SPACE = re.compile(r"(?:\s+|//[^\n]*|/\*.*?(?:\*/|\Z))+", re.S)
# A string's body; one left open (a cell cut short by a shrunk argument) ends at its line's end.
_STRING_BODY = {
    '"': re.compile(r'(?:[^"\\\n]|\\.)*', re.S),
    "'": re.compile(r"(?:[^'\\\n]|\\.)*", re.S),
}
_NUMBER = re.compile(r"\d[\w.]*|\.\d\w*")
_NAME = re.compile(r"[^\W\d][\w$]*|\$[\w$]*")
_PUNCT = re.compile(r"=>|\.\.\.|\?\.|\S")
_REGEX = re.compile(r"/(?:[^/\\\n\[]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/[A-Za-z]*")
_TEMPLATE_STOP = re.compile(r"[`\\$]")
# After these a `/` opens a regular expression; after a value it divides.
_BEFORE_REGEX_WORDS = frozenset(
    {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw"}
    | {"await", "yield"}
)
_ESCAPE = re.compile(r"\\(u\{[0-9A-Fa-f]{1,6}\}|u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|\r\n|[\s\S])")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    escape = match.group(1)
    if escape in ("\n", "\r\n", "\r", "\u2028", "\u2029"):
        return ""  # a line continuation
    if escape[0] in "ux" and len(escape) > 1:
        code = int(escape.strip("u{}x"), 16)
        return chr(code) if code <= 0x10FFFF else escape
    return _SIMPLE_ESCAPES.get(escape, escape)


def unescape(text: str) -> str:
    """A JavaScript string literal's body as the string it means."""
    if "\\" not in text:
        return text
    decoded = _ESCAPE.sub(_escape, text)
    if _SURROGATE.search(decoded):  # "\ud83d\ude00" is one character, written as a pair
        decoded = decoded.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return decoded


def _next_token(source: str, at: int, previous: Token | None) -> Token | None:
    space = _SPACE.match(source, at)
    if space:
        at = space.end()
    if at >= len(source):
        return None
    char = source[at]
    if char in _STRING_BODY:
        body = _STRING_BODY[char].match(source, at + 1)
        end = body.end() if body else at + 1
        closed = source.startswith(char, end)
        return Token("str", unescape(source[at + 1 : end]), at, end + 1 if closed else end)
    if char == "`":
        end, parts = _template(source, at)
        return Token("tpl", parts, at, end)
    if char == "/" and _regex_may_start(previous):
        match = _REGEX.match(source, at)
        if match:
            return Token("regex", match.group(), at, match.end())
    for kind, pattern in (("num", _NUMBER), ("name", _NAME), ("punct", _PUNCT)):
        match = pattern.match(source, at)
        if match:
            return Token(kind, match.group(), at, match.end())
    return None  # unreachable: _PUNCT takes any character that is not a space


def _regex_may_start(previous: Token | None) -> bool:
    if previous is None:
        return True
    if previous.kind == "punct":
        return previous.value not in (")", "]", "}")
    return previous.kind == "name" and previous.value in _BEFORE_REGEX_WORDS


def _template(source: str, start: int) -> tuple[int, list[Any]]:
    """The end of the template literal opening at `start`, and its parts: text, and each
    `${…}` as an Expression."""
    parts: list[Any] = []
    literal: list[str] = []
    at = start + 1
    while True:
        stop = _TEMPLATE_STOP.search(source, at)
        if stop is None:  # unterminated: the cell was cut short
            literal.append(source[at:])
            at = len(source)
            break
        literal.append(source[at : stop.start()])
        at = stop.start()
        char = source[at]
        if char == "`":
            at += 1
            break
        if char == "\\":
            literal.append(source[at : at + 2])
            at += 2
        elif source.startswith("${", at):
            parts.append(unescape("".join(literal)))
            literal = []
            close = _expression_end(source, at + 2)
            parts.append(Expression(source[at + 2 : close]))
            at = close + 1
        else:
            literal.append(char)
            at += 1
    parts.append(unescape("".join(literal)))
    return min(at, len(source)), [part for part in parts if part != ""]


def _expression_end(source: str, at: int) -> int:
    """Where the `}` closing a template's `${` is (or the end of the source)."""
    depth = 0
    previous = None
    while True:
        token = _next_token(source, at, previous)
        if token is None:
            return len(source)
        if token.kind == "punct" and token.value == "{":
            depth += 1
        elif token.kind == "punct" and token.value == "}":
            if depth == 0:
                return token.start
            depth -= 1
        at, previous = token.end, token


def tokens(source: str) -> list[Token]:
    found: list[Token] = []
    at = 0
    previous = None
    while True:
        token = _next_token(source, at, previous)
        if token is None:
            return found
        found.append(token)
        at, previous = token.end, token
