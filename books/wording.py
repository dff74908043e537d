"""Messages stored in English, said in the reader's language when a page shows them.

An import's problems and failure (a KOReader file's unreadable Lua among them), an
embedding's waiting reason (the model's own, when it cannot load): the parsers and workers
that write them run without a reader's language (a parser is pure, a worker serves every
reader), and the record stays English for logs, the admin and the tests. Each such
message is built from a template with named placeholders, marked for the catalogue where
it is written (`gettext_noop`); `exogram.wording` matches a stored message back to its
template and says it in the active language. Here: which modules hold the templates.
"""

from types import ModuleType

from django.utils.translation import gettext

from books import tasks
from books.embedding import pipeline, spec
from books.importing import (
    apple_books,
    background,
    bookcision_json,
    clippings,
    devices,
    exogram_json,
    formats,
    kobo,
    koreader,
    lua_data,
    notebook_html,
    reader_books,
    readwise_csv,
    rich,
    services,
    upload,
)
from exogram.wording import StoredMessages

__all__ = ["import_failure", "translated"]


def _modules() -> list[ModuleType]:
    return [
        clippings, notebook_html, readwise_csv, bookcision_json, exogram_json, formats,
        koreader, lua_data, kobo, apple_books, devices, rich, services, upload, background,
        reader_books,
        pipeline, tasks, spec,
    ]  # fmt: skip


# The placeholders whose value is a message of its own, said in the reader's language too:
# a nested problem or error, a Lua token as a KOReader file wrote it (or what it was), a
# model's file and the fix of a model that cannot load.
# And those whose value is a number (a size in MB, "1.1"; a count of bytes, files or
# problems, "1,073,741,824"), said as the reader's language writes it.
_MESSAGES = StoredMessages(
    _modules,
    nested={"problem", "error", "found", "what", "fix"},
    numbers=frozenset({"size", "packed", "count", "limit", "upload"}),
    # Why a book named in a file was not added (books.importing.reader_books).
    lists=frozenset({"reasons"}),
)


def _templates() -> list[str]:
    return _MESSAGES.templates()


def translated(message: str) -> str:
    """The stored English message in the active language, or as stored."""
    return _MESSAGES.translated(message)


def import_failure(error: str) -> str:
    """Why an import failed, as its reader is told, in their language.

    A file's problem (what is wrong, and where) is said as stored; a file a parser raised
    on, in plain words. Anything else, an exception's or the database's own words among
    them, is the server's failure: the reader is told so. An exception's text or name never
    reaches the reader; it stays in Import.error for the admin and in the log.
    """
    template = _MESSAGES.template_of(error) if error else None
    if template is None or template == services.IMPORT_FAILED:
        return gettext(services.IMPORT_FAILED_ON_THE_SERVER)
    if template == background.IMPORT_UNREADABLE:
        return gettext(background.FILE_UNREADABLE)
    return translated(error)
