"""A tag's name as one URL path segment, whatever the reader typed.

Django's `str` converter cannot reverse a name holding "/" (NoReverseMatch: the highlight
page and /tags/ returned 500), and a name of dots ("." or "..") reverses to /tags/../,
which a browser collapses to the home page. Here "%" and "/" are percent-escaped, and so
is every dot of an all-dots name; Django's own reversing quotes the rest as usual, and the
server decodes it back to exactly what to_url made, which to_python unquotes.
"""

from urllib.parse import unquote


class TagNameConverter:
    regex = "[^/]+"

    def to_python(self, value: str) -> str:
        name = unquote(value)
        if "\x00" in name:
            raise ValueError("a tag name never holds a NUL")  # the resolver's 404
        return name

    def to_url(self, value: str) -> str:
        escaped = value.replace("%", "%25").replace("/", "%2F")
        if escaped and set(escaped) == {"."}:
            escaped = escaped.replace(".", "%2E")
        return escaped
