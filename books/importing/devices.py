"""Uploads copied off a reading device: a KOReader sidecar, a Kobo database, an Apple
Books pair of databases, or a zip of any of these or of a Kindle's `My Clippings.txt` (zipped
to be mailed); told apart by content, never by name.

Pure Python, no Django. A zip is read from memory and nothing in it is ever extracted
under its own name: a member whose name climbs out of the archive (`../`, `/etc/…`) is
reported and not read, and an archive that would unpack to more than it should (a zip
bomb) is refused before a byte is inflated. Its sidecars are read one at a time; its
databases are unpacked in pieces into a private temporary folder, under names of our
choosing, and read from there, so what a zip holds is never held in memory whole.
"""

import codecs
import io
import math
import re
import tempfile
import zipfile
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path

from books.importing.apple_books import ANNOTATIONS_TABLE, LIBRARY_TABLE, Store, parse_apple_books
from books.importing.clippings import ParseResult, Problem, parse_clippings
from books.importing.clippings_metadata import parse_metadata_line
from books.importing.kobo import NOT_KOBO, is_kobo, parse_kobo
from books.importing.koreader import NOT_A_SIDECAR, is_koreader_lua, parse_koreader_lua
from books.importing.marks import gettext_noop
from books.importing.rich import decode_text
from books.importing.sqlite_read import (
    UnreadableDatabase,
    database_copy,
    is_sqlite,
    tables_of,
)

KOREADER_LUA = "koreader-lua"
KOBO_SQLITE = "kobo-sqlite"
APPLE_BOOKS_ANNOTATIONS = "apple-books-annotations"
SQLITE = "sqlite"
ZIP = "zip"
LABELS = {
    KOREADER_LUA: "KOReader sidecar (metadata.lua)",
    KOBO_SQLITE: "Kobo database (KoboReader.sqlite)",
    APPLE_BOOKS_ANNOTATIONS: "Apple Books annotations database",
    SQLITE: "SQLite database",
    ZIP: "Zip archive",
}
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")

