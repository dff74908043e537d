"""Two books made one (books.importing.same_book): a passage the two books hold in two
versions (selected a little differently, or on two devices) becomes one highlight, by the
import's own rule for versions, keeping everything the reader added to either."""

from datetime import date
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import User
from books.embedding.pipeline import highlights_embed
from books.importing.same_book import book_merge_preview, books_merge
from books.importing.services import clippings_import
from books.models import Book, Connection, Highlight
from books.services import highlight_delete, highlight_note_update, highlight_tag
from review.models import ReviewState
from tests.books.importing.devices import sidecar
from tests.books.kindle import Entry, clippings_file

# One book from two devices: one wrote the title without its subtitle.
SHORT = "The San Francisco Fallacy (Siegel, Jonathan)"
LONG = "The San Francisco Fallacy: The Ten Fallacies That San Francisco Makes (Jonathan Siegel)"
SELECTED = "A city that forbids building forbids its own future."
EXTENDED = SELECTED + " Its children move away."
ONLY_SHORT = "Rent is what the permit office charges, passed on."
RENT_LONGER = ONLY_SHORT + " Every month."
NEARBY = "Zoning boards meet on Tuesdays, when renters are at work."

SHORT_FILE = [
    Entry(SHORT, SELECTED, location="100-101"),
    Entry(SHORT, ONLY_SHORT, location="200-202"),
]
LONG_FILE = [
    Entry(LONG, EXTENDED, location="100-102"),
    # Touching the extended one's range, other words: another passage.
    Entry(LONG, NEARBY, location="103-104"),
]


def _import(reader: User, entries: list[Entry], name: str) -> int:
    the_import = clippings_import(reader=reader, data=clippings_file(*entries), file_name=name)
    return int(the_import.counts.get("new_highlights", 0))


def _books(reader: User) -> tuple[Book, Book]:
    short = Book.objects.get(reader=reader, title="The San Francisco Fallacy")
    return short, Book.objects.get(reader=reader, title__startswith="The San Francisco Fallacy:")


@pytest.fixture
def two_versions(alice: User) -> tuple[Book, Book]:
    _import(alice, SHORT_FILE, "kindle.txt")
    _import(alice, LONG_FILE, "kindle-2.txt")
    return _books(alice)


def _alive_texts(book: Book) -> list[str]:
    return sorted(book.highlights.alive().values_list("text", flat=True))


