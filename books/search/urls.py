from django.urls import path

from books.search.views import search, search_json

urlpatterns = [
    path("search/", search, name="search"),
    path("search.json", search_json, name="search_json"),
]