# What a zip may hold: thousands of books' sidecars, or a library's two databases. Real
# ones are far smaller (a sidecar is 2 to 50 KB, a Kobo database 4 MB, an Apple Books
# library's two databases with their -wal and -shm 5 MB: ../shared/data/readers). What the
# worker's memory holds is one sidecar at a time; the databases go to a temporary folder
# (twice: unpacked, then the copy SQLite opens), so their cap is a cap on its disk.
MAX_MEMBERS = 20_000
MAX_UNPACKED_BYTES = 512 * 1024 * 1024
MAX_MEMBER_BYTES = 512 * 1024 * 1024
MAX_SIDECAR_BYTES = 32 * 1024 * 1024
# A Kindle's My Clippings.txt is read whole from a zip (parsing 55 MB at once took a worker
# from 128 to 410 MB; an upload of the file itself is parsed in pieces): a real one is a
# few MB, and a larger one is uploaded unzipped. The cap is on the zip's clippings files
# together: 16 copies of a 31.8 MB file, each under it, zipped to 30 MB and parsed to
# 3.8 million clippings.
MAX_CLIPPINGS_BYTES = 32 * 1024 * 1024
MAX_DATABASE_BYTES = 256 * 1024 * 1024
# A member this large that shrank this much is a bomb, not a database, and so is a whole
# zip (SQLite files and sidecars compress some 3 to 13 times, a 32 KB -shm file 35).
BOMB_RATIO = 200
BOMB_MIN_BYTES = 8 * 1024 * 1024
_PIECE = 1024 * 1024
APPLE_ALONE = gettext_noop(
    "an Apple Books annotation database on its own: its book titles are in the BKLibrary "
    "database. Zip the AEAnnotation and BKLibrary folders (with their -wal and -shm files) "
    "and upload the zip"
)
ZIP_UNREADABLE = gettext_noop("this zip cannot be read: %(error)s")
ZIP_NOTHING = gettext_noop(
    "no Kindle 'My Clippings.txt', KOReader sidecar (metadata.<ext>.lua), Kobo database or "
    "Apple Books databases were found in this zip"
)
# Stored before a zip's My Clippings.txt was read; still said in the reader's language.
ZIP_NOTHING_BEFORE = gettext_noop(
    "no KOReader sidecar (metadata.<ext>.lua), Kobo database or Apple Books "
    "databases were found in this zip"
)
ZIP_EMPTY = gettext_noop("The files in this zip have no highlights or notes to import.")
ZIP_TOO_MANY = gettext_noop("this zip holds %(count)s files, more than %(limit)s")
ZIP_TOO_BIG = gettext_noop(
    "this zip would unpack to %(size)s MB, more than %(limit)s MB: it was not unpacked"
)
ZIP_BOMB = gettext_noop(
    "'%(name)s' in this zip would unpack %(size)s bytes from %(packed)s (a zip bomb?): "
    "the zip was not unpacked"
)
ZIP_BOMB_TOTAL = gettext_noop(
    "the files in this zip would unpack %(size)s bytes from %(packed)s (a zip bomb?): "
    "the zip was not unpacked"
)
ZIP_DATABASES_TOO_BIG = gettext_noop(
    "the databases in this zip would unpack to %(size)s MB, more than %(limit)s MB: "
    "the zip was not unpacked"
)
MEMBER_OUTSIDE = gettext_noop("'%(name)s' was not read: its name leads out of the zip's folder")
MEMBER_TOO_LARGE = gettext_noop("'%(name)s' is too large to read")
# Stored before the cap was on a zip's clippings together; still said in the reader's language.
CLIPPINGS_TOO_LARGE = gettext_noop(
    "'%(name)s' is too large to read from a zip: unzip it and upload the file itself"
)
CLIPPINGS_TOO_LARGE_IN_ZIP = gettext_noop(
    "'%(name)s' is %(size)s MB, more than the %(limit)s MB of Kindle clippings read from one "
    "zip: %(fix)s"
)
ZIP_CLIPPINGS_TOO_LARGE = gettext_noop(
    "the Kindle clippings files in this zip (%(names)s) come to %(size)s MB, more than the "
    "%(limit)s MB read from one zip: %(fix)s"
)
# What the reader can do instead, by the upload limit (EXOGRAM_MAX_UPLOAD_MB): never upload
# a file larger than it.
UNZIP_IT = gettext_noop("unzip it and upload the file itself")
UNZIP_THEM = gettext_noop("unzip them and upload each file itself")
UNZIP_THEM_UP_TO = gettext_noop(
    "unzip them and upload each file itself; one over the %(upload)s MB upload limit cannot "
    "be imported"
)
OVER_UPLOAD_LIMIT = gettext_noop(
    "it is larger than the %(upload)s MB upload limit too, so it cannot be imported"
)
MEMBER_UNPACKABLE = gettext_noop("'%(name)s' cannot be unpacked: %(error)s")
MEMBER_LIES = gettext_noop("'%(name)s' unpacks to more than its zip entry declares")
IN_MEMBER = gettext_noop("%(name)s: %(problem)s")
# A Kindle clippings file's entries end in a line of ten "=" (in every language the Kindle
# writes), and each has a metadata line ("- Your Highlight on page 3 | …"): both in a text
# member's first 64 KB tell a clippings file. A separator alone is a Markdown heading too
# (`Title\n==========` in a KOReader folder's README.md). A first highlight can be longer
# than 4 KB, the head read before; a member named My Clippings.txt is read whatever it
# starts with.
_KINDLE_SEPARATOR = re.compile(r"^\ufeff?==========[ \t]*\r?$", re.MULTILINE)
_HEAD_BYTES = 64 * 1024
_CLIPPINGS_NAMES = frozenset({"my clippings.txt"})  # a set: a name, not wording to translate
_UNSAFE_NAME = re.compile(r"(?:^|[\\/])\.\.(?:[\\/]|$)|^[\\/]|^[A-Za-z]:")


def is_device_binary(data: bytes) -> bool:
    """A zip or an SQLite database: binary, and read by this module."""
    return data.startswith(_ZIP_MAGIC) or is_sqlite(data)


def detect_device(data: bytes) -> str | None:
    """The device format of an upload, or None for a text export."""
    if data.startswith(_ZIP_MAGIC):
        return ZIP
    if is_sqlite(data):
        try:
            with database_copy(data) as connection:
                tables = tables_of(connection)
        except UnreadableDatabase:
            return SQLITE
        if is_kobo(tables):
            return KOBO_SQLITE
        return APPLE_BOOKS_ANNOTATIONS if ANNOTATIONS_TABLE in tables else SQLITE
    if is_koreader_lua(decode_text(data[:4096])):
        return KOREADER_LUA
    return None


def parse_device(data: bytes, kind: str, *, upload_limit: int | None = None) -> ParseResult:
    """Parse an upload detect_device recognised. Never raises. `upload_limit`, the largest
    upload in bytes (None: none), is what a zip's problems advise by."""
    if kind == KOREADER_LUA:
        return parse_koreader_lua(data)
    if kind == KOBO_SQLITE:
        return parse_kobo(data)
    if kind == APPLE_BOOKS_ANNOTATIONS:
        return ParseResult([], [Problem(1, APPLE_ALONE)], 1)
    if kind == ZIP:
        return parse_zip(data, upload_limit=upload_limit)
    return ParseResult([], [Problem(1, NOT_KOBO)], 1)


