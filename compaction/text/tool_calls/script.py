"""Codex's code mode: the `exec` tool whose input is a JavaScript cell calling the agent's tools.

A cell reads like `const r = await tools.exec_command({cmd: "npm test", workdir: "/repo"});
text(r.output);`, or calls several tools (`tools.apply_patch(`*** Begin Patch…`)`, then a test
run), sometimes in a loop over a literal list of commands. What the agent ran is in the
arguments of those `tools.NAME(…)` calls, not in the cell's text as a whole.

The cell is read, never run. Its tokens (javascript.py) keep strings, template literals,
comments and regular expressions whole, so a `tools.` inside a string is not a call. A reader
of literal values follows what can be known without running anything:
objects, arrays, strings and numbers, `+` between strings, `.join(…)`, `JSON.stringify(…)`,
constants bound with `const`/`let`/`var`, and a loop variable over a literal list (`for (const
c of cmds)`, `cmds.map((c) => …)`), which stands for each of its items. Whatever needs the code
to run stays as its source text, shown as `${…}` the way a template literal shows it.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, NamedTuple

from compaction.text.tool_calls.javascript import Expression, Token, tokens


class Unread(NamedTuple):
    """An expression whose value only running the cell would give."""

    source: str

    def render(self) -> str:
        return "${" + " ".join(self.source.split()) + "}"


class Each(NamedTuple):
    """A loop variable: one of these items at a time."""

    items: tuple[Any, ...]


class ScriptCall(NamedTuple):
    """One `tools.NAME(argument)` of a cell; `argument` is None when the call passes none."""

    tool: str
    argument: Any


#: What ends an expression inside a call's arguments, an array or an object.
_ENDS = frozenset({",", ";", ")", "]", "}"})
_OPENING = {"(": ")", "[": "]", "{": "}"}
_LOOP_METHODS = frozenset({"map", "forEach", "flatMap", "filter"})


def render(value: Any) -> str:
    """A value as text: an Unread as `${…}`, a loop variable as its first item."""
    if isinstance(value, str):
        return value
    if isinstance(value, Unread):
        return value.render()
    if isinstance(value, Each):
        return render(value.items[0]) if value.items else ""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(_jsonable(value), ensure_ascii=False)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Unread | Each):  # tuples, which json would write as lists
        return render(value)
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    return value


def _concat(left: Any, right: Any) -> Any:
    """`left + right`; a loop variable on one side gives one result per item."""
    if isinstance(left, Each) and not isinstance(right, Each):
        return Each(tuple(_concat(item, right) for item in left.items))
    if isinstance(right, Each) and not isinstance(left, Each):
        return Each(tuple(_concat(left, item) for item in right.items))
    numbers = (int, float)
    if isinstance(left, numbers) and isinstance(right, numbers):
        return left + right
    return render(left) + render(right)


class _Spent(Exception):
    """The reader's budget ran out (see _Reader.step)."""


#: Tokens a reader may visit per token of the cell (plus a floor). Reading a value skips over
#: what it cannot read, so values nested inside values (`const a = () => { const b = … }`) are
#: walked once per level; a real cell costs a few visits a token, a crafted one could cost
#: its length squared.
STEPS_PER_TOKEN = 20
STEPS_FLOOR = 10_000