@pytest.mark.django_db
class VersionsAcrossTwoBooksTests:
    def test_a_selection_and_its_extension_become_one_keeping_the_shorter_ones_note(
        self, alice: User, two_versions: tuple[Book, Book]
    ) -> None:
        short, long = two_versions
        selected = short.highlights.get(text=SELECTED)
        highlight_note_update(highlight=selected, note="Housing is a promise to strangers.")
        highlight_tag(highlight=selected, name="housing")
        Highlight.objects.filter(pk=selected.pk).update(favourite=True)

        done = books_merge(kept=long, absorbed=short)

        assert done is not None
        assert (done.moved, done.joined) == (2, 1)
        assert _alive_texts(long) == sorted([EXTENDED, ONLY_SHORT, NEARBY])
        one = long.highlights.get(text=EXTENDED)
        assert (one.location_start, one.location_end) == (100, 102)
        assert one.note == "Housing is a promise to strangers."
        assert one.note_edited
        assert one.favourite
        assert list(one.tags.values_list("name", flat=True)) == ["housing"]
        assert not Highlight.objects.filter(pk=selected.pk).exists()

    def test_the_highlight_stays_the_kept_books_and_gets_the_longer_words(
        self, alice: User, two_versions: tuple[Book, Book]
    ) -> None:
        short, long = two_versions
        selected = short.highlights.get(text=SELECTED)
        Highlight.objects.filter(pk=selected.pk).update(
            embedding_status=Highlight.EmbeddingStatus.DONE
        )

        books_merge(kept=short, absorbed=long)

        one = short.highlights.get(text=EXTENDED)
        assert one.code == selected.code  # its page and links still lead to it
        # New words, a new vector: the old one and its connections are void.
        assert one.embedding_status == Highlight.EmbeddingStatus.PENDING
        assert one.embedding is None
        assert one.dedupe_key != selected.dedupe_key
        assert "its children move away" in one.search_text

    def test_the_longer_words_leave_no_vector_of_the_shorter_ones(
        self, alice: User, two_versions: tuple[Book, Book]
    ) -> None:
        short, long = two_versions
        selected = short.highlights.get(text=SELECTED)
        highlights_embed(ids=[selected.pk])
        selected.refresh_from_db()
        assert selected.theme_embedding is not None

        books_merge(kept=short, absorbed=long)

        one = short.highlights.get(text=EXTENDED)
        assert one.pk == selected.pk
        assert one.embedding_status == Highlight.EmbeddingStatus.PENDING
        # The theme vector, which candidates are sought by, goes with the others.
        assert one.embedding is None
        assert one.english_embedding is None
        assert one.theme_embedding is None
        highlights_embed(ids=[one.pk])
        one.refresh_from_db()
        assert one.embedding_status == Highlight.EmbeddingStatus.DONE
        assert one.theme_embedding is not None

    def test_it_keeps_the_longer_review_history_and_the_connections_outside(
        self, alice: User, two_versions: tuple[Book, Book]
    ) -> None:
        short, long = two_versions
        _import(alice, [Entry("Meditations (Marcus Aurelius)", "Waste no more time.")], "m")
        stoic = Highlight.objects.get(reader=alice, text="Waste no more time.")
        selected = short.highlights.get(text=SELECTED)
        ReviewState.objects.create(
            reader=alice, highlight=selected, due=date(2027, 1, 9), reviews=4
        )
        a, b = sorted([selected.pk, stoic.pk])
        Connection.objects.create(
            reader=alice, highlight_a_id=a, highlight_b_id=b, distance=0.2, embedding_model="t"
        )

        books_merge(kept=long, absorbed=short)

        one = long.highlights.get(text=EXTENDED)
        assert ReviewState.objects.get(reader=alice).highlight_id == one.pk
        assert ReviewState.objects.get(reader=alice).reviews == 4
        # The one that went took its vector, and the connections found with it, along: the
        # one that stays is connected again by its own.
        assert not Connection.objects.filter(reader=alice).exists()

    def test_the_count_said_before_is_the_count_done_whichever_book_is_kept(
        self, alice: User, two_versions: tuple[Book, Book]
    ) -> None:
        short, long = two_versions
        before = book_merge_preview(kept=short, absorbed=long)
        other_way = book_merge_preview(kept=long, absorbed=short)

        done = books_merge(kept=long, absorbed=short)

        assert done is not None
        assert before.joined == other_way.joined == done.joined == 1

    def test_a_reimport_of_both_files_adds_nothing_and_the_shorter_stays_gone(
        self, alice: User, two_versions: tuple[Book, Book]
    ) -> None:
        short, long = two_versions
        books_merge(kept=long, absorbed=short)
        before = sorted(Highlight.objects.filter(reader=alice).values_list("pk", "text"))

        assert _import(alice, SHORT_FILE, "kindle.txt") == 0
        assert _import(alice, LONG_FILE, "kindle-2.txt") == 0

        assert sorted(Highlight.objects.filter(reader=alice).values_list("pk", "text")) == before
        assert not Highlight.objects.filter(reader=alice, text=SELECTED).exists()
        assert Book.objects.filter(reader=alice).count() == 1

    def test_unrelated_passages_are_left_as_they_were(
        self, alice: User, two_versions: tuple[Book, Book]
    ) -> None:
        short, long = two_versions
        untouched = [short.highlights.get(text=ONLY_SHORT), long.highlights.get(text=NEARBY)]
        fields = ["code", "text", "location_start", "location_end", "note", "embedding_status"]
        as_they_were = [{f: getattr(h, f) for f in fields} for h in untouched]

        done = books_merge(kept=long, absorbed=short)

        assert done is not None
        assert done.joined == 1  # the two versions beside them
        after = [Highlight.objects.get(pk=h.pk) for h in untouched]
        assert [{f: getattr(h, f) for f in fields} for h in after] == as_they_were

    def test_a_deleted_version_stays_deleted_and_keeps_its_words_out(
        self, alice: User, two_versions: tuple[Book, Book]
    ) -> None:
        short, long = two_versions
        highlight_delete(highlight=long.highlights.get(text=EXTENDED))
        _import(alice, [Entry(LONG, RENT_LONGER, location="200-203")], "kindle-3.txt")

        done = books_merge(kept=long, absorbed=short)

        assert done is not None
        assert done.joined == 1  # the rent passage's two versions, alive
        assert long.highlights.get(text=SELECTED).deleted_at is None
        assert long.highlights.get(text=EXTENDED).deleted_at is not None
        assert _import(alice, LONG_FILE, "kindle-2.txt") == 0
        assert long.highlights.get(text=EXTENDED).deleted_at is not None
        assert _alive_texts(long) == sorted([SELECTED, RENT_LONGER, NEARBY])

    def test_versions_within_one_book_are_left_to_the_import(
        self, alice: User, two_versions: tuple[Book, Book]
    ) -> None:
        short, long = two_versions
        # Two versions stored within the short book (as an older rule may have left them):
        # the import never joins two stored highlights, so neither does the merge, which
        # brings no version of them.
        Highlight.objects.filter(reader=alice, text=EXTENDED).delete()
        Highlight.objects.create(
            reader=alice,
            book=short,
            text=EXTENDED,
            location_start=100,
            location_end=102,
            dedupe_key="an older rule's key",
        )
        assert _import(alice, [*SHORT_FILE, Entry(SHORT, EXTENDED, location="100-102")], "k") == 0
        _import(alice, [Entry(LONG, RENT_LONGER, location="200-203")], "kindle-3.txt")

        done = books_merge(kept=short, absorbed=long)

        assert done is not None
        assert done.joined == 1  # the rent passage, one version in each book
        assert _alive_texts(short) == sorted([SELECTED, EXTENDED, RENT_LONGER, NEARBY])

    def test_a_longer_version_takes_in_two_shorter_ones_of_the_other_book(
        self, alice: User, two_versions: tuple[Book, Book]
    ) -> None:
        short, long = two_versions
        _import(alice, [Entry(SHORT, "Its children move away.", location="102")], "k3")
        preview = book_merge_preview(kept=long, absorbed=short)

        done = books_merge(kept=long, absorbed=short)

        assert done is not None
        assert preview.joined == done.joined == 2
        assert _alive_texts(long) == sorted([EXTENDED, ONLY_SHORT, NEARBY])

    def test_two_highlights_of_the_kept_book_stay_two(self, alice: User) -> None:
        # The kept book holds two passages side by side, each a highlight of its own with its
        # own review history; the other book holds one selection spanning both.
        first = "The harbour closed in winter, and the boats were hauled up the slipway."
        second = "In spring the town painted them again, each a colour of its own."
        _import(
            alice,
            [Entry(SHORT, first, location="300-301"), Entry(SHORT, second, location="302-303")],
            "kindle.txt",
        )
        _import(alice, [Entry(LONG, f"{first} {second}", location="300-303")], "k2.txt")
        short, long = _books(alice)
        for text, reviews in ((first, 3), (second, 5)):
            ReviewState.objects.create(
                reader=alice, highlight=short.highlights.get(text=text), due=date(2027, 1, 9),
                reviews=reviews,
            )  # fmt: skip
        preview = book_merge_preview(kept=short, absorbed=long)

        done = books_merge(kept=short, absorbed=long)

        assert done is not None
        # Two stored highlights within the kept book are the import's business: the merge
        # joins the other book's selection with one of them and leaves them two, each with
        # its review history.
        assert preview.joined == done.joined == 1
        assert short.highlights.alive().count() == 2
        assert ReviewState.objects.filter(reader=alice).count() == 2