class _Refused(Exception):
    pass


# What a damaged or unsupported archive raises: a bad header or checksum, a broken deflate
# stream, an encrypted member (RuntimeError), a compression this Python lacks.
_DAMAGED = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    OSError,
    EOFError,
    ValueError,
    RuntimeError,
    NotImplementedError,
)


@dataclass
class _Archive:
    result: ParseResult
    sidecars: list[zipfile.ZipInfo] = field(default_factory=list)  # read one at a time
    clippings: list[zipfile.ZipInfo] = field(default_factory=list)  # a Kindle's, the same
    databases: list[zipfile.ZipInfo] = field(default_factory=list)  # SQLite by their header
    companions: dict[str, zipfile.ZipInfo] = field(default_factory=dict)  # -wal/-shm by name


def parse_zip(data: bytes, *, upload_limit: int | None = None) -> ParseResult:
    """Every sidecar, clippings file and database in a zip, as one result. Never raises.
    `upload_limit` as parse_device's."""
    with tempfile.TemporaryDirectory(prefix="exogram-zip-") as folder:
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zipped:
                archive = _open_zip(zipped, len(data))
                _cap_clippings(archive, upload_limit)
                result = archive.result
                empty: list[str] = []  # what each file that holds nothing says of itself
                for info in archive.sidecars:
                    try:
                        content = _read_member(zipped, info)
                    except _DAMAGED as error:
                        _damaged(result, info.filename, error)
                        continue
                    part = parse_koreader_lua(content, source=info.filename)
                    del content
                    if [p.message for p in part.problems] == [NOT_A_SIDECAR]:
                        continue  # KOReader's own settings: nothing to read
                    _add(result, part, info.filename, empty)
                for info in archive.clippings:
                    try:
                        content = _read_member(zipped, info)
                    except _DAMAGED as error:
                        _damaged(result, info.filename, error)
                        continue
                    part = parse_clippings(content)
                    del content
                    _add(result, part, info.filename, empty)
                stores = _unpack_databases(zipped, archive, Path(folder))
        except _Refused as refusal:
            return ParseResult([], [Problem(1, str(refusal))], 1)
        except _DAMAGED as error:
            return ParseResult([], [Problem(1, ZIP_UNREADABLE % {"error": error})], 1)
        _read_databases(stores, result, empty)
    if result.entries == 0 and not empty:
        result.problems.append(Problem(1, ZIP_NOTHING))
        result.entries += 1
    elif not result.problems and all(c.kind == "bookmark" for c in result.clippings):
        # One file says it in its own words (its book's title); several, the zip.
        result.holds_nothing = empty[0] if len(empty) == 1 else ZIP_EMPTY
    return result


def zip_unpacked_bytes(data: bytes) -> int:
    """What a zip's members declare they unpack to, read from its directory alone; 0 for
    what is not a zip or cannot be read as one (its parse says why)."""
    if not data.startswith(_ZIP_MAGIC):
        return 0
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return sum(info.file_size for info in _members(archive))
    except _DAMAGED:
        return 0


def zip_refusal(data: bytes) -> str | None:
    """Why a zip is refused before a byte of it is inflated (too many files, too large once
    unpacked, a zip bomb), from its directory alone; None for anything else."""
    if not data.startswith(_ZIP_MAGIC):
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            _check_sizes(_members(archive), len(data))
    except _Refused as refusal:
        return str(refusal)
    except _DAMAGED:
        return None
    return None


def _members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    # Not ZipInfo.is_dir(): it indexes the name, and a damaged zip can hold an empty one.
    return [info for info in archive.infolist() if not info.filename.endswith("/")]


