"""`counted(17124, "highlight")` is "17,124 highlights": a count as the commands print it.

The management commands speak English to an operator; their counts are grouped by
thousands as the pages group them (`intcomma`), with the noun in its singular for one,
never "highlight(s)".
"""


def counted(count: int, singular: str, plural: str | None = None) -> str:
    noun = singular if count == 1 else (plural or f"{singular}s")
    return f"{count:,} {noun}"