def _versions_of(reader: User, n: int) -> tuple[Book, Book]:
    """n passages, each a selection in one book and its extension in the other."""
    a = [
        Entry(SHORT, f"Sentence {i} forbids building {i}.", location=f"{10 * i + 1}-{10 * i + 2}")
        for i in range(n)
    ]
    b = [Entry(LONG, f"Sentence {i} forbids building {i}. More words.",
               location=f"{10 * i + 1}-{10 * i + 3}") for i in range(n)]  # fmt: skip
    _import(reader, a, "a.txt")
    _import(reader, b, "b.txt")
    return _books(reader)


@pytest.mark.django_db
class ManyVersionsTests:
    def test_each_joined_version_costs_the_merge_a_few_queries_only(
        self, alice: User, bob: User
    ) -> None:
        # Rows are read at once and the ones that go deleted at once; what is left per pair
        # is _join's moving of what the reader added (notes, tags, cards, review history).
        counts = []
        for reader, n in ((alice, 5), (bob, 20)):
            short, long = _versions_of(reader, n)
            with CaptureQueriesContext(connection) as queries:
                done = books_merge(kept=short, absorbed=long)
            assert done is not None
            assert done.joined == n
            counts.append(len(queries.captured_queries))
        assert counts[1] - counts[0] <= 11 * 15, counts  # 26 a pair before


