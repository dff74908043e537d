from django.urls import path

from books import views

urlpatterns = [
    path("", views.home, name="home"),
    path("library/", views.library, name="library"),
    path("books/<uuid:code>/", views.book, name="book"),
    path("highlights/<uuid:code>/", views.highlight, name="highlight"),
    path("connections/", views.connections, name="connections"),
    path("progress/", views.library_progress_partial, name="library_progress"),
    path("import/", views.import_upload, name="import"),
    path("imports/<uuid:code>/", views.import_report, name="import_report"),
    path("imports/<uuid:code>/progress/", views.import_progress_partial, name="import_progress"),
]
