"""Device files written for the tests: KOReader sidecars, Kobo and Apple Books databases.

The sidecars are typed by hand in KOReader's serialiser style; the databases are built
here with the real schemas' relevant tables and columns (FORMATS.md beside the shared
samples), so no byte of a real reader's files is in the repository.
"""

import io
import sqlite3
import tracemalloc
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

# The current layout: two highlights (one with a note written over two lines, with a
# quote, a backslash, a tab and a \1), a page bookmark.
SIDECAR_ANNOTATIONS = r"""-- /mnt/onboard/Books/The Quiet Engine.sdr/metadata.epub.lua
return {
    ["annotations"] = {
        [1] = {
            ["chapter"] = "Chapter 1",
            ["datetime"] = "2026-02-20 18:08:18",
            ["page"] = "/body/DocFragment[7]/body/div/p[12]/text().0",
            ["pageno"] = 21,
            ["text"] = "in Chapter 1",
        },
        [2] = {
            ["chapter"] = "Chapter 1",
            ["color"] = "yellow",
            ["datetime"] = "2026-02-20 18:08:18",
            ["datetime_updated"] = "2026-02-20 18:09:21",
            ["drawer"] = "lighten",
            ["note"] = "First line with \"quotes\" and a \\ path.\
Second line\9tabbed\1",
            ["page"] = "/body/DocFragment[7]/body/div/p[12]/text().14",
            ["pageno"] = 21,
            ["pos0"] = "/body/DocFragment[7]/body/div/p[12]/text().14",
            ["pos1"] = "/body/DocFragment[7]/body/div/p[12]/text().60",
            ["text"] = "Machines hum when they are lonely. 🧠 café",
        },
        [3] = {
            ["chapter"] = "Chapter 2",
            ["color"] = "blue",
            ["datetime"] = "2026-02-21 08:00:00",
            ["drawer"] = "underscore",
            ["page"] = "/body/DocFragment[8]/body/p[3]/text().0",
            ["pageno"] = 34,
            ["pos0"] = "/body/DocFragment[8]/body/p[3]/text().0",
            ["pos1"] = "/body/DocFragment[8]/body/p[3]/text().33",
            ["text"] = "The river keeps\
what the town forgets.",
        },
    },
    ["doc_props"] = {
        ["authors"] = "Chidi Okonkwo",
        ["language"] = "en",
        ["title"] = "The Quiet Engine",
    },
    ["percent_finished"] = 0.017543859649123,
    ["summary"] = {
        ["modified"] = "2026-02-21",
        ["status"] = "reading",
    },
}
"""