# A Kindle's copy and a KOReader's of one passage: the Kindle places it by locations,
# KOReader by its own positions, so they are one by their words (a long run of them).
QUIET = "The Quiet Engine (Okonkwo, Chidi)"
RIVER = (
    "The river kept the names of every boat that sank in it, and the town forgot them "
    "one winter at a time."
)
RIVER_LONGER = RIVER + " Only the ferryman still counted them aloud."
PHRASE = "the town forgot them"


@pytest.mark.django_db
class TwoDevicesAcrossTwoBooksTests:
    def test_a_kindle_copy_and_a_koreader_copy_become_one(self, alice: User) -> None:
        _import(alice, [Entry(QUIET, RIVER_LONGER, location="4100-4102")], "My Clippings.txt")
        # A short phrase of it, highlighted alone, is another highlight: a few words in
        # common never make two devices' highlights one.
        lua = sidecar("The Quiet Engine: A Novel", "Chidi Okonkwo", [RIVER, PHRASE])
        clippings_import(reader=alice, data=lua, file_name="metadata.epub.lua")
        kindle = Book.objects.get(reader=alice, title="The Quiet Engine")
        koreader = Book.objects.get(reader=alice, title="The Quiet Engine: A Novel")
        noted = koreader.highlights.get(text=RIVER)
        highlight_note_update(highlight=noted, note="The ferry again.")
        assert book_merge_preview(kept=koreader, absorbed=kindle).joined == 1

        done = books_merge(kept=koreader, absorbed=kindle)

        assert done is not None
        assert done.joined == 1
        assert sorted(koreader.highlights.alive().values_list("text", flat=True)) == sorted(
            [RIVER_LONGER, PHRASE]
        )
        one = koreader.highlights.get(text=RIVER_LONGER)
        assert (one.code, one.text, one.note) == (noted.code, RIVER_LONGER, "The ferry again.")
        # Both devices' places: each device's next upload finds it where it put it.
        assert (one.location_start, one.location_end) == (4100, 4102)
        assert one.position == noted.position
        assert _import(alice, [Entry(QUIET, RIVER_LONGER, location="4100-4102")], "c.txt") == 0
        again = clippings_import(reader=alice, data=lua, file_name="metadata.epub.lua")
        assert again.counts["new_highlights"] == 0
        assert Highlight.objects.filter(reader=alice).count() == 2


