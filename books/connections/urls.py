from django.urls import path

from books.connections import views

urlpatterns = [
    path("connections/", views.connections, name="connections"),
]