def _check_sizes(members: list[zipfile.ZipInfo], packed: int) -> None:
    if len(members) > MAX_MEMBERS:
        raise _Refused(ZIP_TOO_MANY % {"count": f"{len(members):,}", "limit": f"{MAX_MEMBERS:,}"})
    unpacked = sum(info.file_size for info in members)
    if unpacked > MAX_UNPACKED_BYTES:
        raise _Refused(
            ZIP_TOO_BIG
            % {
                "size": f"{unpacked / 1024**2:,.0f}",
                "limit": f"{MAX_UNPACKED_BYTES / 1024**2:,.0f}",
            }
        )
    for info in members:
        if info.file_size > BOMB_MIN_BYTES and info.file_size > BOMB_RATIO * max(
            1, info.compress_size
        ):
            raise _Refused(
                ZIP_BOMB
                % {
                    "name": info.filename[:120],
                    "size": f"{info.file_size:,}",
                    "packed": f"{info.compress_size:,}",
                }
            )
    # Many members each under BOMB_MIN_BYTES add up to the same bomb (32 sidecars of 8 MB
    # of repeated text in 267 KB): the compressed members are measured together too.
    # Members that do not shrink (stored as they are, or random bytes compressed) unpack to
    # about what they take, so they count on neither side: 2 MB of random bytes beside 40
    # members of 8 MB of zeros no longer passes the bomb for a zip 130 times its size. What
    # the shrinking members take is their entries' sizes, or the file's where those overlap
    # one stretch of it.
    compressed = [
        info
        for info in members
        if info.compress_type != zipfile.ZIP_STORED and info.file_size > 2 * info.compress_size
    ]
    inflated = sum(info.file_size for info in compressed)
    deflated = min(packed, sum(info.compress_size for info in compressed))
    if inflated > BOMB_MIN_BYTES and inflated > BOMB_RATIO * max(1, deflated):
        raise _Refused(ZIP_BOMB_TOTAL % {"size": f"{inflated:,}", "packed": f"{deflated:,}"})


def _open_zip(archive: zipfile.ZipFile, packed: int) -> _Archive:
    members = _members(archive)
    _check_sizes(members, packed)
    result = ParseResult(clippings=[], problems=[], entries=0)
    found = _Archive(result)
    companions: list[zipfile.ZipInfo] = []
    for info in members:
        name = info.filename
        if _UNSAFE_NAME.search(name) or "\x00" in name:
            result.entries += 1
            result.problems.append(Problem(1, MEMBER_OUTSIDE % {"name": name[:120]}))
            continue
        if info.file_size > MAX_MEMBER_BYTES:
            result.entries += 1
            result.problems.append(Problem(1, MEMBER_TOO_LARGE % {"name": name[:120]}))
            continue
        base = name.rsplit("/", 1)[-1]
        if base.startswith("._") or "__MACOSX/" in name:
            continue  # macOS's resource forks, not the files themselves
        if name.endswith(("-wal", "-shm")):
            companions.append(info)  # read only beside the database it belongs to
            continue
        try:
            with archive.open(info) as member:
                head = member.read(_HEAD_BYTES)
        except _DAMAGED as error:
            _damaged(result, name, error)
            continue
        if is_sqlite(head):
            found.databases.append(info)
        elif name.endswith(".lua") and is_koreader_lua(decode_text(head[:4096])):
            if info.file_size > MAX_SIDECAR_BYTES:
                result.entries += 1
                result.problems.append(Problem(1, MEMBER_TOO_LARGE % {"name": name[:120]}))
            else:
                found.sidecars.append(info)
        elif base.casefold() in _CLIPPINGS_NAMES or _is_clippings_head(head):
            found.clippings.append(info)
    databases = {info.filename for info in found.databases}
    found.companions = {i.filename: i for i in companions if i.filename[:-4] in databases}
    held = sum(i.file_size for i in found.databases) + sum(
        i.file_size for i in found.companions.values()
    )
    if held > MAX_DATABASE_BYTES:
        raise _Refused(
            ZIP_DATABASES_TOO_BIG
            % {
                "size": f"{held / 1024**2:,.0f}",
                "limit": f"{MAX_DATABASE_BYTES / 1024**2:,.0f}",
            }
        )
    return found