class _Reader:
    """Reads literal values from a cell's tokens (see the module's docstring for how far)."""

    def __init__(self, source: str, found: list[Token]) -> None:
        self.source = source
        self.tokens = found
        self.bindings: dict[str, Any] = {}
        self.steps = 0

    def step(self) -> None:
        self.steps += 1
        if self.steps > STEPS_PER_TOKEN * len(self.tokens) + STEPS_FLOOR:
            raise _Spent

    def punct(self, at: int, *values: str) -> bool:
        if not 0 <= at < len(self.tokens):
            return False
        token = self.tokens[at]
        return token.kind == "punct" and token.value in values

    def name(self, at: int, *values: str) -> bool:
        if not 0 <= at < len(self.tokens):
            return False
        token = self.tokens[at]
        return token.kind == "name" and (not values or token.value in values)

    def span(self, start: int, end: int) -> Unread:
        if start >= end or start >= len(self.tokens):
            return Unread("")
        last = self.tokens[min(end, len(self.tokens)) - 1]
        return Unread(self.source[self.tokens[start].start : last.end])

    def skip(self, at: int) -> int:
        """The index of the token ending the expression at `at` (`,`, `;` or a closer)."""
        depth: list[str] = []
        while at < len(self.tokens):
            self.step()
            token = self.tokens[at]
            if token.kind == "punct":
                if token.value in _OPENING:
                    depth.append(_OPENING[token.value])
                elif depth and token.value == depth[-1]:
                    depth.pop()
                elif not depth and token.value in _ENDS:
                    return at
            at += 1
        return at

    def value(self, at: int) -> tuple[Any, int]:
        """The value of the expression at `at`, and the index of the token ending it."""
        start = at
        result, at = self.operand(at)
        while self.punct(at, "+"):
            right, at = self.operand(at + 1)
            result = _concat(result, right)
        if at < len(self.tokens) and not self.punct(at, *_ENDS):
            end = self.skip(at)  # an operator this reader does not follow (`?:`, `||`, …)
            return self.span(start, end), end
        return result, at

    def operand(self, at: int) -> tuple[Any, int]:
        self.step()
        if at >= len(self.tokens):
            return Unread(""), at
        start = at
        token = self.tokens[at]
        result: Any
        if token.kind == "name" and token.value == "await":
            return self.operand(at + 1)
        if token.kind == "str":
            result, at = token.value, at + 1
        elif token.kind == "tpl":
            result, at = self.template(token.value), at + 1
        elif token.kind == "num":
            result, at = _number(token.value), at + 1
        elif token.kind == "name":
            result, at = self.named(at)
        elif self.punct(at, "["):
            result, at = self.array(at + 1)
        elif self.punct(at, "{"):
            result, at = self.object(at + 1)
        elif self.punct(at, "("):
            result, at = self.value(at + 1)
            at = at + 1 if self.punct(at, ")") else self.skip(at)
        else:
            end = self.skip(at)
            return self.span(start, end), end
        return self.postfix(start, result, at)

    def named(self, at: int) -> tuple[Any, int]:
        word = self.tokens[at].value
        constants = {"true": True, "false": False, "null": None, "undefined": None}
        if word in constants:
            return constants[word], at + 1
        stringify = self.punct(at + 1, ".") and self.name(at + 2, "stringify")
        if word == "JSON" and stringify and self.punct(at + 3, "("):
            inner, end = self.value(at + 4)
            if self.punct(end, ")") and _plain(inner):
                return json.dumps(inner, ensure_ascii=False), end + 1
        if word == "String" and self.punct(at + 1, "("):
            inner, end = self.value(at + 2)
            if self.punct(end, ")") and not isinstance(inner, Unread):
                return render(inner) if not isinstance(inner, Each) else inner, end + 1
        if word in self.bindings:
            return self.bindings[word], at + 1
        return Unread(word), at + 1

    def postfix(self, start: int, result: Any, at: int) -> tuple[Any, int]:
        while self.punct(at, ".", "?.", "[", "("):
            method = self.punct(at, ".") and self.punct(at + 2, "(")
            if method and self.name(at + 1, "join") and isinstance(result, list):
                separator: Any = ","  # JavaScript's default
                end = at + 3
                if not self.punct(end, ")"):
                    separator, end = self.value(end)
                if self.punct(end, ")") and isinstance(separator, str):
                    result, at = separator.join(render(item) for item in result), end + 1
                    continue
            trim = method and self.name(at + 1, "trim") and self.punct(at + 3, ")")
            if trim and isinstance(result, str):
                result, at = result.strip(), at + 4
                continue
            at = self.member_end(at)
            result = self.span(start, at)
        return result, at

    def member_end(self, at: int) -> int:
        """The index after one `.name`, `[…]` or `(…)`."""
        if self.punct(at, ".", "?."):
            return at + 2 if at + 1 < len(self.tokens) else at + 1
        return self.closing(at) + 1

    def closing(self, at: int) -> int:
        """The index of the bracket closing the one at `at` (or the end of the tokens)."""
        depth = 0
        for index in range(at, len(self.tokens)):
            self.step()
            if self.punct(index, "(", "[", "{"):
                depth += 1
            elif self.punct(index, ")", "]", "}"):
                depth -= 1
                if depth == 0:
                    return index
        return len(self.tokens)

    def template(self, parts: list[str | Expression]) -> Any:
        values = [self.expression(part) if isinstance(part, Expression) else part for part in parts]
        loops = [(index, value) for index, value in enumerate(values) if isinstance(value, Each)]
        if len(loops) == 1:  # one loop variable: one text per item
            index, loop = loops[0]
            return Each(
                tuple(
                    "".join(render(v) for v in [*values[:index], item, *values[index + 1 :]])
                    for item in loop.items
                )
            )
        return "".join(render(value) for value in values)

    def expression(self, part: Expression) -> Any:
        """A `${…}` of a template: its value when the reader knows it (a bound name, a literal,
        `JSON.stringify` of one), else its source as an Unread."""
        inner = _Reader(part.source, tokens(part.source))
        inner.bindings = self.bindings
        value, end = inner.value(0)
        return value if end >= len(inner.tokens) else Unread(part.source)

    def array(self, at: int) -> tuple[Any, int]:
        items: list[Any] = []
        while at < len(self.tokens) and not self.punct(at, "]"):
            if self.punct(at, ","):
                at += 1
                continue
            if self.punct(at, "..."):
                spread, at = self.value(at + 1)
                items.extend(spread if isinstance(spread, list) else [spread])
            else:
                item, at = self.value(at)
                items.append(item)
            if not self.punct(at, ",", "]"):
                at = self.skip(at)
                if self.punct(at, ")", "}", ";"):
                    return items, at  # unbalanced: stop here
        return items, at + 1

    def object(self, at: int) -> tuple[Any, int]:
        fields: dict[str, Any] = {}
        while at < len(self.tokens) and not self.punct(at, "}"):
            token = self.tokens[at]
            if self.punct(at, ","):
                at += 1
                continue
            if self.punct(at, "..."):
                spread, at = self.value(at + 1)
                if isinstance(spread, dict):
                    fields.update(spread)
            elif token.kind in ("name", "str", "num") and self.punct(at + 1, ":"):
                fields[str(token.value)], at = self.value(at + 2)
            elif token.kind == "name" and self.punct(at + 1, ",", "}"):
                word = token.value  # shorthand: `{cmd}` is `{cmd: cmd}`
                fields[word], at = self.bindings.get(word, Unread(word)), at + 1
            else:
                at = self.skip(at)  # a method, a computed key: nothing a command is read from
            if not self.punct(at, ",", "}"):
                at = self.skip(at)
                if self.punct(at, ")", "]", ";"):
                    return fields, at  # unbalanced: stop here
        return fields, at + 1

    def bind(self) -> None:
        """Constants (`const cmd = "…"`) and loop variables over literal lists, in cell order
        (as far as the budget goes: the calls are then read with the bindings found)."""
        with contextlib.suppress(_Spent):
            self._bind()
        self.steps = 0

    def _bind(self) -> None:
        for at, token in enumerate(self.tokens):
            if token.kind == "name" and token.value in ("const", "let", "var"):
                if self.name(at + 1) and self.punct(at + 2, "="):
                    value, _ = self.value(at + 3)
                    if not isinstance(value, Unread):
                        self.bindings.setdefault(self.tokens[at + 1].value, value)
            elif token.kind == "name" and token.value == "for" and self.punct(at + 1, "("):
                if (
                    self.name(at + 2, "const", "let", "var")
                    and self.name(at + 3)
                    and self.name(at + 4, "of")
                ):
                    items, _ = self.value(at + 5)
                    self.bind_loop(self.tokens[at + 3].value, items)
            elif (
                token.kind == "punct"
                and token.value == "."
                and self.name(at + 1, *_LOOP_METHODS)
                and self.punct(at + 2, "(")
            ):
                parameter = self.parameter(at + 3)
                if parameter is not None:
                    self.bind_loop(parameter, self.receiver(at))

    def bind_loop(self, name: str, items: Any) -> None:
        if isinstance(items, list) and items:
            self.bindings[name] = Each(tuple(items))

    def parameter(self, at: int) -> str | None:
        """The first parameter of the arrow function at `at` (`c =>`, `(c, i) =>`, `async c =>`)."""
        if self.name(at, "async") and not self.punct(at + 1, "=>"):
            at += 1
        if self.name(at) and self.punct(at + 1, "=>"):
            return str(self.tokens[at].value)
        if self.punct(at, "(") and self.name(at + 1) and self.punct(at + 2, ",", ")"):
            return str(self.tokens[at + 1].value)
        return None

    def receiver(self, dot: int) -> Any:
        """The list a `.map(…)` at `dot` is called on: a literal array or a bound name."""
        if self.punct(dot - 1, "]"):
            depth = 0
            for at in range(dot - 1, -1, -1):
                if self.punct(at, "]"):
                    depth += 1
                elif self.punct(at, "["):
                    depth -= 1
                    if depth == 0:
                        # `[…]` after a value indexes it (`jobs[0].map`): not a literal list.
                        indexing = at > 0 and (
                            self.tokens[at - 1].kind in ("name", "str", "tpl", "num")
                            or self.punct(at - 1, ")", "]")
                        )
                        return None if indexing else self.array(at + 1)[0]
            return None
        if dot > 0 and self.name(dot - 1):
            return self.bindings.get(self.tokens[dot - 1].value)
        return None

    def calls(self) -> list[ScriptCall]:
        """The cell's `tools.NAME(…)` calls (those read before the budget ran out)."""
        found: list[ScriptCall] = []
        with contextlib.suppress(_Spent):
            self._calls(found)
        return found

    def _calls(self, found: list[ScriptCall]) -> None:
        for at, token in enumerate(self.tokens):
            if token.kind != "name" or token.value != "tools" or self.punct(at - 1, ".", "?."):
                continue
            if self.punct(at + 1, ".") and self.name(at + 2) and self.punct(at + 3, "("):
                tool, opening = self.tokens[at + 2].value, at + 3
            elif (
                self.punct(at + 1, "[")
                and at + 2 < len(self.tokens)
                and self.tokens[at + 2].kind == "str"
                and self.punct(at + 3, "]")
                and self.punct(at + 4, "(")
            ):
                tool, opening = self.tokens[at + 2].value, at + 4
            else:
                continue
            argument = None if self.punct(opening + 1, ")") else self.value(opening + 1)[0]
            found.append(ScriptCall(str(tool), argument))


def _number(text: str) -> Any:
    try:
        return int(text.replace("_", ""), 0)
    except ValueError:
        try:
            return float(text.replace("_", ""))
        except ValueError:
            return Unread(text)


def _plain(value: Any) -> bool:
    """True for a value JSON can write without guessing (nothing unread, no loop variable)."""
    if isinstance(value, Unread | Each):
        return False
    if isinstance(value, list):
        return all(_plain(item) for item in value)
    if isinstance(value, dict):
        return all(_plain(item) for item in value.values())
    return True


def may_call_tools(source: str) -> bool:
    """A cheap test: could `source` be a code-mode cell calling a tool?"""
    return "tools." in source or "tools[" in source


def script_calls(source: str) -> list[ScriptCall]:
    """Every `tools.NAME(…)` call of a code-mode cell, in order, with its argument read as far as
    the cell says without running it. Never raises: an unreadable cell has no calls."""
    if not may_call_tools(source):
        return []
    try:
        reader = _Reader(source, tokens(source))
        reader.bind()
        return reader.calls()
    except RecursionError:  # nesting deeper than Python's stack: not a cell anyone wrote
        return []
