from django.contrib import admin
from django.urls import include, path

from exogram.favicon import favicon
from exogram.health import healthz

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("favicon.ico", favicon, name="favicon"),
    path("", include("accounts.urls")),
    path("", include("books.urls")),
    path("", include("books.search.urls")),
    path("", include("books.exporting.urls")),
    path("", include("affinity.urls")),
    path("", include("api.urls")),
    path("", include("review.urls")),
    path("", include("backups.urls")),
]

# JSON under /api/, Django's pages elsewhere (exogram/errors.py).
handler400 = "exogram.errors.bad_request"
handler403 = "exogram.errors.permission_denied"
handler404 = "exogram.errors.page_not_found"
handler500 = "exogram.errors.server_error"
