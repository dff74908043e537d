"""A small reader of gettext .po catalogues: enough to check that one is complete."""

import ast
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Entry:
    msgid: str = ""
    msgctxt: str = ""  # a context that tells two uses of one msgid apart
    msgid_plural: str = ""
    msgstr: dict[int, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    line: int = 0

    @property
    def untranslated(self) -> bool:
        return not self.msgstr or any(not text for text in self.msgstr.values())


def po_entries(path: Path) -> list[Entry]:
    """Every entry but the header (msgid ""), in file order."""
    entries: list[Entry] = []
    entry = Entry()
    target: tuple[str, int] | None = None

    def close() -> None:
        nonlocal entry
        if entry.msgid or entry.msgstr:
            entries.append(entry)
        entry = Entry()

    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line:
            close()
            target = None
        elif line.startswith("#,"):
            if entry.msgid or entry.msgstr:
                close()
            entry.flags.update(flag.strip() for flag in line[2:].split(","))
        elif line.startswith("#"):
            if entry.msgstr:
                close()
        else:
            keyword, _, rest = line.partition(" ")
            if line.startswith('"'):
                keyword, rest = "", line
            text = ast.literal_eval(rest) if rest else ""
            if keyword == "msgid":
                if entry.msgstr:
                    close()
                entry.line = number
                target = ("msgid", 0)
            elif keyword == "msgid_plural":
                target = ("msgid_plural", 0)
            elif keyword == "msgstr":
                target = ("msgstr", 0)
            elif keyword.startswith("msgstr["):
                target = ("msgstr", int(keyword[7:-1]))
            elif keyword == "msgctxt":
                if entry.msgstr:
                    close()
                target = ("msgctxt", 0)
            if target is None:
                continue
            name, index = target
            if name == "msgid":
                entry.msgid += text
            elif name == "msgctxt":
                entry.msgctxt += text
            elif name == "msgid_plural":
                entry.msgid_plural += text
            elif name == "msgstr":
                entry.msgstr[index] = entry.msgstr.get(index, "") + text
    close()
    return [e for e in entries if e.msgid]
