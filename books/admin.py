from django.contrib import admin

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
    raw_id_fields = ["reader", "book", "source_import"]
    # The vector is 384 numbers: never rendered, not even on the change page.
    exclude = ["embedding", "english_embedding"]
    readonly_fields = [
        "code",
        "dedupe_key",
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
    list_display = ["file_name", "reader", "status", "started_at", "finished_at"]
    list_filter = ["status", "started_at"]
    search_fields = ["file_name", "sha256", "reader__username"]
    list_select_related = ["reader"]
    raw_id_fields = ["reader"]
    readonly_fields = ["code", "sha256", "counts", "problems", "error", "started_at", "finished_at"]
