"""A deterministic measure of a parser's work, for size-scaling tests (never a clock).

Python's ``re`` runs in C, so a quadratic pattern is invisible to ``sys.settrace``.
:func:`measure` therefore runs a parser with the compiled patterns of its modules
replaced by :class:`CountingPattern`: each call is answered by the real pattern, and
also replayed by a small backtracking matcher written here that counts its steps (one
per node tried, character consumed or backtracked over; an ``re`` pattern that
backtracks quadratically makes this matcher do so too, as both explore the same
alternatives in the same order; it has none of ``re``'s shortcuts, so it may count more
than ``re`` does, never less: linear here is linear in ``re``). Its answer is checked
against the real one, so the replay cannot silently measure another pattern. The Python lines the parser runs
(``sys.settrace`` line events in ``fsaccept/``) are added: quadratic Python code counts
as well. The total is the same on every machine, loaded or not.

A scaling test measures a capture edited at two sizes and compares the increments:
linear work grows 8x from n to 8n, quadratic 64x.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from re import _constants as C  # noqa: N812 (the parse tree's opcodes)
from re import _parser
from types import ModuleType
from typing import Any

_CATEGORIES: dict[Any, Callable[[str], bool]] = {
    C.CATEGORY_DIGIT: str.isdecimal,
    C.CATEGORY_NOT_DIGIT: lambda c: not c.isdecimal(),
    C.CATEGORY_SPACE: str.isspace,
    C.CATEGORY_NOT_SPACE: lambda c: not c.isspace(),
    C.CATEGORY_WORD: lambda c: c.isalnum() or c == "_",
    C.CATEGORY_NOT_WORD: lambda c: not (c.isalnum() or c == "_"),
}


class BudgetExceeded(Exception):
    """More steps than the test allowed: the work grew faster than linearly."""


class Counter:
    def __init__(self) -> None:
        self.steps = 0
        self.budget: int | None = None

    def step(self, n: int = 1) -> None:
        self.steps += n
        if self.budget is not None and self.steps > self.budget:
            raise BudgetExceeded(f"{self.steps:,} steps, over the budget of {self.budget:,}")


def _plain(nodes: Any) -> list[Any]:
    """The parse tree as plain lists and tuples (indexing a SubPattern is slow)."""
    out = []
    for op, av in nodes:
        if op is C.SUBPATTERN:
            av = (av[0], av[1], av[2], _plain(av[3]))
        elif op is C.BRANCH:
            av = (None, [_plain(a) for a in av[1]])
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            av = (av[0], av[1], _plain(av[2]))
        elif op in (C.ASSERT, C.ASSERT_NOT):
            av = (av[0], _plain(av[1]))
        elif op is C.ATOMIC_GROUP:
            av = _plain(av)
        elif op is C.IN:
            av = list(av)
        out.append((op, av))
    return out


class _Matcher:
    """Backtracking over ``re._parser``'s tree, in ``re``'s order of alternatives."""

    def __init__(self, pattern: re.Pattern[str], counter: Counter) -> None:
        self.tree = _plain(_parser.parse(pattern.pattern, pattern.flags))
        self.ignorecase = bool(pattern.flags & re.I)
        self.multiline = bool(pattern.flags & re.M)
        self.dotall = bool(pattern.flags & re.S)
        self.counter = counter

    # one character against one single-character node
    def _char(self, op: Any, av: Any, c: str) -> bool:
        if op is C.ANY:
            return self.dotall or c != "\n"
        if op is C.LITERAL:
            return c == chr(av) or (self.ignorecase and c.lower() == chr(av).lower())
        if op is C.NOT_LITERAL:
            return not (c == chr(av) or (self.ignorecase and c.lower() == chr(av).lower()))
        if op is C.IN:
            negate = bool(av) and av[0][0] is C.NEGATE
            hit = any(self._in_item(iop, iav, c) for iop, iav in av if iop is not C.NEGATE)
            return hit != negate
        raise NotImplementedError(op)

    def _in_item(self, op: Any, av: Any, c: str) -> bool:
        chars = {c, c.lower(), c.upper()} if self.ignorecase else {c}
        if op is C.LITERAL:
            return chr(av) in chars
        if op is C.RANGE:
            return any(av[0] <= ord(x) <= av[1] for x in chars)
        if op is C.CATEGORY:
            return _CATEGORIES[av](c)
        raise NotImplementedError(op)

    @staticmethod
    def _single(node: Any) -> bool:
        return node[0] in (C.ANY, C.LITERAL, C.NOT_LITERAL, C.IN)

    def _at(self, av: Any, s: str, i: int) -> bool:
        if av is C.AT_BEGINNING:
            return i == 0 or (self.multiline and s[i - 1] == "\n")
        if av is C.AT_BEGINNING_STRING:
            return i == 0
        if av is C.AT_END:
            return (i == len(s) or (i == len(s) - 1 and s[i] == "\n")
                    or (self.multiline and s[i] == "\n"))
        if av is C.AT_END_STRING:
            return i == len(s)
        word = _CATEGORIES[C.CATEGORY_WORD]
        edge = (i > 0 and word(s[i - 1])) != (i < len(s) and word(s[i]))
        if av is C.AT_BOUNDARY:
            return edge
        if av is C.AT_NON_BOUNDARY:
            return not edge
        raise NotImplementedError(av)

    def seq(self, nodes: list[Any], k: int, s: str, i: int) -> Iterator[int]:
        """End positions of ``nodes[k:]`` matched at ``i``, in ``re``'s order."""
        self.counter.step()
        if k == len(nodes):
            yield i
            return
        op, av = nodes[k]
        if self._single(nodes[k]):
            if i < len(s) and self._char(op, av, s[i]):
                yield from self.seq(nodes, k + 1, s, i + 1)
        elif op is C.AT:
            if self._at(av, s, i):
                yield from self.seq(nodes, k + 1, s, i)
        elif op is C.SUBPATTERN:
            for j in self.seq(av[3], 0, s, i):
                yield from self.seq(nodes, k + 1, s, j)
        elif op is C.ATOMIC_GROUP:
            for j in self.seq(av, 0, s, i):
                yield from self.seq(nodes, k + 1, s, j)
                break
        elif op is C.BRANCH:
            for alternative in av[1]:
                for j in self.seq(alternative, 0, s, i):
                    yield from self.seq(nodes, k + 1, s, j)
        elif op in (C.ASSERT, C.ASSERT_NOT):
            direction, sub = av
            if direction != 1:
                raise NotImplementedError("lookbehind")
            found = next(iter(self.seq(sub, 0, s, i)), None) is not None
            if found == (op is C.ASSERT):
                yield from self.seq(nodes, k + 1, s, i)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            yield from self._repeat(op, av, nodes, k, s, i)
        else:
            raise NotImplementedError(op)

    def _repeat(self, op: Any, av: Any, nodes: list[Any], k: int, s: str,
                i: int) -> Iterator[int]:
        lo, hi, item = av
        hi = len(s) + 1 if hi is C.MAXREPEAT else hi
        if len(item) == 1 and self._single(item[0]):
            iop, iav = item[0]
            if op is C.MIN_REPEAT:  # lazy: the fewest first, one more at a time
                n = 0
                while n < lo:
                    self.counter.step()
                    if i + n >= len(s) or not self._char(iop, iav, s[i + n]):
                        return
                    n += 1
                while True:
                    yield from self.seq(nodes, k + 1, s, i + n)
                    self.counter.step()
                    if n >= hi or i + n >= len(s) or not self._char(iop, iav, s[i + n]):
                        return
                    n += 1
            n = 0  # greedy: as many as match, then give back one at a time
            while n < hi and i + n < len(s) and self._char(iop, iav, s[i + n]):
                self.counter.step()
                n += 1
            if n < lo:
                return
            if op is C.POSSESSIVE_REPEAT:
                yield from self.seq(nodes, k + 1, s, i + n)
                return
            for m in range(n, lo - 1, -1):
                self.counter.step()
                yield from self.seq(nodes, k + 1, s, i + m)
            return
        if hi > 64:  # a repeated group: recursion per repetition (none unbounded here)
            raise NotImplementedError("an unbounded repeat of a group")

        def rep(count: int, j: int) -> Iterator[int]:
            self.counter.step()
            if op is not C.MIN_REPEAT and count < hi:
                for e in self.seq(item, 0, s, j):
                    if e != j:
                        yield from rep(count + 1, e)
            if count >= lo:
                yield from self.seq(nodes, k + 1, s, j)
            if op is C.MIN_REPEAT and count < hi:
                for e in self.seq(item, 0, s, j):
                    if e != j:
                        yield from rep(count + 1, e)

        if op is C.POSSESSIVE_REPEAT:
            raise NotImplementedError("a possessive repeat of a group")
        yield from rep(0, i)

    def first(self, s: str, start: int, anchored: bool, full: bool) -> tuple[int, int] | None:
        for i in ([start] if anchored else range(start, len(s) + 1)):
            for end in self.seq(self.tree, 0, s, i):
                if not full or end == len(s):
                    return i, end
        return None