# The older layout, in the 2020 serialiser's style (no trailing commas): two highlights on
# page 56 and one on page 60, their twins in `bookmarks` (`notes` the text, `text` the
# reader's note, or KOReader's automatic line), and a page bookmark.
SIDECAR_OLD = """-- we can read Lua syntax here!
return {
    ["highlight"] = {
        [56] = {
            [1] = {
                ["chapter"] = "Tides",
                ["datetime"] = "2020-11-14 15:02:42",
                ["drawer"] = "lighten",
                ["pos0"] = "/body/DocFragment[5]/body/div/p[8]/text().83",
                ["pos1"] = "/body/DocFragment[5]/body/div/p[8]/text().120",
                ["text"] = "The sea remembers every boat"
            },
            [2] = {
                ["chapter"] = "Tides",
                ["datetime"] = "2020-11-14 15:04:00",
                ["drawer"] = "lighten",
                ["pos0"] = "/body/DocFragment[5]/body/div/p[9]/text().0",
                ["pos1"] = "/body/DocFragment[5]/body/div/p[9]/text().40",
                ["text"] = "Salt is patient"
            }
        },
        [60] = {
            [1] = {
                ["chapter"] = "Harbours",
                ["datetime"] = "2020-11-15 09:00:00",
                ["drawer"] = "lighten",
                ["pos0"] = "/body/DocFragment[6]/body/div/p[2]/text().0",
                ["pos1"] = "/body/DocFragment[6]/body/div/p[2]/text().30",
                ["text"] = "Every harbour is a promise"
            }
        }
    },
    ["bookmarks"] = {
        [1] = {
            ["datetime"] = "2020-11-16 18:52:11",
            ["page"] = "/body/DocFragment[8]/body/div/h2/text()[1].0",
            ["chapter"] = "Storms",
            ["notes"] = "in Storms"
        },
        [2] = {
            ["datetime"] = "2020-11-15 09:00:00",
            ["highlighted"] = true,
            ["notes"] = "Every harbour is a promise",
            ["page"] = "/body/DocFragment[6]/body/div/p[2]/text().0",
            ["pos0"] = "/body/DocFragment[6]/body/div/p[2]/text().0",
            ["pos1"] = "/body/DocFragment[6]/body/div/p[2]/text().30",
            ["text"] = "Page 60 Every harbour is a promise @ 2020-11-15 09:00:00"
        },
        [3] = {
            ["datetime"] = "2020-11-14 15:04:00",
            ["highlighted"] = true,
            ["notes"] = "Salt is patient",
            ["page"] = "/body/DocFragment[5]/body/div/p[9]/text().0",
            ["pos0"] = "/body/DocFragment[5]/body/div/p[9]/text().0",
            ["pos1"] = "/body/DocFragment[5]/body/div/p[9]/text().40",
            ["text"] = "My grandmother said this."
        },
        [4] = {
            ["datetime"] = "2020-11-14 15:02:42",
            ["highlighted"] = true,
            ["notes"] = "The sea remembers every boat",
            ["page"] = "/body/DocFragment[5]/body/div/p[8]/text().83",
            ["pos0"] = "/body/DocFragment[5]/body/div/p[8]/text().83",
            ["pos1"] = "/body/DocFragment[5]/body/div/p[8]/text().120"
        }
    },
    ["doc_props"] = {
        ["authors"] = "Mara Quist\\
Idris Marrow",
        ["title"] = "Tidal Pools"
    },
    ["cre_dom_version"] = 20200824
}
"""


# A sidecar KOReader keeps for a book opened but never highlighted in (the shared
# koreader-v2026.07-basic README.sdr), and one of a book only bookmarked.
EMPTY_SIDECAR = b"""-- /mnt/onboard/koreader-v2026.07-basic/README.sdr/metadata.md.lua
return {
    ["annotations"] = {},
    ["copt_font_size"] = 22,
    ["doc_path"] = "/mnt/onboard/koreader-v2026.07-basic/README.md",
    ["doc_props"] = {
        ["title"] = "README",
    },
}
"""
BOOKMARKED_SIDECAR = b"""-- /mnt/onboard/Books/Dune.sdr/metadata.epub.lua
return {
    ["annotations"] = {
        [1] = {
            ["chapter"] = "Book One",
            ["datetime"] = "2026-02-20 18:08:18",
            ["page"] = "/body/DocFragment[4]/body/div/h2/text().0",
            ["pageno"] = 7,
            ["text"] = "in Book One",
        },
    },
    ["doc_props"] = { ["authors"] = "Frank Herbert", ["title"] = "Dune" },
}
"""


def sidecar(title: str, authors: str, texts: list[str]) -> bytes:
    """A current-layout KOReader sidecar of one book: one annotation a text, each on a
    paragraph of its own with its position (an empty text makes a problem line)."""
    annotations = []
    for i, text in enumerate(texts):
        where = f"/body/DocFragment[7]/body/div/p[{12 + 2 * i}]/text()"
        annotations.append(
            f"""        [{i + 1}] = {{
            ["datetime"] = "2026-02-20 18:{8 + i:02d}:18",
            ["pageno"] = {21 + i},
            ["pos0"] = "{where}.14",
            ["pos1"] = "{where}.48",
            ["text"] = "{text}",
        }},
"""
        )
    return (
        'return {\n    ["annotations"] = {\n'
        + "".join(annotations)
        + "    },\n"
        + f'    ["doc_props"] = {{ ["authors"] = "{authors}", ["title"] = "{title}" }},\n}}\n'
    ).encode()


