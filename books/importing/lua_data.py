"""Read a Lua table literal as data, never as code: what KOReader writes in its sidecars.

Pure Python, no Django. KOReader saves a book's settings and highlights as a Lua chunk,
`return { ["key"] = value, ... }`. Running it would run whatever else a file holds
(`os.execute(...)`), so this reads only the subset a serialiser writes: tables, strings
with their escapes, numbers, booleans and nil, and comments. Anything else (a name, a
call, an operator) is a `Bad` value carrying its line and what was found; the rest of the
file is still read, so one hostile entry costs only itself.
"""

import re
from dataclasses import dataclass

from books.importing.marks import gettext_noop

# A table nested deeper than this is not a sidecar (KOReader's go four or five deep).
MAX_DEPTH = 64

# What a `Bad` value or a LuaDataError says, stored in English inside an import problem and
# said in the reader's language on a page (books.wording). `%(found)s` is a token as the
# file wrote it (quoted) or one of the descriptions below.
NOT_A_CHUNK = gettext_noop("%(found)s where 'return {' was expected")
AFTER_RETURN = gettext_noop("%(found)s after 'return'")
AFTER_THE_DATA = gettext_noop("%(found)s after the data")
ENDS_IN_A_TABLE = gettext_noop("the file ends inside a table")
MINUS_WITHOUT_NUMBER = gettext_noop("a '-' not before a number")
TOO_DEEP = gettext_noop("tables nested more than %(depth)s deep")
NOT_DATA = gettext_noop("%(found)s (only data is read, nothing is run)")
SEPARATOR_EXPECTED = gettext_noop("%(found)s where ',' or '}' was expected")
KEY_WITHOUT_BRACKET = gettext_noop("a key without its ']'")
KEY_WITHOUT_EQUALS = gettext_noop("a key without '='")
UNFINISHED_LONG = gettext_noop("an unfinished long string or comment")
UNFINISHED_STRING = gettext_noop("a string that never ends")
UNKNOWN_ESCAPE = gettext_noop("an unknown escape '\\%(escape)s'")
END_OF_FILE = gettext_noop("the end of the file")


@dataclass(frozen=True, slots=True)
class Bad:
    """A value that is not data: where it was, and what was found there."""

    line: int
    message: str


class LuaTable(dict[object, object]):
    """A table, and the line it starts on (where an entry's problems are reported)."""

    line: int = 0


LuaValue = str | int | float | bool | None | LuaTable | Bad