class CountingPattern:
    """A compiled pattern whose every call is also replayed, counting its steps."""

    def __init__(self, pattern: re.Pattern[str], counter: Counter) -> None:
        self._pattern = pattern
        self._matcher = _Matcher(pattern, counter)
        self.pattern, self.flags, self.groups = pattern.pattern, pattern.flags, pattern.groups

    def _check(self, real: re.Match[str] | None, s: str, pos: int, anchored: bool,
               full: bool = False) -> None:
        tracing = sys.gettrace()
        sys.settrace(None)  # the replay is counted by its steps, not its lines
        try:
            mine = self._matcher.first(s, pos, anchored, full)
        finally:
            sys.settrace(tracing)
        assert mine == (real.span() if real else None), \
            f"the replay of {self.pattern!r} disagrees with re: {mine} != {real}"

    def match(self, s: str, pos: int = 0) -> re.Match[str] | None:
        real = self._pattern.match(s, pos)
        self._check(real, s, pos, anchored=True)
        return real

    def fullmatch(self, s: str, pos: int = 0) -> re.Match[str] | None:
        real = self._pattern.fullmatch(s, pos)
        self._check(real, s, pos, anchored=True, full=True)
        return real

    def search(self, s: str, pos: int = 0) -> re.Match[str] | None:
        real = self._pattern.search(s, pos)
        self._check(real, s, pos, anchored=False)
        return real

    def finditer(self, s: str) -> Iterator[re.Match[str]]:
        pos = 0
        for real in self._pattern.finditer(s):
            self._check(real, s, pos, anchored=False)
            pos = real.end() + (real.end() == real.start())
            yield real
        if pos <= len(s):
            self._check(None, s, pos, anchored=False)

    def findall(self, s: str) -> list[Any]:
        return [m.group() if not self.groups else m.group(1) if self.groups == 1
                else m.groups() for m in self.finditer(s)]