def hostile_sidecar(marker: Path, *, first_line: bool = False) -> str:
    """A sidecar whose second highlight (and, if asked, first line) would run a command."""
    preamble = f'os.execute("touch {marker}")' if first_line else "-- a sidecar"
    return f"""{preamble}
return {{
    ["annotations"] = {{
        [1] = {{
            ["datetime"] = "2026-01-01 10:00:00",
            ["pageno"] = 3,
            ["pos0"] = "/body/p[1]/text().0",
            ["text"] = "A harmless highlight",
        }},
        [2] = {{
            ["datetime"] = "2026-01-01 10:01:00",
            ["pageno"] = 4,
            ["pos0"] = "/body/p[2]/text().0",
            ["text"] = os.execute("touch {marker}"),
        }},
    }},
    ["doc_props"] = {{ ["title"] = "Harmless" }},
}}
"""


# --- Kobo --------------------------------------------------------------------------------------

_KOBO_SCHEMA = """
CREATE TABLE content (ContentID TEXT NOT NULL, ContentType TEXT NOT NULL, MimeType TEXT,
    BookID TEXT, BookTitle TEXT, Title TEXT, Attribution TEXT, Language TEXT,
    ___PercentRead INTEGER, DateLastRead TEXT, ReadStatus INT,
    PRIMARY KEY (ContentID, ContentType));
CREATE TABLE Bookmark (BookmarkID TEXT NOT NULL, VolumeID TEXT NOT NULL, ContentID TEXT NOT NULL,
    StartContainerPath TEXT NOT NULL, StartContainerChildIndex INTEGER NOT NULL,
    StartOffset INTEGER NOT NULL, EndContainerPath TEXT NOT NULL,
    EndContainerChildIndex INTEGER NOT NULL, EndOffset INTEGER NOT NULL, Text TEXT,
    Annotation TEXT, ExtraAnnotationData BLOB, DateCreated TEXT, ChapterProgress REAL,
    Hidden BOOL DEFAULT 0, Version TEXT, DateModified TEXT, Creator TEXT, UUID TEXT,
    UserID TEXT, SyncTime TEXT, Published BIT DEFAULT false, ContextString TEXT, Type TEXT,
    PRIMARY KEY (BookmarkID));
CREATE TABLE DbVersion (version INTEGER);
CREATE TABLE Shelf (Name TEXT);
INSERT INTO DbVersion VALUES (174);
"""
VOLUME = "file:///mnt/onboard/Okonkwo, Chidi/The Quiet Engine - Chidi Okonkwo.epub"
GONE_VOLUME = "file:///mnt/onboard/Sideloaded/Harbour%20Lights.epub"


@dataclass(frozen=True)
class KoboRow:
    bookmark_id: str
    text: str | None
    annotation: str | None = None
    hidden: str = "false"
    kind: str = "highlight"
    volume: str = VOLUME
    chapter: int = 1
    created: str = "2024-11-13T20:30:01.000"
    modified: str | None = None  # DateModified: NULL until the row is edited
    start: str = "OEBPS/Text/ch.xhtml#point(/1/4/2/1:4)"
    end: str = "OEBPS/Text/ch.xhtml#point(/1/4/2/1:40)"


KOBO_ROWS = [
    KoboRow("b1", "Machines hum when they are lonely."),
    KoboRow(
        "b2", "  The river keeps what the town forgets.", "Çok güzel tasvir edilmiş", kind="note"
    ),
    KoboRow("b3", "A line the reader hid.", hidden="true"),
    KoboRow("b4", ""),
    KoboRow("b5", "淮南子 and a harbour", chapter=2, created="2024-11-14T08:00:00.553"),
    KoboRow("b6", "From a book whose row is gone.", volume=GONE_VOLUME),
    KoboRow("b8", None, "A thought with no words selected", kind="note"),
]


