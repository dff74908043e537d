from django.urls import path

from api import views

urlpatterns = [
    path("api/search/", views.search, name="api_search"),
    path("api/highlights/<str:code>/", views.highlight, name="api_highlight"),
    path("api/highlights/<str:code>/connections/", views.connections, name="api_connections"),
    path("api/books/", views.books, name="api_books"),
    path("api/books/<str:code>/highlights/", views.book_highlights, name="api_book_highlights"),
    path("api/schema/", views.schema, name="api_schema"),
    path("settings/api-tokens/", views.tokens, name="api_tokens"),
    path("settings/api-tokens/<uuid:code>/revoke/", views.token_revoke, name="api_token_revoke"),
]