def _is_clippings_head(head: bytes) -> bool:
    """Whether a member's first bytes are a Kindle clippings file's: a separator line and a
    metadata line."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = decode_text(head[: len(head) // 2 * 2])
    else:
        try:  # the head may end inside a character: that is not Windows-1252
            text = codecs.getincrementaldecoder("utf-8-sig")().decode(head, final=False)
        except UnicodeDecodeError:
            text = decode_text(head)
    if not _KINDLE_SEPARATOR.search(text):
        return False
    return any(parse_metadata_line(line) is not None for line in text.splitlines())


def _cap_clippings(found: _Archive, upload_limit: int | None) -> None:
    """None of the zip's clippings files is read when together they pass
    MAX_CLIPPINGS_BYTES: one problem names them, with what to do instead."""
    held = sum(info.file_size for info in found.clippings)
    if held <= MAX_CLIPPINGS_BYTES:
        return
    uploadable = upload_limit is None or all(
        info.file_size <= upload_limit for info in found.clippings
    )
    upload = {"upload": f"{(upload_limit or 0) // 1024**2:,}"}
    values = {"size": _megabytes(held), "limit": f"{MAX_CLIPPINGS_BYTES // 1024**2:,}"}
    if len(found.clippings) == 1:
        fix = UNZIP_IT if uploadable else OVER_UPLOAD_LIMIT % upload
        problem = CLIPPINGS_TOO_LARGE_IN_ZIP % {
            **values, "name": found.clippings[0].filename[:120], "fix": fix
        }  # fmt: skip
    else:
        fix = UNZIP_THEM if uploadable else UNZIP_THEM_UP_TO % upload
        names = ", ".join(f"'{info.filename[:120]}'" for info in found.clippings[:5])
        if len(found.clippings) > 5:
            names += ", …"
        problem = ZIP_CLIPPINGS_TOO_LARGE % {**values, "names": names, "fix": fix}
    found.result.entries += 1
    found.result.problems.append(Problem(1, problem))
    found.clippings = []


def _megabytes(size: int) -> str:
    # To one decimal, rounded up: a file just over the limit is never "32.0 MB, more than 32".
    return f"{math.ceil(size * 10 / 1024**2) / 10:,.1f}"


def _damaged(result: ParseResult, name: str, error: BaseException) -> None:
    # One damaged member costs only itself.
    result.entries += 1
    result.problems.append(Problem(1, MEMBER_UNPACKABLE % {"name": name[:120], "error": error}))


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, never more than its header declared (a lying header is caught)."""
    with archive.open(info) as member:
        content = member.read(info.file_size + 1)
    if len(content) > info.file_size:
        raise _Refused(MEMBER_LIES % {"name": info.filename[:120]})
    return content


def _unpack(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> None:
    """A member written to `path` in pieces, never more than its header declared."""
    left = info.file_size
    with archive.open(info) as member, path.open("wb") as file:
        while piece := member.read(min(_PIECE, left + 1)):
            left -= len(piece)
            if left < 0:
                raise _Refused(MEMBER_LIES % {"name": info.filename[:120]})
            file.write(piece)


def _unpack_databases(archive: zipfile.ZipFile, found: _Archive, folder: Path) -> dict[str, Store]:
    """Each database of the zip with its companions, as files in `folder`: member name →
    store."""
    stores: dict[str, Store] = {}
    for number, info in enumerate(found.databases):
        path = folder / f"{number}.sqlite"
        if not _unpacked(archive, info, path, found.result):
            continue
        companions: dict[str, Path | None] = {}
        for suffix in ("-wal", "-shm"):
            member = found.companions.get(f"{info.filename}{suffix}")
            companion = folder / f"{number}.sqlite{suffix}"
            if member is not None and _unpacked(archive, member, companion, found.result):
                companions[suffix] = companion
            else:
                companions[suffix] = None
        stores[info.filename] = Store(path, companions["-wal"], companions["-shm"])
    return stores


def _unpacked(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, result: ParseResult
) -> bool:
    try:
        _unpack(archive, info, path)
    except _DAMAGED as error:
        _damaged(result, info.filename, error)
        return False
    return True


def _add(result: ParseResult, part: ParseResult, name: str, empty: list[str]) -> None:
    if part.holds_nothing:
        empty.append(part.holds_nothing)
    result.entries += part.entries
    result.clippings += part.clippings
    result.deleted_on_device += part.deleted_on_device
    result.problems += [
        replace(p, message=IN_MEMBER % {"name": name, "problem": p.message}) for p in part.problems
    ]
    for reason, count in part.skipped.items():
        result.skipped[reason] = result.skipped.get(reason, 0) + count


def _read_databases(stores: dict[str, Store], result: ParseResult, empty: list[str]) -> None:
    annotations: list[tuple[str, Store]] = []
    library: Store | None = None
    for name, store in sorted(stores.items()):
        try:
            with database_copy(store.data, store.wal, store.shm) as connection:
                tables = tables_of(connection)
        except UnreadableDatabase as error:
            result.entries += 1
            result.problems.append(Problem(1, IN_MEMBER % {"name": name, "problem": error}))
            continue
        if ANNOTATIONS_TABLE in tables:
            annotations.append((name, store))
        elif LIBRARY_TABLE in tables:
            library = store
        elif is_kobo(tables):
            _add(result, parse_kobo(store.data), name, empty)
        else:
            result.entries += 1
            result.problems.append(Problem(1, IN_MEMBER % {"name": name, "problem": NOT_KOBO}))
    for name, store in annotations:
        if library is None:
            result.entries += 1
            result.problems.append(Problem(1, IN_MEMBER % {"name": name, "problem": APPLE_ALONE}))
            continue
        _add(result, parse_apple_books(store, library), name, empty)
