from django.urls import path

from books.importing import views

urlpatterns = [
    path("import/", views.import_upload, name="import"),
    path("import/too-large/", views.import_too_large, name="import_too_large"),
    path("imports/<uuid:code>/", views.import_report, name="import_report"),
    path("imports/<uuid:code>/progress/", views.import_progress_partial, name="import_progress"),
]