def kobo_database(path: Path, rows: list[KoboRow] = KOBO_ROWS) -> bytes:
    """A KoboReader.sqlite with these bookmarks; returns its bytes."""
    path.unlink(missing_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript(_KOBO_SCHEMA)
    connection.execute(
        "INSERT INTO content (ContentID, ContentType, MimeType, Title, Attribution, Language)"
        " VALUES (?, '6', 'application/epub+zip', 'The Quiet Engine', 'Okonkwo, Chidi', 'en')",
        [VOLUME],
    )
    for number, title in ((1, "Chapter One"), (2, "Chapter Two")):
        connection.execute(
            "INSERT INTO content (ContentID, ContentType, Title) VALUES (?, '9', ?)",
            [f"{VOLUME}#({number})OEBPS/Text/ch{number}.xhtml", title],
        )
    for row in rows:
        connection.execute(
            "INSERT INTO Bookmark (BookmarkID, VolumeID, ContentID, StartContainerPath,"
            " StartContainerChildIndex, StartOffset, EndContainerPath, EndContainerChildIndex,"
            " EndOffset, Text, Annotation, DateCreated, DateModified, ChapterProgress, Hidden,"
            " Type) VALUES (?, ?, ?, ?, -99, 0, ?, -99, 0, ?, ?, ?, ?, 0.25, ?, ?)",
            [
                row.bookmark_id,
                row.volume,
                f"{row.volume}#({row.chapter})OEBPS/Text/ch{row.chapter}.xhtml",
                row.start,
                row.end,
                row.text,
                row.annotation,
                row.created,
                row.modified,
                row.hidden,
                row.kind,
            ],
        )
    connection.commit()
    connection.close()
    return path.read_bytes()


# --- Apple Books -------------------------------------------------------------------------------

ASSET = "0D2181A59C167434D6A3DEBD722AD467"
_ANNOTATION_SCHEMA = """
CREATE TABLE ZAEANNOTATION (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER,
    ZANNOTATIONDELETED INTEGER, ZANNOTATIONISUNDERLINE INTEGER, ZANNOTATIONSTYLE INTEGER,
    ZANNOTATIONTYPE INTEGER, ZPLLOCATIONRANGESTART INTEGER, ZANNOTATIONCREATIONDATE TIMESTAMP,
    ZANNOTATIONMODIFICATIONDATE TIMESTAMP, ZANNOTATIONASSETID VARCHAR,
    ZANNOTATIONLOCATION VARCHAR, ZANNOTATIONNOTE VARCHAR, ZANNOTATIONSELECTEDTEXT VARCHAR,
    ZANNOTATIONUUID VARCHAR, ZFUTUREPROOFING5 VARCHAR);
CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
"""
_LIBRARY_SCHEMA = """
CREATE TABLE ZBKLIBRARYASSET (Z_PK INTEGER PRIMARY KEY, ZASSETID VARCHAR, ZTITLE VARCHAR,
    ZAUTHOR VARCHAR, ZLANGUAGE VARCHAR, ZCONTENTTYPE INTEGER);
"""


@dataclass(frozen=True)
class AppleRow:
    pk: int
    text: str | None
    note: str | None = None
    deleted: int = 0
    kind: int = 2
    style: int = 3
    underline: int = 0
    created: float = 530050091.242899  # 2017-10-18
    modified: float | None = None  # a minute after it was made, unless given
    asset: str = ASSET
    location: str = ""  # its CFI; "" for one made from its row number


APPLE_ROWS = [
    AppleRow(1, "There was something of stolid resignation in her face.", "#opposites"),
    AppleRow(2, "It was quite dark inside, for the window was small.", style=1),
    AppleRow(3, "A sentence the reader deleted.", "#gone", deleted=1),
    AppleRow(4, None, kind=1),
    AppleRow(5, None, kind=3),
    AppleRow(6, "Underlined, not highlighted.", underline=1, style=0),
    AppleRow(7, None, "A note on its own", kind=1),
]


def _wal_database(path: Path, schema: str, inserts: list[tuple[str, list[object]]]) -> None:
    """A database in WAL mode whose rows are only in its -wal file, as Apple Books leaves it."""
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA wal_autocheckpoint = 0")
    connection.executescript(schema)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for sql, values in inserts:
        connection.execute(sql, values)
    connection.commit()
    # Copied while the connection is open: no checkpoint has moved the rows out of the -wal.
    copies = {suffix: Path(f"{path}{suffix}").read_bytes() for suffix in ("", "-wal", "-shm")}
    connection.close()
    for suffix, content in copies.items():
        Path(f"{path}{suffix}").write_bytes(content)


def apple_books_zip(
    folder: Path,
    rows: list[AppleRow] = APPLE_ROWS,
    *,
    companions: bool = True,
    library: bool = True,
    books: dict[str, tuple[str, str]] | None = None,
) -> bytes:
    """A zip of the AEAnnotation and BKLibrary folders, as a reader makes it on a Mac; the
    library holds ASSET and `books` (asset -> title, author)."""
    folder.mkdir(parents=True, exist_ok=True)
    annotations = folder / "AEAnnotation_v10312011_1727_local.sqlite"
    library_path = folder / "BKLibrary-1-091020131601.sqlite"
    for path in (annotations, library_path):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    _wal_database(
        annotations,
        _ANNOTATION_SCHEMA,
        [
            (
                "INSERT INTO ZAEANNOTATION (Z_PK, Z_ENT, Z_OPT, ZANNOTATIONDELETED,"
                " ZANNOTATIONISUNDERLINE, ZANNOTATIONSTYLE, ZANNOTATIONTYPE,"
                " ZPLLOCATIONRANGESTART, ZANNOTATIONCREATIONDATE, ZANNOTATIONMODIFICATIONDATE,"
                " ZANNOTATIONASSETID, ZANNOTATIONLOCATION, ZANNOTATIONNOTE,"
                " ZANNOTATIONSELECTEDTEXT, ZANNOTATIONUUID, ZFUTUREPROOFING5)"
                " VALUES (?, 2, 1, ?, ?, ?, ?, 19, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    row.pk,
                    row.deleted,
                    row.underline,
                    row.style,
                    row.kind,
                    row.created,
                    row.created + 60 if row.modified is None else row.modified,
                    row.asset,
                    row.location or f"epubcfi(/6/40[item20]!/4/{row.pk * 2}/3,:0,:9)",
                    row.note,
                    row.text,
                    f"UUID-{row.pk}",
                    "LETTER OF CRITICISM",
                ],
            )
            for row in rows
        ],
    )
    assets = {ASSET: ("Tidal Pools", "Mara Quist & Idris Marrow"), **(books or {})}
    _wal_database(
        library_path,
        _LIBRARY_SCHEMA,
        [
            (
                "INSERT INTO ZBKLIBRARYASSET (Z_PK, ZASSETID, ZTITLE, ZAUTHOR, ZCONTENTTYPE)"
                " VALUES (?, ?, ?, ?, 1)",
                [number, asset, title, author],
            )
            for number, (asset, (title, author)) in enumerate(assets.items(), start=1)
        ],
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for sub, path in (("AEAnnotation", annotations), ("BKLibrary", library_path)):
            if sub == "BKLibrary" and not library:
                continue
            for suffix in ("", "-wal", "-shm") if companions else ("",):
                archive.write(f"{path}{suffix}", f"{sub}/{path.name}{suffix}")
    return buffer.getvalue()


T = TypeVar("T")


def padded_sidecar(size: int) -> bytes:
    """SIDECAR_OLD grown to `size` bytes by a comment of one letter repeated: it shrinks a
    thousand times in a zip (the explorer's zip bomb, one member of it)."""
    head = SIDECAR_OLD.encode() + b"\n-- "
    return head + b"x" * (size - len(head))


def zip_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def peak_memory(call: Callable[[], T]) -> tuple[T, int]:
    """What `call` returns, and the most memory Python held above what it held before."""
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    try:
        value = call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        if not tracing:
            tracemalloc.stop()
    return value, peak - before
