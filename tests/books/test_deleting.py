"""Deleting a whole book or what an import added, and bringing deleted highlights back."""

import re
from datetime import timedelta
from typing import Any
from uuid import uuid4

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import override

from accounts.models import User
from affinity.models import ReaderCentroid
from books.deleting import deleted_phrase
from books.embedding.pipeline import highlights_embed
from books.importing.services import clippings_import
from books.models import Book, Connection, Highlight, Import
from books.services import DeleteCount, highlight_delete, highlight_note_update
from books.tasks import purge_deleted
from tests.books.kindle import BORGES, MEMORY_LIBRARY, Entry, clippings_file
from tests.books.library import listed_books

EVIL = "<script>alert(1)</script> Evil Book"


def _borges(reader: User) -> Book:
    return Book.objects.get(reader=reader, title="Ficciones")


@pytest.fixture
def first_import(alice: User) -> Import:
    return clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")


@pytest.fixture
def evil_import(alice: User, first_import: Import) -> Import:
    data = clippings_file(
        Entry(EVIL, "A passage of a book that was never read.", location="10-11"),
        Entry(EVIL, "Another passage of that wrong book.", location="20-21"),
        Entry(EVIL, "A note typed on the wrong book.", kind="Note", location="5"),
        # One more version of a highlight the first import brought: merged into it.
        *MEMORY_LIBRARY[:1],
    )
    return clippings_import(reader=alice, data=data, file_name="wrong.txt")


def _alive(reader: User) -> set[str]:
    return {h.text or h.note for h in Highlight.objects.alive().filter(reader=reader)}


