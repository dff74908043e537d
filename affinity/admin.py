from django.contrib import admin

from affinity.models import ReaderCentroid, SharingProfile


@admin.register(SharingProfile)
class SharingProfileAdmin(admin.ModelAdmin[SharingProfile]):
    list_display = ["reader", "display_name", "discoverable", "updated"]
    list_filter = ["discoverable"]
    search_fields = ["display_name", "reader__username"]
    list_select_related = ["reader"]
    raw_id_fields = ["reader"]
    # Changed here, sharing would skip the centroid refresh that sharing_update makes;
    # the reader changes it on their sharing page.
    readonly_fields = ["code", "discoverable", "display_name", "excluded_books", "updated"]


@admin.register(ReaderCentroid)
class ReaderCentroidAdmin(admin.ModelAdmin[ReaderCentroid]):
    list_display = ["reader", "highlight_count", "embedding_model", "refresh_queued_at", "updated"]
    list_filter = ["embedding_model"]
    search_fields = ["reader__username"]
    list_select_related = ["reader"]
    # The vector is 384 numbers: never rendered.
    exclude = ["vector"]
    readonly_fields = [
        "reader",
        "highlight_count",
        "embedding_model",
        "refresh_queued_at",
        "updated",
    ]
