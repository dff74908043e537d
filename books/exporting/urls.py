from django.urls import path

from books.exporting import views

urlpatterns = [
    path("export/", views.library_download, name="library_export"),
    path("books/<uuid:code>/export/", views.book_download, name="book_export"),
]
