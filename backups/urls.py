from django.urls import path

from backups import views

urlpatterns = [path("status/", views.status, name="status")]
