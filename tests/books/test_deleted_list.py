"""Recently deleted (/deleted/), one row per delete: a book deleted whole and what an import
added are one group each, brought back together or one by one; a highlight deleted on its
own is a row of its own."""

import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books import deleted_list
from books.importing.services import clippings_import
from books.models import Book, Deletion, Highlight, Import
from books.services import highlight_delete
from tests.books.kindle import BORGES, MEMORY_LIBRARY, Entry, clippings_file

WRONG = "Wrong Book"


def _import(reader: User, *entries: Entry, name: str = "c.txt") -> Import:
    return clippings_import(reader=reader, data=clippings_file(*entries), file_name=name)


def _borges(reader: User) -> Book:
    return Book.objects.get(reader=reader, title="Ficciones")


def _wrong_entries(count: int) -> list[Entry]:
    return [
        Entry(WRONG, f"Passage number {n} of a book that was never read.", location=f"{n * 10}")
        for n in range(1, count + 1)
    ]


def _rows(page: str) -> list[str]:
    """The list's top-level rows, as text."""
    if '<ul class="deleted-list">' not in page:
        return []
    listed = page.split('<ul class="deleted-list">', 1)[1]
    rows, depth, current = [], 0, ""
    for part in re.split(r"(<li[ >]|</li>)", listed):
        if part.startswith("<li"):
            depth += 1
        if depth:
            current += part
        if part == "</li>":
            depth -= 1
            if depth == 0:
                rows.append(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", current)).strip())
                current = ""
    return rows


def _deleted_page(client: Client, **query: Any) -> str:
    return client.get(reverse("deleted"), query).content.decode()


def _alive(reader: User) -> int:
    return Highlight.objects.alive().filter(reader=reader).count()


@pytest.mark.django_db
class DeletedGroupTests:
    def test_a_book_deleted_whole_is_one_row_brought_back_all_at_once(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *MEMORY_LIBRARY)
        before = _alive(alice)
        book = _borges(alice)
        alice_client.post(reverse("book_delete", args=[book.code]))
        rows = _rows(_deleted_page(alice_client))
        assert len(rows) == 1
        assert rows[0].startswith("Ficciones 3 highlights · deleted ")
        assert "kept until " in rows[0]
        assert "Bring back all" in rows[0]
        # Each highlight can still be brought back on its own, inside the group.
        inside = rows[0].split("Bring back one by one", 1)[1]
        assert inside.count("Bring back") == 3
        deletion = Deletion.objects.get(reader=alice)
        assert deletion.kind == Deletion.Kind.BOOK
        assert deletion.book == book
        response = alice_client.post(reverse("deletion_bring_back", args=[deletion.code]))
        assert response["Location"] == reverse("deleted")
        assert _alive(alice) == before
        assert _rows(_deleted_page(alice_client)) == []
        # Every highlight came back: the record of the delete goes with the last of them.
        assert not Deletion.objects.filter(reader=alice).exists()

    def test_what_an_import_added_is_one_row_over_every_book(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *MEMORY_LIBRARY)
        wrong = _import(
            alice,
            *_wrong_entries(3),
            Entry(BORGES, "A passage Borges never wrote, imported by mistake.", location="900"),
            name="wrong.txt",
        )
        alice_client.post(reverse("import_delete", args=[wrong.code]))
        page = _deleted_page(alice_client)
        rows = _rows(page)
        assert len(rows) == 1
        assert rows[0].startswith("What wrong.txt added 4 highlights · deleted ")
        assert reverse("import_report", args=[wrong.code]) in page
        assert "Ficciones" in rows[0]
        assert WRONG in rows[0]  # the book of each highlight inside
        deletion = Deletion.objects.get(reader=alice)
        assert deletion.kind == Deletion.Kind.IMPORT
        assert deletion.source_import == wrong
        alice_client.post(reverse("deletion_bring_back", args=[deletion.code]))
        assert not Highlight.objects.filter(source_import=wrong, deleted_at__isnull=False).exists()

    def test_a_group_names_its_standalone_notes_as_such(
        self, alice: User, alice_client: Client
    ) -> None:
        wrong = _import(
            alice,
            *_wrong_entries(2),
            Entry(WRONG, "A note typed on no passage.", kind="Note", location="5"),
            name="wrong.txt",
        )
        alice_client.post(reverse("import_delete", args=[wrong.code]))
        rows = _rows(_deleted_page(alice_client))
        # Not "1 note": a note on a highlight is never counted apart from it.
        assert rows[0].startswith("What wrong.txt added 2 highlights · 1 standalone note · ")

    def test_a_highlight_deleted_on_its_own_is_a_row_with_no_leading_separator(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *MEMORY_LIBRARY)
        highlight_delete(highlight=Highlight.objects.get(reader=alice, location_start=412))
        rows = _rows(_deleted_page(alice_client))
        assert len(rows) == 1
        assert rows[0].startswith("To think is to forget differences")
        assert "Ficciones · deleted " in rows[0]
        assert "· ·" not in rows[0]
        assert "Bring back all" not in rows[0]
        page = _deleted_page(alice_client)
        assert 'class="muted"><a href="' in page  # the book first, not "· " before it

    def test_one_brought_back_from_a_group_leaves_the_rest_and_deleted_again_stands_alone(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *MEMORY_LIBRARY)
        alice_client.post(reverse("book_delete", args=[_borges(alice).code]))
        think = Highlight.objects.get(reader=alice, location_start=412)
        alice_client.post(reverse("highlight_bring_back", args=[think.code]), {"next": "deleted"})
        rows = _rows(_deleted_page(alice_client))
        assert len(rows) == 1
        assert rows[0].startswith("Ficciones 2 highlights")
        think.refresh_from_db()
        highlight_delete(highlight=think)
        rows = _rows(_deleted_page(alice_client))
        assert len(rows) == 2
        assert rows[0].startswith("To think is to forget")  # the latest delete first
        assert rows[1].startswith("Ficciones 2 highlights")

    def test_highlights_deleted_together_before_deletes_were_recorded_are_one_group(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *MEMORY_LIBRARY)
        book = _borges(alice)
        at = timezone.now()
        book.highlights.update(deleted_at=at)  # as the book delete stamped them, no Deletion
        rows = _rows(_deleted_page(alice_client))
        assert len(rows) == 1
        assert rows[0].startswith("Ficciones 3 highlights")
        page = _deleted_page(alice_client)
        assert reverse("book_bring_back", args=[book.code]) in page
        response = alice_client.post(
            reverse("book_bring_back", args=[book.code]), {"at": at.isoformat(), "next": "deleted"}
        )
        assert response["Location"] == reverse("deleted")
        assert not book.highlights.filter(deleted_at__isnull=False).exists()

    def test_a_big_group_shows_only_its_first_highlights_and_says_how_many_more(
        self, alice: User, alice_client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(deleted_list, "GROUP_SHOWN", 2)
        wrong = _import(alice, *_wrong_entries(5), name="wrong.txt")
        alice_client.post(reverse("import_delete", args=[wrong.code]))
        rows = _rows(_deleted_page(alice_client))
        assert rows[0].count("Passage number") == 2
        assert "And 3 more. See the import" in rows[0]

    def test_it_pages_by_groups(
        self, alice: User, alice_client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(deleted_list, "DELETED_PAGE_SIZE", 2)
        _import(alice, *MEMORY_LIBRARY)
        wrong = _import(alice, *_wrong_entries(4), name="wrong.txt")
        alice_client.post(reverse("import_delete", args=[wrong.code]))  # 4 highlights, 1 group
        alice_client.post(reverse("book_delete", args=[_borges(alice).code]))  # 3, 1 group
        sacks = Highlight.objects.alive().filter(reader=alice).first()
        assert sacks is not None
        highlight_delete(highlight=sacks)  # 1
        first = _rows(_deleted_page(alice_client))
        second = _rows(_deleted_page(alice_client, page=2))
        assert len(first) == 2
        assert len(second) == 1
        assert first[0].startswith(sacks.text[:30])
        assert first[1].startswith("Ficciones 3 highlights")
        assert second[0].startswith("What wrong.txt added 4 highlights")

    def test_its_queries_do_not_grow_with_the_groups(
        self, alice: User, alice_client: Client
    ) -> None:
        _import(alice, *MEMORY_LIBRARY)
        alice_client.post(reverse("book_delete", args=[_borges(alice).code]))
        with CaptureQueriesContext(connection) as one:
            _deleted_page(alice_client)
        wrong = _import(alice, *_wrong_entries(3), name="wrong.txt")
        alice_client.post(reverse("import_delete", args=[wrong.code]))
        for highlight in Highlight.objects.alive().filter(reader=alice):
            highlight_delete(highlight=highlight)
        assert len(_rows(_deleted_page(alice_client))) == 4
        with CaptureQueriesContext(connection) as four:
            _deleted_page(alice_client)
        assert len(four) == len(one)


@pytest.mark.django_db
class DeletedGroupOwnershipTests:
    @pytest.fixture
    def alices_deletion(self, alice: User, alice_client: Client) -> Deletion:
        _import(alice, *MEMORY_LIBRARY)
        alice_client.post(reverse("book_delete", args=[_borges(alice).code]))
        return Deletion.objects.get(reader=alice)

    def test_bob_gets_404_and_brings_nothing_back(
        self, alice: User, alices_deletion: Deletion, bob_client: Client
    ) -> None:
        before = _alive(alice)
        response = bob_client.post(reverse("deletion_bring_back", args=[alices_deletion.code]))
        assert response.status_code == 404
        assert _alive(alice) == before

    def test_bob_sees_none_of_alices_groups(
        self, alices_deletion: Deletion, bob_client: Client
    ) -> None:
        page = _deleted_page(bob_client)
        assert "Ficciones" not in page
        assert str(alices_deletion.code) not in page
        assert "Nothing deleted." in page

    def test_it_is_post_only_and_needs_a_login(
        self, alices_deletion: Deletion, alice_client: Client, client: Client
    ) -> None:
        url = reverse("deletion_bring_back", args=[alices_deletion.code])
        assert alice_client.get(url).status_code == 405
        response = client.post(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
        assert Highlight.objects.filter(deletion=alices_deletion).count() == 3


@pytest.mark.django_db
class DeletedGroupSpanishTests:
    def test_a_group_reads_in_spanish(self, alice: User, alice_client: Client) -> None:
        wrong = _import(alice, *_wrong_entries(2), name="wrong.txt")
        alice_client.post(reverse("import_delete", args=[wrong.code]))
        page = alice_client.get(reverse("deleted"), headers={"Accept-Language": "es"})
        rows = _rows(page.content.decode())
        assert rows[0].startswith("Lo que añadió wrong.txt 2 subrayados · borrado el ")
        assert "Recuperar todo" in rows[0]
        assert "Recuperar uno a uno" in rows[0]
