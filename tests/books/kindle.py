"""Build Kindle clippings files in code, for the import, pipeline and view tests."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    title: str
    text: str
    kind: str = "Highlight"  # "Highlight" | "Note" | "Bookmark"
    location: str = "100-102"  # "100-102", "100", or "" with a page
    page: str | None = None
    added: str = "Monday, 3 March 2025 10:00:00"


def clippings_file(*entries: Entry, crlf: bool = True) -> bytes:
    eol = "\r\n" if crlf else "\n"
    parts = []
    for entry in entries:
        where = f"page {entry.page} | " if entry.page else ""
        if entry.location:  # "" for a page-only entry (a PDF, some older devices)
            where += f"Location {entry.location} | "
        meta = f"- Your {entry.kind} on {where}Added on {entry.added}"
        parts.append(eol.join([entry.title, meta, "", entry.text, "=========="]) + eol)
    return ("\ufeff" + "".join(parts)).encode("utf-8")


BORGES = "Ficciones (Borges, Jorge Luis)"
SACKS = "The Man Who Mistook His Wife for a Hat (Sacks, Oliver)"

MEMORY_LIBRARY = [
    Entry(
        BORGES, "To think is to forget differences, to generalize, to abstract.", location="412-414"
    ),
    Entry(BORGES, "He remembered every leaf of every tree of every wood.", location="380-381"),
    Entry(BORGES, "Funes had trouble sleeping: to sleep is to be distracted from the world."),
    Entry(BORGES, "Read this twice.", kind="Note", location="414"),
    Entry(
        SACKS,
        "We have each of us a life-story, an inner narrative, whose continuity is our life.",
        location="1520-1522",
    ),
    Entry(
        SACKS,
        "One must recollect oneself, recollect the inner drama, the narrative, of oneself.",
        location="1530-1532",
    ),
    Entry(SACKS, "", kind="Bookmark", location="1600"),
]
