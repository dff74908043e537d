from django.urls import path

from affinity import views

urlpatterns = [
    path("kindred/", views.kindred, name="kindred"),
    path("sharing/", views.sharing_settings, name="sharing_settings"),
    path("readers/<uuid:code>/", views.reader_profile, name="reader_profile"),
]