class LuaDataError(Exception):
    """The file is not a Lua data chunk at all (no `return {`)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


_TOKEN = re.compile(
    r"""
    (?P<space>[ \t\r\f\v]+)
  | (?P<newline>\n)
  | (?P<long_comment>--\[(?P<comment_eq>=*)\[)
  | (?P<comment>--[^\n]*)
  | (?P<long_string>\[(?P<string_eq>=*)\[)
  | (?P<string>["'])
  | (?P<number>0[xX][0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[{}\[\]=,;\-])
  | (?P<other>.)
    """,
    re.VERBOSE,
)
_SIMPLE_ESCAPES = {
    "n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
    "\\": "\\", '"': '"', "'": "'", "\n": "\n",
}  # fmt: skip
_STRING_STOPS = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]")}
_CONSTANTS: dict[str, LuaValue] = {"true": True, "false": False, "nil": None}


@dataclass(slots=True)
class _Token:
    kind: str  # "string" | "number" | "name" | "punct" | "other" | "end"
    value: object
    line: int


class _Lexer:
    def __init__(self, text: str, *, strict: bool = False) -> None:
        self.text = text
        self.at = 0
        self.line = 1
        # Strict: a line break inside a quoted string ends it unfinished, as Lua says.
        self.strict = strict
        self.bare_line_breaks = False  # a string went on over a line break (not strict)

    def next(self) -> _Token:
        while True:
            if self.at >= len(self.text):
                return _Token("end", None, self.line)
            match = _TOKEN.match(self.text, self.at)
            assert match is not None  # `other` matches any character
            kind = match.lastgroup or "other"
            line = self.line
            if kind in ("space", "comment"):
                self.at = match.end()
            elif kind == "newline":
                self.at, self.line = match.end(), self.line + 1
            elif kind in ("long_comment", "long_string"):
                equals = match.group("comment_eq" if kind == "long_comment" else "string_eq")
                close = self.text.find(f"]{equals}]", match.end())
                if close < 0:
                    self.at = len(self.text)
                    return _Token("other", UNFINISHED_LONG, line)
                body = self.text[match.end() : close]
                self.at, self.line = close + len(equals) + 2, self.line + body.count("\n")
                if kind == "long_string":
                    # Lua drops a line break right after the opening bracket.
                    return _Token("string", body[1:] if body.startswith("\n") else body, line)
            elif kind == "string":
                return self._string(match.group("string"), match.end(), line)
            elif kind == "number":
                self.at = match.end()
                raw = match.group()
                number: int | float = (
                    int(raw, 16) if raw[:2] in ("0x", "0X") else float(raw)
                    if any(c in raw for c in ".eE") else int(raw)
                )  # fmt: skip
                return _Token("number", number, line)
            else:
                self.at = match.end()
                return _Token(kind, match.group(), line)

    def _string(self, quote: str, start: int, line: int) -> _Token:
        text, parts, at = self.text, [], start
        while True:
            # The nearest quote or backslash, in one pass (two finds would rescan a long
            # string to its end at every escape).
            found = _STRING_STOPS[quote].search(text, at)
            stop = found.start() if found else -1
            if stop < 0:
                if self.strict and "\n" in text[at:]:
                    self.at = text.index("\n", at)
                else:
                    self.at = len(text)
                return _Token("other", UNFINISHED_STRING, line)
            # Lua wants a line break in a string escaped; an older serialiser (calibre's
            # KOReader plugin) wrote one bare in `keywords`. Kept: it is still just text,
            # unless the file does not read that way (read_lua_data reads it again).
            breaks = text.count("\n", at, stop)
            if breaks and self.strict:
                self.at = text.index("\n", at)
                return _Token("other", UNFINISHED_STRING, line)
            self.bare_line_breaks = self.bare_line_breaks or breaks > 0
            self.line += breaks
            parts.append(text[at:stop])
            if text[stop] == quote:
                self.at = stop + 1
                return _Token("string", "".join(parts), line)
            escaped, at = self._escape(stop + 1)
            if escaped is None:
                # The rest of the string goes with it, up to its closing quote.
                close = re.compile(rf"(?:[^{quote}\\]|\\.)*{quote}", re.DOTALL).match(text, at)
                self.at = close.end() if close else len(text)
                escape = UNKNOWN_ESCAPE % {"escape": text[stop + 1 : stop + 2]}
                return _Token("other", escape, line)
            parts.append(escaped)

    def _escape(self, at: int) -> tuple[str | None, int]:
        """The character a backslash escape stands for, and where the string goes on."""
        text = self.text
        char = text[at : at + 1]
        if char in _SIMPLE_ESCAPES:
            if char == "\n":
                self.line += 1  # "line one\⏎line two": the newline is part of the string
            return _SIMPLE_ESCAPES[char], at + 1
        if char == "\r":  # a CRLF file's escaped newline
            self.line += 1
            return "\n", at + (2 if text[at + 1 : at + 2] == "\n" else 1)
        decimal = re.match(r"[0-9]{1,3}", text[at : at + 3])
        if decimal:
            code = int(decimal.group())
            return (chr(code) if code < 256 else None), at + len(decimal.group())
        hexa = re.match(r"x([0-9a-fA-F]{2})", text[at : at + 3])
        if hexa:
            return chr(int(hexa.group(1), 16)), at + 3
        wide = re.match(r"u\{([0-9a-fA-F]{1,6})\}", text[at : at + 10])
        if wide and int(wide.group(1), 16) < 0x110000:
            return chr(int(wide.group(1), 16)), at + len(wide.group())
        if char == "z":  # skips the white space that follows
            skipped = re.match(r"\s*", text[at + 1 :])
            span = skipped.group() if skipped else ""
            self.line += span.count("\n")
            return "", at + 1 + len(span)
        return None, at


class _Parser:
    def __init__(self, text: str, *, strict: bool = False) -> None:
        self.lexer = _Lexer(text, strict=strict)
        self.line_ended = False  # a string left open ended the value with its line
        self.token = self.lexer.next()

    def at(self, punct: str) -> bool:
        return self.token.kind == "punct" and self.token.value == punct

    def advance(self) -> _Token:
        token, self.token = self.token, self.lexer.next()
        return token

    def chunk(self) -> LuaValue:
        start = self.token
        if start.kind != "name" or start.value != "return":
            raise LuaDataError(start.line, NOT_A_CHUNK % {"found": _shown(start)})
        self.advance()
        if self.token.kind != "punct" or self.token.value != "{":
            raise LuaDataError(self.token.line, AFTER_RETURN % {"found": _shown(self.token)})
        value = self.value(0)
        if self.token.kind != "end":
            raise LuaDataError(self.token.line, AFTER_THE_DATA % {"found": _shown(self.token)})
        return value

    def value(self, depth: int) -> LuaValue:
        token = self.token
        if token.kind in ("string", "number"):
            self.advance()
            return token.value  # type: ignore[return-value]
        if token.kind == "name" and token.value in _CONSTANTS:
            self.advance()
            return _CONSTANTS[str(token.value)]
        if token.kind == "punct" and token.value == "-":
            self.advance()
            if self.token.kind == "number":
                number = self.advance().value
                assert isinstance(number, int | float)
                return -number
            return self.skip_bad(token.line, MINUS_WITHOUT_NUMBER)
        if token.kind == "punct" and token.value == "{":
            if depth >= MAX_DEPTH:
                return self.skip_bad(token.line, TOO_DEEP % {"depth": MAX_DEPTH})
            return self.table(depth + 1)
        if token.kind == "other" and token.value == UNFINISHED_STRING and self.lexer.strict:
            # Read as Lua reads it, the string ends with its line; the next line is the
            # next field, as its writer meant, with or without the comma left inside.
            self.advance()
            self.line_ended = True
            return Bad(token.line, NOT_DATA % {"found": UNFINISHED_STRING})
        return self.skip_bad(token.line, NOT_DATA % {"found": _shown(token)})

    def table(self, depth: int) -> LuaTable:
        table = LuaTable()
        table.line = self.advance().line  # the "{"
        position = 1
        while not self.at("}"):
            if self.token.kind == "end":
                # Never over an entry read already: `[1] = {...}` cut short keeps its words.
                while position in table:
                    position += 1
                table[position] = Bad(self.token.line, ENDS_IN_A_TABLE)
                return table
            key, value = self.field(depth, position)
            if key is None:
                position += 1
                key = position - 1
            if value is not None or isinstance(key, Bad):
                table[key] = value
            line_ended, self.line_ended = self.line_ended, False
            if self.token.kind == "punct" and self.token.value in (",", ";"):
                self.advance()
            elif self.token.kind != "end" and not self.at("}") and not line_ended:
                table[f"#bad{self.token.line}:{len(table)}"] = self.skip_bad(
                    self.token.line, SEPARATOR_EXPECTED % {"found": _shown(self.token)}
                )
        self.advance()  # the "}"
        return table

    def field(self, depth: int, position: int) -> tuple[object, LuaValue]:
        """One `[key] = value`, `name = value` or positional `value`; key None if positional."""
        token = self.token
        if token.kind == "punct" and token.value == "[":
            self.advance()
            key = self.value(depth)
            if isinstance(key, Bad):
                return f"#bad{token.line}", self.skip_bad(key.line, key.message)
            if not self.at("]"):
                return f"#bad{token.line}", self.skip_bad(token.line, KEY_WITHOUT_BRACKET)
            self.advance()
            if not self.at("="):
                return f"#bad{token.line}", self.skip_bad(token.line, KEY_WITHOUT_EQUALS)
            self.advance()
            return key, self.value(depth)
        if token.kind == "name" and token.value not in _CONSTANTS:
            name = self.advance()
            if self.at("="):
                self.advance()
                return str(name.value), self.value(depth)
            return f"#bad{token.line}", self.skip_bad(
                token.line, NOT_DATA % {"found": _shown(name)}
            )
        return None, self.value(depth)

    def skip_bad(self, line: int, message: str) -> Bad:
        """Skip to the end of this value (the next ',' ';' or '}' at this depth)."""
        depth = 0
        while self.token.kind != "end":
            kind, value = self.token.kind, self.token.value
            if kind == "punct" and value in ("{", "["):
                depth += 1
            elif kind == "punct" and value == "}" and depth == 0:
                break
            elif kind == "punct" and value in ("}", "]"):
                depth = max(0, depth - 1)
            elif kind == "other" and value == "(":
                depth += 1
            elif kind == "other" and value == ")":
                depth = max(0, depth - 1)
            elif kind == "punct" and value in (",", ";") and depth == 0:
                break
            self.advance()
        return Bad(line, message)


def _shown(token: _Token) -> str:
    if token.kind == "end":
        return END_OF_FILE
    if token.kind == "other" and isinstance(token.value, str) and len(token.value) > 1:
        return token.value
    return repr(str(token.value)[:40])


def read_lua_data(text: str) -> LuaValue:
    """The value a `return {...}` chunk returns, read as data. Raises LuaDataError when the
    text is not such a chunk; unreadable values inside it are `Bad`.

    A string that goes on over a line break is kept whole when the file reads cleanly so
    (calibre's `keywords`). When it does not, the quote was most likely never closed: the
    string ran on to the next line's quote and everything after it was read askew, each
    fault a line or more past the real one. The file is then read again as Lua reads it,
    the string ending unfinished on its own line, and that reading is kept unless it
    finds more faults.
    """
    loose = _Parser(text)
    try:
        value, error = loose.chunk(), None
    except LuaDataError as refused:
        value, error = None, refused
    if not loose.lexer.bare_line_breaks or (error is None and not bad_values(value)):
        if error is not None:
            raise error
        return value
    try:
        strict, strict_error = _Parser(text, strict=True).chunk(), None
    except LuaDataError as refused:
        strict, strict_error = None, refused
    if error is not None:
        if strict_error is None:
            return strict
        raise strict_error if strict_error.line <= error.line else error
    if strict_error is None and len(bad_values(strict)) <= len(bad_values(value)):
        return strict
    return value


def bad_values(value: object) -> list[Bad]:
    """Every Bad inside a value, in file order."""
    found: list[Bad] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Bad):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return sorted(found, key=lambda bad: bad.line)
