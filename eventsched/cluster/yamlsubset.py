"""The plain YAML that `yaml_rs` reads exactly as PyYAML's safe loader does.

`yaml_rs` parses YAML 1.2 in native code and builds the Python objects there, several
times faster than building them from libyaml's events. It resolves plain scalars by YAML
1.2's core schema, where the safe loader follows YAML 1.1 (`yes` is true, `010` is 8,
`2025-01-01` a date, `1e3` a string), and its parser is not libyaml. So a document is
left to it only when every line is of the shapes that dumpers and kubectl write, where the
two cannot differ:

- `key: value`, `key:` or `- value`, behind any number of `- ` (a list item that is a
  mapping, a list in a list), indented by spaces;
- keys and values on one line each: single quoted, double quoted without escapes, `{}`,
  `[]`, or plain scalars that both schemas read alike: words (but `yes`, `no`, `on` and
  `off`), `true` and `false`, `null` and `~`, decimal integers and decimals without a
  leading zero or exponent, uuids, and anything that starts with a digit and holds a
  letter no number has (`100m`, `128Mi`);
- printable ASCII only: no tabs, carriage returns or other line breaks;
- no line more indented than the one before it where that one ended in a value: a plain
  scalar continued on the next line (`key: a` then `  - b` is the string `a - b`).

Everything else (comments, anchors, aliases and tags, block and multi-line scalars, flow
collections, `...`, directives, timestamps, octal and sexagesimal numbers) leaves the
document to the event reader. A shape libyaml itself rejects is no concern here: the
stream is checked by libyaml first.
"""

from __future__ import annotations

import re

#: A plain scalar's character: printable ASCII, not a space or a colon.
_CHAR = r"[!-9;-~]"
#: Inside a plain scalar: a colon before a printable character, or spaces before one that
#: starts no comment and no value.
_JOIN = r"(?::(?=[!-~])|\ ++(?=[!-\"$-9;-~]))"
_REST = rf"{_CHAR}*+(?:{_JOIN}{_CHAR}*+)*+"
#: Where a plain scalar ends: at the end of the line, or as a key.
_END = r"(?=\ *+\n|:[\ \n])"
#: YAML 1.1's booleans that YAML 1.2 reads as strings (`true` and `false` are both's).
_YAML11_BOOLEAN = r"(?:yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF)"
#: Letters that no number, date or time of either schema holds (so not a-f, o, t, x, Z).
_NOT_NUMERIC = r"[/G-NP-SU-WYg-np-su-wyz]"
#: A plain scalar's character other than those letters.
_NUMERIC_CHAR = r"[!-.0-9;-FOTXZ\[-fotx{-~]"
_NUMERIC_REST = rf"{_NUMERIC_CHAR}*+(?:{_JOIN}{_NUMERIC_CHAR}*+)*+"
_NUMBER = r"-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?"
_UUID = r"[0-9][0-9a-f]{7}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_PLAIN = (
    rf"(?:(?!{_YAML11_BOOLEAN}{_END})[A-Za-z/]{_REST}"
    rf"|{_NUMBER}{_END}"
    rf"|{_UUID}{_END}"
    rf"|[0-9]{_NUMERIC_REST}{_NOT_NUMERIC}{_REST}"
    rf"|~{_END})"
)
_SINGLE_QUOTED = r"'[\ -&(-~]*+(?:''[\ -&(-~]*+)*+'"
_DOUBLE_QUOTED = r'"[\ !#-\[\]-~]*+"'
_KEY = rf"(?:{_PLAIN}|{_SINGLE_QUOTED}|{_DOUBLE_QUOTED})"
_VALUE = rf"(?:{_PLAIN}|{_SINGLE_QUOTED}|{_DOUBLE_QUOTED}|\{{\}}|\[\])"
#: After a line that ends in a value, no more indented `- ` (past blank lines).
_NOT_CONTINUED = r"(?!(?:\ *+\n)*+\1\ ++-)"
_LINE = (
    rf"(\ *+)(?:(?:-\ ++)*+{_KEY}:(?:\ ++{_VALUE}\ *+\n{_NOT_CONTINUED}|\ *+\n)"
    rf"|(?:-\ ++)++{_VALUE}\ *+\n{_NOT_CONTINUED}"
    r"|\n)"
)
#: Matches at the line break before the first line outside the subset.
_OUTSIDE = re.compile(rf"\n(?!{_LINE}|\Z)")


def in_subset(text: str, before: int, end: int) -> bool:
    """Whether the lines from `text[before + 1]` to `text[end - 1]` are all of the subset.

    `text[before]` is the line break before the first line, `text[end - 1]` the one that
    ends the last.
    """
    return _OUTSIDE.search(text, before, end) is None