@pytest.mark.django_db
class BookDeleteTests:
    def test_it_says_what_goes_before_it_deletes(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        page = alice_client.get(_borges(alice).get_absolute_url()).content.decode()
        assert "Delete this book" in page
        # Three passages, one of them with the note "Read this twice." attached: the note
        # goes with its highlight, said so, and never as "0 notes" beside it.
        assert (
            "This deletes everything of this book: 3 highlights and the note on 1 of them, "
            "with their tags, favourites and connections." in page
        )
        assert "0 notes" not in page
        assert f'from <a href="{reverse("deleted")}">Recently deleted</a>.' in page

    def test_it_says_what_goes_in_spanish(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        book = _borges(alice)
        page = alice_client.get(book.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="es")
        assert (
            "Esto borra todo lo de este libro: 3 subrayados y la nota de 1 de ellos, "
            "con sus etiquetas, favoritos y conexiones." in page.content.decode()
        )
        assert f'<a href="{reverse("deleted")}">Borrados hace poco</a>' in page.content.decode()

    def test_it_deletes_every_highlight_and_note_and_undo_brings_them_back(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        book = _borges(alice)
        highlight_delete(highlight=book.highlights.get(location_start=380))  # deleted before
        before = _alive(alice)
        response = alice_client.post(reverse("book_delete", args=[book.code]))
        assert response["Location"] == reverse("library")
        library = alice_client.get(reverse("library"))
        assert book.title not in [title for title, _ in listed_books(library.content)]
        # One message for one delete: the undo's, which says what went (the passage deleted
        # before is not in it, the note on "To think is to forget" is).
        assert 'class="messages"' not in library.content.decode()
        assert (
            "“Ficciones” deleted: 2 highlights and the note on 1 of them."
            in library.content.decode()
        )
        assert not book.highlights.alive().exists()
        assert alice_client.get(reverse("library")).content.decode().count("Undo") == 0
        undo = library.content.decode().split('class="undo"')[1].split("</form>")[0]
        at = undo.split('name="at" value="')[1].split('"')[0]
        alice_client.post(reverse("book_bring_back", args=[book.code]), {"at": at})
        # What the book delete took is back; the highlight deleted before it is not.
        assert _alive(alice) == before
        assert book.highlights.get(location_start=380).deleted_at is not None

    def test_a_reimport_does_not_bring_a_deleted_book_back_and_the_book_page_can(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        book = _borges(alice)
        alice_client.post(reverse("book_delete", args=[book.code]))
        again = clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt"
        )
        # The three passages, and the note that was on one of them: not back as a note.
        assert again.counts["deleted_skipped"] == 4
        assert again.counts["standalone_notes"] == 0
        assert not book.highlights.alive().exists()
        report = alice_client.get(reverse("import_report", args=[again.code])).content.decode()
        assert reverse("deleted") in report
        page = alice_client.get(book.get_absolute_url()).content.decode()
        assert "You deleted this book" in page
        alice_client.post(reverse("book_bring_back", args=[book.code]))
        assert book.highlights.alive().count() == 3

    def test_connections_of_a_deleted_book_leave_every_page(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        highlights_embed(
            ids=list(Highlight.objects.filter(reader=alice).values_list("pk", flat=True))
        )
        book = _borges(alice)
        funes = book.highlights.get(location_start=412)
        other = Highlight.objects.alive().filter(reader=alice).exclude(book=book).first()
        assert other is not None
        low, high = sorted((funes, other), key=lambda h: h.pk)
        Connection.objects.update_or_create(
            highlight_a=low, highlight_b=high,
            defaults={"reader": alice, "distance": 0.1, "probability": 0.9,
                      "same_probability": 0.5, "strength": Connection.Strength.RELATED,
                      "embedding_model": funes.embedding_model},
        )  # fmt: skip
        assert (
            "To think is to forget" in alice_client.get(other.get_absolute_url()).content.decode()
        )
        alice_client.post(reverse("book_delete", args=[book.code]))
        for url in (other.get_absolute_url(), reverse("connections"), reverse("home")):
            assert "To think is to forget" not in alice_client.get(url).content.decode(), url

    def test_it_refreshes_the_readers_centroid(
        self,
        alice: User,
        first_import: Import,
        alice_client: Client,
        django_capture_on_commit_callbacks: Any,
    ) -> None:
        highlights_embed(
            ids=list(Highlight.objects.filter(reader=alice).values_list("pk", flat=True))
        )
        ReaderCentroid.objects.filter(reader=alice).update(refresh_queued_at=None)
        with django_capture_on_commit_callbacks(execute=True):
            alice_client.post(reverse("book_delete", args=[_borges(alice).code]))
        centroid = ReaderCentroid.objects.get(reader=alice)
        assert (
            centroid.highlight_count
            == Highlight.objects.alive()
            .filter(reader=alice, kind="highlight", is_word=False)
            .exclude(book=_borges(alice))
            .count()
        )


class DeletedPhraseTests:
    def test_it_groups_thousands_and_says_one_in_the_singular(self) -> None:
        phrase = deleted_phrase(DeleteCount(highlights=1049, notes=1, with_notes=0))
        assert phrase == "1,049 highlights and 1 standalone note"
        assert deleted_phrase(DeleteCount(highlights=1, notes=110938, with_notes=0)) == (
            "1 highlight and 110,938 standalone notes"
        )

    @pytest.mark.parametrize(
        ("highlights", "notes", "with_notes", "phrase"),
        [
            (29, 0, 0, "29 highlights"),
            (29, 0, 6, "29 highlights and the notes on 6 of them"),
            (29, 0, 1, "29 highlights and the note on 1 of them"),
            (1, 0, 1, "1 highlight and its note"),
            (3, 0, 3, "3 highlights and their notes"),
            (29, 2, 6, "29 highlights and the notes on 6 of them, and 2 standalone notes"),
            (0, 2, 0, "2 standalone notes"),
        ],
    )
    def test_the_notes_on_the_highlights_go_with_them(
        self, highlights: int, notes: int, with_notes: int, phrase: str
    ) -> None:
        counts = DeleteCount(highlights=highlights, notes=notes, with_notes=with_notes)
        assert deleted_phrase(counts) == phrase

    def test_it_says_it_in_spanish(self) -> None:
        with override("es"):
            phrase = deleted_phrase(DeleteCount(highlights=1049, notes=0, with_notes=0))
            assert phrase == "1\xa0049 subrayados"
            assert deleted_phrase(DeleteCount(highlights=1, notes=1, with_notes=0)) == (
                "1 subrayado y 1 nota suelta"
            )
            assert deleted_phrase(DeleteCount(highlights=29, notes=2, with_notes=6)) == (
                "29 subrayados y las notas de 6 de ellos, y 2 notas sueltas"
            )
            assert deleted_phrase(DeleteCount(highlights=1, notes=0, with_notes=1)) == (
                "1 subrayado y su nota"
            )


@pytest.mark.django_db
class ImportDeleteTests:
    def test_it_deletes_only_what_the_import_added_and_nobody_changed(
        self, alice: User, evil_import: Import, alice_client: Client
    ) -> None:
        noted = Highlight.objects.get(reader=alice, text__startswith="Another passage")
        highlight_note_update(highlight=noted, note="Keep this, I wrote it.")
        report = alice_client.get(reverse("import_report", args=[evil_import.code]))
        page = report.content.decode()
        assert (
            "This deletes what this import added that nothing has changed since: 1 highlight and 1 "
            "standalone note, with their tags, favourites and connections." in page
        )
        assert "1 highlight it added stays" in page
        assert f'from this page or from <a href="{reverse("deleted")}">Recently deleted</a>.' in (
            page
        )
        alice_client.post(reverse("import_delete", args=[evil_import.code]))
        alive = _alive(alice)
        assert "A passage of a book that was never read." not in alive
        assert "A note typed on the wrong book." not in alive
        assert "Another passage of that wrong book." in alive
        # What the first import brought is untouched, the highlight this one merged into too.
        assert {e.text for e in MEMORY_LIBRARY if e.kind == "Highlight"} <= alive

    def test_it_says_the_notes_on_its_highlights_go_with_them(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        report = alice_client.get(reverse("import_report", args=[first_import.code]))
        page = report.content.decode()
        # Five passages; "Read this twice." is a note on one of them, not a standalone one.
        assert (
            "This deletes what this import added that nothing has changed since: 5 highlights and "
            "the note on 1 of them, with their tags" in page
        )
        assert "0 notes" not in page
        response = alice_client.post(reverse("import_delete", args=[first_import.code]))
        after = alice_client.get(response["Location"]).content.decode()
        assert "Deleted what this import added: 5 highlights and the note on 1 of them." in after

    def test_a_highlight_a_later_import_added_to_stays(
        self, alice: User, alice_client: Client
    ) -> None:
        short = Entry(BORGES, "To think is to forget differences,", location="412-413")
        first = clippings_import(reader=alice, data=clippings_file(short), file_name="a.txt")
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY[:1]), file_name="b.txt")
        alice_client.post(reverse("import_delete", args=[first.code]))
        assert "To think is to forget differences, to generalize, to abstract." in _alive(alice)

    def test_the_report_brings_back_what_it_deleted(
        self, alice: User, evil_import: Import, alice_client: Client
    ) -> None:
        before = _alive(alice)
        alice_client.post(reverse("import_delete", args=[evil_import.code]))
        assert _alive(alice) != before
        page = alice_client.get(reverse("import_report", args=[evil_import.code])).content.decode()
        # Two passages and a standalone note: said apart, not "3 highlights".
        said = "Deleted what this import added: 2 highlights and 1 standalone note."
        assert said in page
        response = alice_client.post(
            reverse("import_bring_back", args=[evil_import.code]), follow=True
        )
        assert _alive(alice) == before
        assert "Brought back 2 highlights and 1 standalone note." in response.content.decode()

    def test_it_says_one_highlight_in_the_singular(self, alice: User, alice_client: Client) -> None:
        one = clippings_import(
            reader=alice, data=clippings_file(*MEMORY_LIBRARY[:1]), file_name="one.txt"
        )
        url = reverse("import_report", args=[one.code])
        page = alice_client.get(url).content.decode()
        assert "1 highlight, with its tags, favourite mark and connections." in page
        spanish = alice_client.get(url, headers={"Accept-Language": "es"}).content.decode()
        assert "1 subrayado, con sus etiquetas, su marca de favorito y sus conexiones." in spanish
        alice_client.post(reverse("import_delete", args=[one.code]))
        spanish = alice_client.get(url, headers={"Accept-Language": "es"}).content.decode()
        assert "Borrado lo que añadió esta importación: 1 subrayado." in spanish
        english = alice_client.get(url).content.decode()
        assert "Deleted what this import added: 1 highlight." in english
        assert "this import added is deleted" not in english


@pytest.mark.django_db
class RecentlyDeletedTests:
    def test_it_lists_deleted_highlights_and_brings_one_back(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        think = Highlight.objects.get(reader=alice, location_start=412, kind="highlight")
        highlight_delete(highlight=think)
        page = alice_client.get(reverse("deleted")).content.decode()
        assert "To think is to forget" in page
        response = alice_client.post(
            reverse("highlight_bring_back", args=[think.code]), {"next": "deleted"}
        )
        assert response["Location"] == reverse("deleted")
        think.refresh_from_db()
        assert think.deleted_at is None
        assert "To think is to forget" not in alice_client.get(reverse("deleted")).content.decode()

    def test_bob_sees_nothing_of_alices(
        self, alice: User, first_import: Import, bob_client: Client
    ) -> None:
        think = Highlight.objects.get(reader=alice, location_start=412, kind="highlight")
        highlight_delete(highlight=think)
        assert "To think is to forget" not in bob_client.get(reverse("deleted")).content.decode()


def _without_tokens(page: str) -> str:
    return re.sub(r'(csrfmiddlewaretoken" value="|"X-CSRFToken": ")[^"]+', r"\1", page)


def _account_menu(page: str) -> str:
    return page.split('<div class="account-menu">', 1)[1].split("</div>", 1)[0]


@pytest.mark.django_db
class RecentlyDeletedLinkTests:
    def test_the_account_menu_leads_there_from_every_page_with_nothing_deleted(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        think = Highlight.objects.get(reader=alice, location_start=412, kind="highlight")
        link = f'<a href="{reverse("deleted")}">Recently deleted</a>'
        for url in (
            reverse("home"),
            reverse("library"),
            reverse("settings"),
            reverse("import"),
            reverse("import_report", args=[first_import.code]),
            _borges(alice).get_absolute_url(),
            think.get_absolute_url(),
            reverse("deleted"),
        ):
            assert link in _account_menu(alice_client.get(url).content.decode()), url

    def test_the_library_leads_there_and_says_it_in_spanish(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        main = alice_client.get(reverse("library")).content.decode().split('<main id="content">')[1]
        assert f'<a href="{reverse("deleted")}">Recently deleted</a>' in main
        page = alice_client.get(reverse("library"), HTTP_ACCEPT_LANGUAGE="es").content.decode()
        link = f'<a href="{reverse("deleted")}">Borrados hace poco</a>'
        assert link in _account_menu(page)
        assert link in page.split('<main id="content">')[1]

    def test_a_book_page_with_deleted_highlights_always_links_to_the_whole_list(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        book = _borges(alice)
        highlight_delete(highlight=book.highlights.get(location_start=380))
        page = alice_client.get(book.get_absolute_url()).content.decode()
        deleted_part = page.split('id="recently-deleted"')[1].split("</details>")[0]
        assert f'href="{reverse("deleted")}"' in deleted_part


@pytest.mark.django_db
class DeletedBookPageTests:
    """A deleted book's address: it says the book was deleted, when and what, with Bring
    back as its action; not an empty book that offers downloads of nothing and a merge."""

    def test_it_is_kept_until_the_last_of_its_highlights_goes(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        # The page gave the day of the first to go; the book goes with the last (purging).
        book = _borges(alice)
        alice_client.post(reverse("book_delete", args=[book.code]))
        deleted = book.highlights.exclude(deleted_at=None).order_by("pk")
        newest = timezone.now() - timedelta(days=1)
        for days, highlight in enumerate(deleted, start=1):
            Highlight.objects.filter(pk=highlight.pk).update(
                deleted_at=newest - timedelta(days=days - 1) * 5
            )
        kept_for = timedelta(days=settings.EXOGRAM_DELETED_DAYS)
        day = date_format(timezone.localtime(newest + kept_for), "DATE_FORMAT")
        page = " ".join(alice_client.get(book.get_absolute_url()).content.decode().split())
        assert f"The book is kept until {day}, then removed for good." in page

    def test_it_says_the_book_was_deleted_and_brings_it_back(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        book = _borges(alice)
        alice_client.post(reverse("book_delete", args=[book.code]))
        alice_client.get(reverse("library"))  # where the delete leads, with its undo
        at = book.highlights.exclude(deleted_at=None).values_list("deleted_at", flat=True)[0]
        when = date_format(timezone.localtime(at), "DATETIME_FORMAT")
        response = alice_client.get(book.get_absolute_url())
        # 404 as a deleted highlight's page: not in the library now, back with a click.
        assert response.status_code == 404
        page = response.content.decode()
        assert "You deleted this book" in page
        assert f"You deleted it on {when}: 3 highlights and the note on 1 of them." in page
        assert "It stays out" not in page
        assert "They stay out of your library" in page
        assert "0 highlights" not in page
        assert "Recently deleted:" not in page  # not folded away in a closed box
        assert reverse("book_export", args=[book.code]) not in page
        assert reverse("book_merge_choose", args=[book.code]) not in page
        assert "Delete this book" not in page
        main = page.split('<main id="content">')[1]
        bring_back = reverse("book_bring_back", args=[book.code])
        # The main action: the first form of the page, a plain (not secondary) button.
        first_form = main.split("<form")[1]
        assert f'action="{bring_back}"' in first_form
        assert '<button type="submit">Bring back this book</button>' in first_form
        response = alice_client.post(bring_back)
        assert response["Location"] == book.get_absolute_url()
        page = alice_client.get(book.get_absolute_url()).content.decode()
        assert "You deleted this book" not in page
        assert reverse("book_export", args=[book.code]) in page

    def test_a_book_whose_highlights_went_one_by_one_says_so(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        book = _borges(alice)
        for highlight in book.highlights.alive():
            highlight_delete(highlight=highlight)
        page = alice_client.get(book.get_absolute_url()).content.decode()
        assert "You deleted every highlight of this book" in page
        assert "Deleted one by one, the last on " in page
        assert reverse("book_export", args=[book.code]) not in page

    def test_it_says_it_in_spanish(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        book = _borges(alice)
        alice_client.post(reverse("book_delete", args=[book.code]))
        page = alice_client.get(book.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="es")
        assert "Borraste este libro" in page.content.decode()
        assert "Recuperar este libro" in page.content.decode()

    def test_bob_gets_the_plain_404(
        self, alice: User, first_import: Import, alice_client: Client, bob_client: Client
    ) -> None:
        book = _borges(alice)
        alice_client.post(reverse("book_delete", args=[book.code]))
        response = bob_client.get(book.get_absolute_url())
        assert response.status_code == 404
        assert "Ficciones" not in response.content.decode()

    def test_anonymous_is_sent_to_sign_in(self, alice: User, first_import: Import) -> None:
        book = _borges(alice)
        assert Client().get(book.get_absolute_url()).status_code == 302


@pytest.mark.django_db
class TitleEndingASentenceTests:
    """A title that ends in a full stop ("…Cutting-Edge Content.") never gets a second one
    from the sentence around it."""

    TITLE = "How to Write Cutting-Edge Content."

    def test_the_deleted_highlight_page_has_no_double_stop(
        self, alice: User, alice_client: Client
    ) -> None:
        clippings_import(
            reader=alice,
            data=clippings_file(Entry(self.TITLE, "Write the sentence you would read.")),
            file_name="c.txt",
        )
        highlight = Highlight.objects.get(reader=alice)
        highlight_delete(highlight=highlight)
        for language in ("en", "es"):
            page = alice_client.get(highlight.get_absolute_url(), HTTP_ACCEPT_LANGUAGE=language)
            text = re.sub(r"<[^>]+>", "", page.content.decode())
            assert "Content.." not in text, language
            assert "Content.”." not in text, language
            assert "Content." in text


@pytest.mark.django_db
class DeletedHighlightPageTests:
    """A deleted highlight's own address: its reader learns it was deleted and can bring it
    back; anyone else gets the plain 404 and learns nothing."""

    def _think(self, alice: User) -> Highlight:
        return Highlight.objects.get(reader=alice, location_start=412, kind="highlight")

    def test_its_reader_learns_when_and_brings_it_back(
        self, alice: User, first_import: Import
    ) -> None:
        think = self._think(alice)
        highlight_delete(highlight=think)
        think.refresh_from_db()
        assert think.deleted_at is not None
        when = date_format(timezone.localtime(think.deleted_at), "DATETIME_FORMAT")
        client = Client(enforce_csrf_checks=True)
        client.force_login(alice)
        response = client.get(think.get_absolute_url())
        # 404: not here now; a 410 would say gone for good, and it comes back with a click.
        assert response.status_code == 404
        page = response.content.decode()
        assert "You deleted this highlight" in page
        assert "Nothing here" not in page
        assert f"</a> on {when}. It stays out of your library" in page
        assert "It is kept until " in page
        assert "To think is to forget differences" in page
        assert f'<a href="{reverse("deleted")}">Recently deleted</a>' in page
        bring_back = reverse("highlight_bring_back", args=[think.code])
        assert f'action="{bring_back}"' in page
        # The form's own token, as the browser would send it: without one, it is refused.
        token = page.split(f'action="{bring_back}"')[1].split('name="csrfmiddlewaretoken" value="')[
            1
        ]
        assert client.post(bring_back).status_code == 403
        restored = client.post(bring_back, {"csrfmiddlewaretoken": token.split('"')[0]})
        assert restored["Location"] == think.get_absolute_url()
        assert client.get(think.get_absolute_url()).status_code == 200

    def test_it_says_it_in_spanish(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        think = self._think(alice)
        highlight_delete(highlight=think)
        page = alice_client.get(think.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="es")
        assert "Borraste este subrayado" in page.content.decode()
        assert "Recuperar" in page.content.decode()

    def test_bob_gets_the_plain_404_and_learns_nothing(
        self, alice: User, first_import: Import, bob_client: Client
    ) -> None:
        think = self._think(alice)
        highlight_delete(highlight=think)
        response = bob_client.get(think.get_absolute_url())
        never = bob_client.get(reverse("highlight", args=[uuid4()]))
        assert response.status_code == never.status_code == 404
        # The very page of a code that never existed (but for the CSRF tokens, new each time).
        assert _without_tokens(response.content.decode()) == _without_tokens(never.content.decode())
        assert "Nothing here" in response.content.decode()
        think.refresh_from_db()
        assert think.deleted_at is not None

    def test_once_removed_for_good_it_is_the_plain_404(
        self, alice: User, first_import: Import, alice_client: Client
    ) -> None:
        think = self._think(alice)
        highlight_delete(highlight=think)
        Highlight.objects.filter(pk=think.pk).update(
            deleted_at=timezone.now() - timedelta(days=365)
        )
        purge_deleted()
        response = alice_client.get(think.get_absolute_url())
        assert response.status_code == 404
        assert "Nothing here" in response.content.decode()
        assert "You deleted this highlight" not in response.content.decode()


@pytest.mark.django_db
class OwnershipTests:
    @pytest.mark.parametrize("name", ["book_delete", "book_bring_back"])
    def test_bob_gets_404_for_alices_book(
        self, alice: User, first_import: Import, bob_client: Client, name: str
    ) -> None:
        book = _borges(alice)
        assert bob_client.post(reverse(name, args=[book.code])).status_code == 404
        assert book.highlights.alive().count() == 3

    @pytest.mark.parametrize("name", ["import_delete", "import_bring_back"])
    def test_bob_gets_404_for_alices_import(
        self, alice: User, evil_import: Import, bob_client: Client, name: str
    ) -> None:
        before = _alive(alice)
        assert bob_client.post(reverse(name, args=[evil_import.code])).status_code == 404
        assert _alive(alice) == before

    def test_bob_gets_404_for_alices_deleted_highlight(
        self, alice: User, first_import: Import, bob_client: Client
    ) -> None:
        think = Highlight.objects.get(reader=alice, location_start=412, kind="highlight")
        highlight_delete(highlight=think)
        response = bob_client.post(reverse("highlight_bring_back", args=[think.code]))
        assert response.status_code == 404
        think.refresh_from_db()
        assert think.deleted_at is not None

    @pytest.mark.parametrize(
        "name", ["book_delete", "book_bring_back", "import_delete", "import_bring_back"]
    )
    def test_they_are_post_only_and_need_a_login(
        self, alice: User, evil_import: Import, alice_client: Client, client: Client, name: str
    ) -> None:
        code = evil_import.code if name.startswith("import") else _borges(alice).code
        assert alice_client.get(reverse(name, args=[code])).status_code == 405
        response = client.post(reverse(name, args=[code]))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
