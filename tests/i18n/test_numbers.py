"""Every count a reader reads is grouped by thousands as their language writes numbers
(`intcomma`: "1,049" in English; "1 049" in Spanish, with a no-break space, Django's
Spanish format), and a message that counts says its
noun in the count's own form, never "problem(s)"."""

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from accounts.models import User
from affinity.services import sharing_update
from books.importing.devices import ZIP_BOMB
from books.importing.upload import NOTHING_READ
from books.models import Highlight, Import
from books.wording import translated
from exogram.counting import counted
from exogram.wording import plural_message
from tests.books.library import book_of

ENGLISH = {"Accept-Language": "en-US,en;q=0.9"}
SPANISH = {"Accept-Language": "es-ES,es;q=0.9"}
NBSP = "\xa0"


def _waiting_highlights(reader: User, count: int) -> None:
    """`count` highlights of a library just imported: none has its vector yet."""
    book = book_of(reader, "Walden", "Thoreau, Henry David")
    highlights = [
        Highlight(
            reader=reader,
            book=book,
            text=f"Sentence number {n} says something of its own.",
            location_start=10 * n + 1,
            location_end=10 * n + 2,
            dedupe_key=f"waiting-{n}",
        )
        for n in range(count)
    ]
    for highlight in highlights:
        highlight.refresh_search_text()
    Highlight.objects.bulk_create(highlights)


@pytest.mark.django_db
class GroupedCountsTests:
    def test_past_imports_and_the_report_group_their_counts(
        self, alice: User, alice_client: Client
    ) -> None:
        the_import = Import.objects.create(
            reader=alice,
            file_name="My Clippings.txt",
            sha256="1" * 64,
            status=Import.Status.DONE,
            counts={"new_highlights": 1049, "duplicates_skipped": 2193, "new_books": 12},
        )
        for headers, sep in ((ENGLISH, ","), (SPANISH, NBSP)):
            past = alice_client.get(reverse("import"), headers=headers).content.decode()
            assert f">1{sep}049</td>" in past
            report = alice_client.get(the_import.get_absolute_url(), headers=headers)
            page = report.content.decode()
            assert f'<td class="n">1{sep}049</td>' in page
            assert f'<td class="n">2{sep}193</td>' in page
            assert "1049" not in page
            assert "2193" not in page

    def test_kindred_groups_the_highlights_still_waiting(
        self, alice: User, alice_client: Client
    ) -> None:
        sharing_update(reader=alice, discoverable=True, display_name="Alice", excluded_books=[])
        _waiting_highlights(alice, 1049)
        english = alice_client.get(reverse("kindred"), headers=ENGLISH).content.decode()
        assert "1,049 of your highlights are still being embedded" in english
        spanish = alice_client.get(reverse("kindred"), headers=SPANISH).content.decode()
        assert f"1{NBSP}049 de tus subrayados aún se están procesando" in spanish

    def test_a_stored_failure_counts_its_problems_and_groups_its_bytes(self) -> None:
        bomb = ZIP_BOMB % {"name": "x.lua", "size": f"{1073741824:,}", "packed": f"{1049:,}"}
        one = plural_message(NOTHING_READ, 1, line=1, problem=bomb)
        assert "(1 problem, at line 1" in one
        with translation.override("es"):
            said = translated(one)
        assert "(1 problema, en la línea 1" in said
        assert f"1{NBSP}073{NBSP}741{NBSP}824 bytes a partir de 1{NBSP}049" in said
        assert "(s)" not in said
        many = plural_message(NOTHING_READ, 1049, line=3, problem=bomb)
        assert "(1049 problems; the first, at line 3" in many  # stored as the parser counts
        with translation.override("en"):
            assert "(1,049 problems; the first, at line 3" in translated(many)
        with translation.override("es"):
            assert f"(1{NBSP}049 problemas; el primero, en la línea 3" in translated(many)

    def test_the_commands_count_as_the_pages_do(self) -> None:
        assert counted(17124, "highlight") == "17,124 highlights"
        assert counted(1, "reader") == "1 reader"
        assert counted(2, "stored pair") == "2 stored pairs"