def _koreader_copy(title: str, text: str, *, note: str = "", updated: str = "") -> bytes:
    """A KOReader sidecar of one highlight of the river passage, with a note the reader
    wrote on the device at `updated`."""
    noted = f'["note"] = "{note}", ["datetime_updated"] = "{updated}",' if note else ""
    return f"""return {{
    ["annotations"] = {{
        [1] = {{
            ["datetime"] = "2026-02-20 18:08:18", {noted}
            ["pageno"] = 346,
            ["pos0"] = "/body/DocFragment[12]/body/div/p[24]/text().0",
            ["pos1"] = "/body/DocFragment[12]/body/div/p[24]/text().{len(text)}",
            ["text"] = "{text}",
        }},
    }},
    ["doc_props"] = {{ ["authors"] = "Chidi Okonkwo", ["title"] = "{title}" }},
}}
""".encode()


@pytest.mark.django_db
class DeviceNoteAcrossTwoBooksTests:
    def test_a_newer_note_from_the_device_replaces_its_older_one_after_the_merge(
        self, alice: User
    ) -> None:
        selected = _koreader_copy("The Quiet Engine", RIVER)
        clippings_import(reader=alice, data=selected, file_name="metadata.epub.lua")
        older = _koreader_copy(
            "The Quiet Engine: A Novel", RIVER_LONGER, note="Ferry.", updated="2026-02-21 09:00:00"
        )
        clippings_import(reader=alice, data=older, file_name="metadata.epub.lua")
        kept = Book.objects.get(reader=alice, title="The Quiet Engine")
        absorbed = Book.objects.get(reader=alice, title="The Quiet Engine: A Novel")

        books_merge(kept=kept, absorbed=absorbed)
        newer = _koreader_copy(
            "The Quiet Engine: A Novel", RIVER_LONGER, note="Ferry!", updated="2026-03-01 09:00:00"
        )
        clippings_import(reader=alice, data=newer, file_name="metadata.epub.lua")

        # The note's date on the device came along with it, so the device's newer note is
        # the reader's latest, as for a highlight that never changed books.
        (one,) = Highlight.objects.filter(reader=alice)
        assert (one.text, one.note) == (RIVER_LONGER, "Ferry!")


def _command(*args: str) -> str:
    out = StringIO()
    call_command("merge_books", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
class VersionsMergedByThePageAndTheCommandTests:
    def test_the_page_counts_the_versions_before_and_after(
        self, alice: User, two_versions: tuple[Book, Book], alice_client: Client
    ) -> None:
        short, long = two_versions
        url = reverse("book_merge_confirm", args=[short.code, long.code])

        page = alice_client.get(url).content.decode()
        data = {"other": str(long.code), "keep": str(short.code)}
        done = alice_client.post(reverse("book_merge", args=[short.code]), data, follow=True)

        said = "1 passage both books hold, word for word or in two versions (selected a little"
        assert said in page
        done_said = "1 passage both books held, word for word or in two versions, is now one"
        assert done_said in done.content.decode()

    def test_the_page_says_it_in_spanish(
        self, alice: User, two_versions: tuple[Book, Book], alice_client: Client
    ) -> None:
        short, long = two_versions
        url = reverse("book_merge_confirm", args=[short.code, long.code])

        page = alice_client.get(url, headers={"accept-language": "es"}).content.decode()

        assert "1 pasaje que tienen los dos libros, palabra por palabra o en dos versiones" in page

    def test_the_command_reports_the_same_figures(
        self, alice: User, two_versions: tuple[Book, Book]
    ) -> None:
        short, long = two_versions

        out = _command("--user", "alice", str(short.code), str(long.code))

        assert "2 highlights moved, 1 passage both held joined" in out
        assert _alive_texts(long) == sorted([EXTENDED, ONLY_SHORT, NEARBY])


@pytest.mark.django_db
class MergePreviewQueriesTests:
    def test_what_the_page_says_takes_the_same_queries_for_a_long_book(
        self, alice: User, two_versions: tuple[Book, Book], django_assert_num_queries: Any
    ) -> None:
        short, long = two_versions
        more = [
            Entry(LONG, f"Line {n} of a long book.", location=f"{1000 + 10 * n}") for n in range(40)
        ]
        _import(alice, more, "long.txt")

        with django_assert_num_queries(7):
            preview = book_merge_preview(kept=short, absorbed=long)

        assert preview.joined == 1
