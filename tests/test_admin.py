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

    def test_a_highlight_keeps_its_book_and_reader_on_its_change_page(self, client: Client) -> None:
        # A highlight moved alone would leave its connections' books behind (a merge of
        # books moves both), or hand it to another reader.
        admin = User.objects.create_superuser("admin", password="x")
        book = Book.objects.create(reader=admin, title="Ficciones", key="ficciones")
        other = Book.objects.create(reader=admin, title="El Aleph", key="aleph")
        highlight = Highlight.objects.create(
            reader=admin, book=book, text="Tlön, Uqbar, Orbis Tertius", dedupe_key="k"
        )
        client.force_login(admin)
        url = reverse("admin:books_highlight_change", args=[highlight.pk])
        form = client.get(url).context["adminform"].form
        assert "book" not in form.fields
        assert "reader" not in form.fields
        data = {**form.initial, "book": other.pk, "kind": highlight.kind, "text": highlight.text}
        saved = client.post(url, {k: v for k, v in data.items() if v is not None})
        assert saved.status_code == 302  # saved: its vectors are not in the form either
        highlight.refresh_from_db()
        assert highlight.book_id == book.pk

    def test_it_refuses_a_reader_who_is_not_staff(self, alice_client: Client) -> None:
        response = alice_client.get(reverse("admin:books_highlight_changelist"))
        assert response.status_code == 302


@pytest.mark.django_db
class ImportAdminTests:
    """An import is a record of the past: staff read it, never add, edit or delete one."""

    @pytest.fixture
    def refused(self, alice: User) -> Import:
        return Import.objects.create(
            reader=alice,
            file_name="notes.pdf",
            sha256="",
            status=Import.Status.REFUSED,
            error="Not a file Exogram reads.",
        )

    def test_it_shows_an_import_with_no_field_to_edit_and_no_link_to_the_readers_page(
        self, admin_client: Client, refused: Import
    ) -> None:
        response = admin_client.get(reverse("admin:books_import_change", args=[refused.pk]))
        assert response.status_code == 200
        page = response.content.decode()
        assert "Not a file Exogram reads." in page
        assert 'name="_save"' not in page
        assert 'name="status"' not in page
        assert 'name="attempts"' not in page
        assert 'name="file_name"' not in page
        # The report is its reader's page alone: staff get a 404 there.
        assert refused.get_absolute_url() not in page
        assert "/r/" not in page  # Django's "View on site" redirect
        assert admin_client.get(refused.get_absolute_url()).status_code == 404

    def test_it_refuses_a_change_made_anyway(self, admin_client: Client, refused: Import) -> None:
        response = admin_client.post(
            reverse("admin:books_import_change", args=[refused.pk]),
            {"status": "done", "attempts": "0", "file_name": "x", "reader": refused.reader_id},
        )
        assert response.status_code == 403
        refused.refresh_from_db()
        assert (refused.status, refused.file_name) == (Import.Status.REFUSED, "notes.pdf")

    def test_it_adds_and_deletes_none(self, admin_client: Client, refused: Import) -> None:
        assert admin_client.get(reverse("admin:books_import_add")).status_code == 403
        delete = reverse("admin:books_import_delete", args=[refused.pk])
        assert admin_client.post(delete, {"post": "yes"}).status_code == 403
        listing = admin_client.get(reverse("admin:books_import_changelist")).content.decode()
        assert "delete_selected" not in listing
        assert reverse("admin:books_import_add") not in listing
        assert Import.objects.filter(pk=refused.pk).exists()
