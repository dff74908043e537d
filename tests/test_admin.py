import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.models import Book, Highlight, Import


@pytest.mark.django_db
class AdminTests:
    def test_it_loads_every_page_for_a_superuser(self, client: Client) -> None:
        admin = User.objects.create_superuser("admin", password="x")
        book = Book.objects.create(reader=admin, title="Ficciones", key="ficciones")
        highlight = Highlight.objects.create(
            reader=admin,
            book=book,
            text="El jardín de senderos que se bifurcan",
            dedupe_key="k",
            embedding=[0.05] * 384,
        )
        an_import = Import.objects.create(reader=admin, file_name="My Clippings.txt", sha256="0")
        client.force_login(admin)
        for model, obj in [("book", book), ("highlight", highlight), ("import", an_import)]:
            listing = client.get(reverse(f"admin:books_{model}_changelist"))
            assert listing.status_code == 200
            change = client.get(reverse(f"admin:books_{model}_change", args=[obj.pk]))
            assert change.status_code == 200
        listing = client.get(reverse("admin:books_highlight_changelist"))
        # vectors are never rendered
        assert b"0.05" not in listing.content
        assert (
            b"0.05, 0.05"
            not in client.get(reverse("admin:books_highlight_change", args=[highlight.pk])).content
        )

    def test_it_refuses_a_reader_who_is_not_staff(self, alice_client: Client) -> None:
        response = alice_client.get(reverse("admin:books_highlight_changelist"))
        assert response.status_code == 302
