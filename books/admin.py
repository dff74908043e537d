from django.contrib import admin
from django.http import HttpRequest

from books.models import Book, Highlight, Import


@admin.register(Book)
class BookAdmin(admin.ModelAdmin[Book]):
    list_display = ["title", "authors", "reader", "created"]
    list_filter = ["created"]
    search_fields = ["title", "authors", "reader__username"]
    list_select_related = ["reader"]
    readonly_fields = ["code", "key", "created"]
    raw_id_fields = ["reader"]


@admin.register(Highlight)
class HighlightAdmin(admin.ModelAdmin[Highlight]):
    list_display = ["short_text", "book", "reader", "kind", "embedding_status", "added_at"]
    list_filter = ["kind", "embedding_status", "embedding_model", "deleted_at"]
    search_fields = ["text", "note", "book__title", "reader__username"]
    list_select_related = ["book", "reader"]
    raw_id_fields = ["source_import"]
    # The vectors are hundreds of numbers: never rendered, not even on the change page.
    exclude = ["embedding", "english_embedding", "theme_embedding"]
    readonly_fields = [
        # A highlight moves to another book only with its book (a merge of books, which
        # moves its connections' books too), and never to another reader.
        "reader",
        "book",
        "code",
        "dedupe_key",
        "file_tags",  # what the last file listing its tags named (books.importing.enrich)
        "embedding_model",
        "embedding_status",
        "embedding_claimed_at",
        "embedding_error",
        "created",
        "updated",
    ]

    @admin.display(description="text")
    def short_text(self, obj: Highlight) -> str:
        return str(obj)


@admin.register(Import)
class ImportAdmin(admin.ModelAdmin[Import]):
    """A record of what happened, for staff to read: nothing is added, changed or deleted
    here. An import is made by its reader's upload (or `import_clippings`); its status and
    attempts belong to the worker that runs it (books.importing.background), and a status
    set by hand would hide a failure or start a sweep over again. Deleting the row would
    not be the app's "delete what this import added", which takes the highlights away
    into Recently deleted and keeps the import to bring them back: it would drop the
    report and the merges, leave every highlight, and lose that undo. The reader's report
    page is theirs alone (a 404 for staff), so no "View on site" either."""

    list_display = ["file_name", "reader", "status", "started_at", "finished_at"]
    list_filter = ["status", "started_at"]
    search_fields = ["file_name", "sha256", "reader__username"]
    list_select_related = ["reader"]
    view_on_site = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Import | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Import | None = None) -> bool:
        return False
