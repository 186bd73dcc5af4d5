"""Where one SQL statement ends: a small lexer for `eventsched query`'s one-statement rule.

Semicolons inside string literals, quoted identifiers, comments and (on
PostgreSQL) dollar-quoted bodies do not separate statements; the lexer knows
each database's quoting (SQLite's `[...]` and backticks, PostgreSQL's `E'...'`
escapes, nested block comments and `$tag$` bodies).
"""

from __future__ import annotations

from collections.abc import Iterator


def split(sql: str, dialect: str) -> Iterator[tuple[str, bool]]:
    """(statement text, whether it holds anything but blanks and comments), per `;`."""
    postgres = dialect == "postgresql"
    start = 0
    meaningful = False
    i = 0
    n = len(sql)
    while i < n:
        c = sql[i]
        if c == ";":
            yield sql[start:i], meaningful
            start, meaningful = i + 1, False
            i += 1
            continue
        if c.isspace():
            i += 1
            continue
        if sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        if sql.startswith("/*", i):
            i = _skip_block_comment(sql, i, nested=postgres)
            continue
        meaningful = True
        if c == "'":
            escapes = postgres and i > 0 and sql[i - 1] in "eE" and not _ident_char(sql, i - 2)
            i = _skip_quoted(sql, i, "'", backslash=escapes)
        elif c == '"':
            i = _skip_quoted(sql, i, '"', backslash=False)
        elif not postgres and c == "`":
            i = _skip_quoted(sql, i, "`", backslash=False)
        elif not postgres and c == "[":
            end = sql.find("]", i + 1)
            i = n if end < 0 else end + 1
        elif postgres and c == "$" and not _ident_char(sql, i - 1):
            i = _skip_dollar_quoted(sql, i)
        else:
            i += 1
    yield sql[start:], meaningful


def _ident_char(sql: str, i: int) -> bool:
    return 0 <= i < len(sql) and (sql[i].isalnum() or sql[i] in "_$")


def _skip_quoted(sql: str, i: int, quote: str, *, backslash: bool) -> int:
    """Index after the literal opening at `i` (a doubled quote is a quote; maybe \\ escapes)."""
    j = i + 1
    n = len(sql)
    while j < n:
        c = sql[j]
        if backslash and c == "\\":
            j += 2
            continue
        if c == quote:
            if j + 1 < n and sql[j + 1] == quote:
                j += 2
                continue
            return j + 1
        j += 1
    return n


def _skip_block_comment(sql: str, i: int, *, nested: bool) -> int:
    depth = 0
    j = i
    n = len(sql)
    while j < n:
        if sql.startswith("/*", j) and (nested or depth == 0):
            depth += 1
            j += 2
        elif sql.startswith("*/", j):
            depth -= 1
            j += 2
            if depth == 0:
                return j
        else:
            j += 1
    return n


def _skip_dollar_quoted(sql: str, i: int) -> int:
    """After a `$tag$ ... $tag$` body opening at `i`; just past `$` if it is not one."""
    j = i + 1
    while j < len(sql) and (sql[j].isalnum() or sql[j] == "_"):
        j += 1
    tag_body = sql[i + 1 : j]
    if j >= len(sql) or sql[j] != "$" or (tag_body and tag_body[0].isdigit()):
        return i + 1  # $1 (a parameter) or a stray $
    tag = sql[i : j + 1]
    end = sql.find(tag, j + 1)
    return len(sql) if end < 0 else end + len(tag)
