"""Reads about imports that pages reuse."""

from django.db.models import QuerySet

from books.models import HighlightMerge, Import


def merges_of(the_import: Import) -> QuerySet[HighlightMerge]:
    """What an import merged into which highlight, in the order it merged them.

    Only highlights the reader still has: a deleted one has no page to show it on.
    """
    return (
        HighlightMerge.objects.filter(source_import=the_import, highlight__deleted_at__isnull=True)
        .select_related("highlight", "highlight__book")
        .order_by("id")
    )