class _CountingRe:
    """Stands in for the ``re`` module inside a parser module (``re.search(p, s)``...)."""

    def __init__(self, counter: Counter) -> None:
        self._counter = counter

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)

    def compile(self, pattern: str, flags: int = 0) -> CountingPattern:
        return CountingPattern(re.compile(pattern, flags), self._counter)

    def match(self, p: str, s: str, flags: int = 0) -> Any:
        return self.compile(p, flags).match(s)

    def fullmatch(self, p: str, s: str, flags: int = 0) -> Any:
        return self.compile(p, flags).fullmatch(s)

    def search(self, p: str, s: str, flags: int = 0) -> Any:
        return self.compile(p, flags).search(s)

    def findall(self, p: str, s: str, flags: int = 0) -> Any:
        return self.compile(p, flags).findall(s)


def _replace_patterns(obj: Any, counter: Counter) -> Any:
    if isinstance(obj, re.Pattern):
        return CountingPattern(obj, counter)
    if isinstance(obj, dict):
        return {k: _replace_patterns(v, counter) for k, v in obj.items()}
    return obj


@contextmanager
def _counting(modules: list[ModuleType], counter: Counter) -> Iterator[None]:
    saved: list[tuple[ModuleType, str, Any]] = []
    try:
        for module in modules:
            for name, value in list(vars(module).items()):
                if value is re or isinstance(value, re.Pattern) or (
                        isinstance(value, dict)
                        and any(isinstance(v, re.Pattern) for v in value.values())):
                    saved.append((module, name, value))
                    setattr(module, name, _CountingRe(counter) if value is re
                            else _replace_patterns(value, counter))
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


def measure(parse: Callable[[], Any], modules: list[ModuleType],
            budget: int | None = None) -> int:
    """Steps of ``parse()``: the replayed pattern steps of ``modules``' patterns plus the
    Python lines run in ``fsaccept/``. BudgetExceeded beyond ``budget``."""
    counter = Counter()
    counter.budget = budget

    def lines(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            counter.step()
        return lines

    def calls(frame: Any, event: str, arg: Any) -> Any:
        return lines if "/fsaccept/" in frame.f_code.co_filename else None

    with _counting(modules, counter):
        previous = sys.gettrace()
        sys.settrace(calls)
        try:
            parse()
        finally:
            sys.settrace(previous)
    return counter.steps


def assert_linear(make: Callable[[int], str], parse: Callable[[str], Any],
                  modules: list[ModuleType], n: int) -> tuple[int, int]:
    """Work on ``make(n)`` and ``make(8n)`` over that on ``make(0)``: the growth must be
    about 8x (linear), far from the 64x of a quadratic parser; a budget stops a
    quadratic one early. Returns the two increments."""
    base = measure(lambda: parse(make(0)), modules)
    small = measure(lambda: parse(make(n)), modules) - base
    assert small > 0, "the edit costs no work: it does not exercise the parser"
    budget = base + 16 * small
    try:
        large = measure(lambda: parse(make(8 * n)), modules, budget=budget) - base
    except BudgetExceeded as e:
        raise AssertionError(f"8x the input costs more than 16x the work ({e}): "
                             "superlinear") from None
    assert large <= 16 * small, (small, large)
    return small, large
