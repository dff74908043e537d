from django.urls import include, path, register_converter

from books import book_merging, deleting, views
from books.converters import TagNameConverter
from books.library_map import views as map_views

register_converter(TagNameConverter, "tagname")

urlpatterns = [
    path("", views.home, name="home"),
    path("library/", views.library, name="library"),
    path("map/", map_views.semantic_map, name="map"),
    path("map.json", map_views.map_data, name="map_data"),
    path("map/points/<int:index>/", map_views.map_point_detail, name="map_point"),
    path("tags/", views.tags, name="tags"),
    path("tags/<tagname:name>/", views.tag, name="tag"),
    path("tags/<tagname:name>/rename/", views.tag_rename_view, name="tag_rename"),
    path("tags/<tagname:name>/merge/", views.tag_merge_view, name="tag_merge"),
    path("tags/<tagname:name>/delete/", views.tag_delete_view, name="tag_delete"),
    path("books/<uuid:code>/", views.book, name="book"),
    path("books/<uuid:code>/delete/", deleting.book_delete, name="book_delete"),
    path("books/<uuid:code>/bring-back/", deleting.book_bring_back, name="book_bring_back"),
    path("books/<uuid:code>/words/", views.book_words, name="book_words"),
    path("books/<uuid:code>/same-as/", book_merging.book_merge_choose, name="book_merge_choose"),
    path(
        "books/<uuid:code>/same-as/<uuid:other>/",
        book_merging.book_merge_confirm,
        name="book_merge_confirm",
    ),
    path("books/<uuid:code>/merge/", book_merging.book_merge, name="book_merge"),
    path("words/", views.words, name="words"),
    path("highlights/<uuid:code>/", views.highlight, name="highlight"),
    path("highlights/<uuid:code>/note/", views.highlight_note, name="highlight_note"),
    path("highlights/<uuid:code>/tags/", views.highlight_tag_add, name="highlight_tag_add"),
    path(
        "highlights/<uuid:code>/tags/<int:tag_id>/remove/",
        views.highlight_tag_remove,
        name="highlight_tag_remove",
    ),
    path(
        "highlights/<uuid:code>/favourite/", views.highlight_favourite, name="highlight_favourite"
    ),
    path("highlights/<uuid:code>/delete/", views.highlight_remove, name="highlight_delete"),
    path("highlights/<uuid:code>/undo/", views.highlight_undo_delete, name="highlight_undo"),
    path(
        "highlights/<uuid:code>/bring-back/",
        deleting.highlight_bring_back,
        name="highlight_bring_back",
    ),
    path("imports/<uuid:code>/delete/", deleting.import_delete, name="import_delete"),
    path("imports/<uuid:code>/bring-back/", deleting.import_bring_back, name="import_bring_back"),
    path("deleted/", deleting.deleted, name="deleted"),
    path(
        "deleted/<uuid:code>/bring-back/", deleting.deletion_bring_back, name="deletion_bring_back"
    ),
    path("progress/", views.library_progress_partial, name="library_progress"),
    # Each capability serves its own pages.
    path("", include("books.connections.urls")),
    path("", include("books.importing.urls")),
]
