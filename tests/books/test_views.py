import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Book, Highlight
from tests.books.kindle import BORGES, MEMORY_LIBRARY, Entry, clippings_file
from tests.books.library import book_of, highlight_in, listed_books


def _library(reader: User) -> None:
    clippings_import(reader=reader, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")


@pytest.mark.django_db
class HomeTests:
    def test_it_shows_the_readers_counts(self, alice: User, alice_client: Client) -> None:
        _library(alice)
        Highlight.objects.filter(location_start=412).update(
            embedding_status=Highlight.EmbeddingStatus.DONE
        )
        response = alice_client.get(reverse("home"))
        counts = response.context["counts"]
        assert (counts.books, counts.highlights, counts.embedded, counts.pending) == (2, 5, 1, 4)
        assert b"1 of 5" in response.content

    def test_it_writes_large_counts_as_the_readers_language_does(
        self, alice: User, alice_client: Client
    ) -> None:
        book = Book.objects.create(reader=alice, title="Ficciones", key="ficciones")
        Highlight.objects.bulk_create(
            Highlight(reader=alice, book=book, text=f"Line {n}.", dedupe_key=str(n))
            for n in range(1234)
        )
        starting = alice_client.get(reverse("home")).content.decode()
        assert '<span class="number">1,234</span>' in starting
        assert "1,234 highlights waiting for the model." in starting
        embedded = Highlight.objects.filter(pk__in=Highlight.objects.values("pk")[:1001])
        embedded.update(embedding_status=Highlight.EmbeddingStatus.DONE)
        english = alice_client.get(reverse("home")).content.decode()
        assert "<strong>1,001 of 1,234</strong>" in english
        spanish = alice_client.get(reverse("home"), headers={"Accept-Language": "es"})
        # Spanish groups with a no-break space (Django's es format, as the RAE advises).
        assert '<span class="number">1\xa0234</span>' in spanish.content.decode()

    def test_it_counts_only_the_readers_own_rows(self, alice: User, bob_client: Client) -> None:
        _library(alice)
        counts = bob_client.get(reverse("home")).context["counts"]
        assert (counts.books, counts.highlights) == (0, 0)


@pytest.mark.django_db
class LibraryTests:
    def test_it_lists_books_with_counts(self, alice: User, alice_client: Client) -> None:
        _library(alice)
        Highlight.objects.filter(location_start=380).update(deleted_at=timezone.now())
        response = alice_client.get(reverse("library"))
        books = dict(listed_books(response.content))
        assert books == {"Ficciones": 2, "The Man Who Mistook His Wife for a Hat": 2}

    def test_it_shows_an_empty_state(self, alice_client: Client) -> None:
        assert b"No books yet" in alice_client.get(reverse("library")).content

    def test_the_empty_home_names_every_device_and_export(self, alice_client: Client) -> None:
        page = alice_client.get(reverse("home")).content.decode()
        for source in ("Kindle", "KOReader", "Kobo", "Apple Books", "Readwise", "exports"):
            assert source in page, source

    def test_it_never_lists_another_readers_books(self, alice: User, bob_client: Client) -> None:
        _library(alice)
        assert b"Ficciones" not in bob_client.get(reverse("library")).content

    def test_it_finds_a_book_by_its_words_accents_and_case_aside(
        self, alice: User, alice_client: Client
    ) -> None:
        proverbs, sayings = "Antología de Proverbios, tomo 2", "Antología de Refranes, tomo 1"
        highlight_in(book_of(alice, proverbs, "Editor"), "Más vale tarde que nunca.", location=1)
        highlight_in(book_of(alice, sayings, "Editor"), "Quien calla otorga.", location=1)
        later = "Antología de Refranes, tomo 12"
        highlight_in(book_of(alice, later, "Editor"), "Más vale maña que fuerza.", location=1)
        highlight_in(book_of(alice, "Ficciones", "Jorge Luis Borges"), "Funes.", location=1)

        def found(query: str) -> list[str]:
            response = alice_client.get(reverse("library"), {"q": query})
            return [title for title, _count in listed_books(response.content)]

        assert found("antologia") == [proverbs, sayings, later]
        assert found("ANTOLOGÍA") == [proverbs, sayings, later]
        assert found("refranes tomo 1") == [sayings]  # not side by side; a number whole
        assert found("tomo, refranes") == [sayings, later]  # in another order
        assert found("borges ficciones") == ["Ficciones"]  # an author's word and a title's
        assert found("antolog") == [proverbs, sayings, later]  # a word's start, as typed
        assert found("refranes borges") == []
        # Read within BOOK_QUERY_MAX characters: a query of a thousand words is not a title.
        assert found("borges " * 40 + "refranes") == ["Ficciones"]

    def test_it_finds_a_book_by_a_name_written_with_symbols(
        self, alice: User, alice_client: Client
    ) -> None:
        primer, sharp, node = "C++ Primer", "C# in Depth", "Node.js Design Patterns"
        for title in (primer, sharp, node, "Cosmos", "The Nodes of Change"):
            highlight_in(book_of(alice, title, "Carl Sagan"), f"A line of {title}.", location=1)

        def found(query: str) -> list[str]:
            response = alice_client.get(reverse("library"), {"q": query})
            return [title for title, _count in listed_books(response.content)]

        assert found("c++") == found("C++ primer") == [primer]
        assert found("c#") == [sharp]
        assert found("NODE.JS") == [node]
        assert found("node") == [node, "The Nodes of Change"]  # a word as before
        assert found("c++ sagan") == [primer]

    def test_it_finds_a_book_by_initials_and_dotted_words(
        self, alice: User, alice_client: Client
    ) -> None:
        stone, rings, volume = "Philosopher's Stone", "The Two Towers", "Refranes, vol.2"
        highlight_in(book_of(alice, stone, "J.K. Rowling"), "A line.", location=1)
        highlight_in(book_of(alice, rings, "J. R. R. Tolkien"), "A line.", location=1)
        highlight_in(book_of(alice, volume, "Anónimo"), "A line.", location=1)
        highlight_in(book_of(alice, "Refranes, vol.21", "Anónimo"), "A line.", location=1)
        # The dotted words' letters apart, each in a word of its own: no initials.
        highlight_in(book_of(alice, "The Jungle Book", "Rudyard Kipling"), "A line.", location=1)
        highlight_in(book_of(alice, "Volume 3: 14 essays", "Ann Other"), "A line.", location=1)

        def found(query: str) -> list[str]:
            response = alice_client.get(reverse("library"), {"q": query})
            return [title for title, _count in listed_books(response.content)]

        assert found("j.k. rowling") == [stone]
        assert found("J.R.R. Tolkien") == [rings]
        assert found("vol.2") == [volume]
        assert found("j.k.") == [stone]
        assert found("3.14") == []

    def test_the_header_search_box_shows_no_query_of_another_page(
        self, alice: User, alice_client: Client
    ) -> None:
        _library(alice)
        header_box = (
            '<input type="search" id="site-search-q" name="q" '
            'placeholder="Search highlights" value="{}">'
        )
        library = alice_client.get(reverse("library"), {"q": "ficciones"}).content.decode()
        assert 'id="library-q" name="q" value="ficciones"' in library
        assert header_box.format("") in library
        search = alice_client.get(reverse("search"), {"q": "memory"}).content.decode()
        assert header_box.format("memory") in search


@pytest.mark.django_db
class BookAndHighlightTests:
    def test_it_shows_a_book_in_reading_order(self, alice: User, alice_client: Client) -> None:
        _library(alice)
        book = Book.objects.get(reader=alice, title="Ficciones")
        response = alice_client.get(book.get_absolute_url())
        starts = [h.location_start for h in response.context["page"].object_list]
        assert starts == [100, 380, 412]

    def test_it_shows_a_highlight_with_its_note(self, alice: User, alice_client: Client) -> None:
        _library(alice)
        highlight = Highlight.objects.get(reader=alice, location_start=412)
        content = alice_client.get(highlight.get_absolute_url()).content.decode()
        assert "To think is to forget" in content
        assert "Read this twice." in content

    def test_it_hides_alices_rows_from_bob(self, alice: User, bob_client: Client) -> None:
        _library(alice)
        book = Book.objects.get(reader=alice, title="Ficciones")
        highlight = Highlight.objects.filter(reader=alice).first()
        assert highlight is not None
        assert bob_client.get(book.get_absolute_url()).status_code == 404
        assert bob_client.get(highlight.get_absolute_url()).status_code == 404

    def test_a_deleted_highlight_is_no_page_of_the_library_but_says_it_was_deleted(
        self, alice: User, alice_client: Client
    ) -> None:
        _library(alice)
        highlight = Highlight.objects.get(reader=alice, location_start=412)
        highlight.deleted_at = timezone.now()
        highlight.save(update_fields=["deleted_at"])
        response = alice_client.get(highlight.get_absolute_url())
        assert response.status_code == 404
        assert "You deleted this highlight" in response.content.decode()

    def test_it_sends_anonymous_readers_to_login(self, alice: User, client: Client) -> None:
        _library(alice)
        book = Book.objects.get(reader=alice, title="Ficciones")
        assert client.get(book.get_absolute_url()).status_code == 302


@pytest.mark.django_db
class HighlightMergesTests:
    def _extended_twice(self, reader: User) -> Highlight:
        versions = [
            Entry(BORGES, "He remembered every leaf", location="380"),
            Entry(BORGES, "He remembered every leaf of every tree", location="380-381"),
            Entry(BORGES, "every leaf of every tree of every wood.", location="380-381"),
        ]
        clippings_import(reader=reader, data=clippings_file(*versions), file_name="leaves.txt")
        return Highlight.objects.get(reader=reader)

    def test_it_shows_how_often_a_highlight_was_extended(
        self, alice: User, alice_client: Client
    ) -> None:
        highlight = self._extended_twice(alice)

        content = alice_client.get(highlight.get_absolute_url()).content.decode()

        assert highlight.text == "He remembered every leaf of every tree of every wood."
        assert (
            "2 other versions of this passage were merged into this highlight "
            "(earlier or later selections); it keeps every word of each"
        ) in content
        assert "import of leaves.txt" in content
        assert "Re-selected" in content
        assert "location 380\N{EN DASH}381" in content

    def test_it_says_how_a_highlight_was_extended_in_spanish(
        self, alice: User, alice_client: Client
    ) -> None:
        highlight = self._extended_twice(alice)
        alice.language = "es"
        alice.save(update_fields=["language"])

        content = alice_client.get(highlight.get_absolute_url()).content.decode()

        assert "Otras 2 versiones de este pasaje se fusionaron con este subrayado" in content
        assert "posteriores de este subrayado" not in content
        assert "posición 380\N{EN DASH}381" in content
        assert "location" not in content

    def test_it_does_not_call_earlier_shorter_selections_later_versions(
        self, alice: User, alice_client: Client
    ) -> None:
        """The two entries a Kindle wrote while the selection grew, then the whole sentence a
        minute later: the versions listed are the earlier, shorter ones."""
        at_54, at_55 = "Monday, 3 March 2025 07:54:00", "Monday, 3 March 2025 07:55:00"
        versions = [
            Entry(BORGES, "I will give you a definition of", location="1140", added=at_54),
            Entry(
                BORGES,
                "I will give you a definition of a proud man",
                location="1140-1141",
                added=at_54,
            ),
            Entry(
                BORGES,
                "I will give you a definition of a proud man: he is",
                location="1140-1141",
                added=at_55,
            ),
        ]
        clippings_import(reader=alice, data=clippings_file(*versions), file_name="proud.txt")
        highlight = Highlight.objects.get(reader=alice)
        assert highlight.text.endswith("proud man: he is")

        content = alice_client.get(highlight.get_absolute_url()).content.decode()

        listed = content.split('<details class="merges">')[1].split("</details>")[0]
        assert "I will give you a definition of</blockquote>" in listed
        assert "a proud man</blockquote>" in listed
        assert "he is</blockquote>" not in listed
        assert "later versions" not in content
        assert "earlier or later selections" in content

    def test_it_lists_the_later_selection_that_extended_a_stored_highlight(
        self, alice: User, alice_client: Client
    ) -> None:
        first = Entry(BORGES, "He remembered every leaf", location="380")
        clippings_import(reader=alice, data=clippings_file(first), file_name="first.txt")
        later = Entry(BORGES, "He remembered every leaf of every tree", location="380-381")
        clippings_import(reader=alice, data=clippings_file(later), file_name="later.txt")
        highlight = Highlight.objects.get(reader=alice)

        content = alice_client.get(highlight.get_absolute_url()).content.decode()

        assert "He remembered every leaf of every tree</blockquote>" in content
        assert "import of later.txt" in content
        assert (
            "Another version of this passage was merged into this highlight "
            "(an earlier or a later selection); it keeps every word of both"
        ) in content

    def test_it_says_nothing_of_a_highlight_never_extended(
        self, alice: User, alice_client: Client
    ) -> None:
        _library(alice)
        highlight = Highlight.objects.get(reader=alice, location_start=412)

        content = alice_client.get(highlight.get_absolute_url()).content.decode()

        assert "Extended" not in content

    def test_it_hides_alices_versions_from_bob(self, alice: User, bob_client: Client) -> None:
        highlight = self._extended_twice(alice)

        response = bob_client.get(highlight.get_absolute_url())

        assert response.status_code == 404
        assert b"leaves.txt" not in response.content

    def test_it_sends_anonymous_readers_to_login(self, alice: User, client: Client) -> None:
        highlight = self._extended_twice(alice)

        response = client.get(highlight.get_absolute_url())

        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
class HostileTagNameTests:
    @pytest.mark.parametrize(
        "name", ["fiction/essays", ".", "..", "...", "50%", "%2F", "a%00b", "?x#y", "ü / ñ"]
    )
    def test_it_lists_opens_and_links_any_tag_name(
        self, alice: User, alice_client: Client, name: str
    ) -> None:
        from books.services import highlight_tag

        _library(alice)
        highlight = Highlight.objects.filter(reader=alice).exclude(text="").first()
        assert highlight is not None
        tag = highlight_tag(highlight=highlight, name=name)
        url = reverse("tag", args=[tag.name])
        # A browser would collapse either.
        assert "/../" not in url
        assert "/./" not in url
        for page in (reverse("tags"), reverse("highlight", args=[highlight.code])):
            response = alice_client.get(page)
            assert response.status_code == 200
            assert f'href="{url}"' in response.content.decode()
        opened = alice_client.get(url)
        assert opened.status_code == 200
        assert opened.context["tag"] == tag

    def test_it_hides_a_tag_from_another_reader(self, alice: User, bob_client: Client) -> None:
        from books.services import highlight_tag

        _library(alice)
        highlight = Highlight.objects.filter(reader=alice).first()
        assert highlight is not None
        highlight_tag(highlight=highlight, name="a/b")
        assert bob_client.get(reverse("tag", args=["a/b"])).status_code == 404


@pytest.mark.django_db
class NulCharacterTests:
    @pytest.mark.parametrize(
        "url",
        [
            "/library/?q=%00",
            "/library/?sort=%00",
            "/tags/%00/",
            "/search/?q=%00",
            "/search.json?q=a%00b",
            "/connections/?book=%00",
            "/books/%00/",
        ],
    )
    def test_it_answers_400_not_500(self, alice_client: Client, url: str) -> None:
        response = alice_client.get(url)
        assert response.status_code in {400, 404}
        if response.status_code == 400:
            assert "NUL character" in response.content.decode()

    def test_it_refuses_a_nul_in_a_note(self, alice: User, alice_client: Client) -> None:
        _library(alice)
        highlight = Highlight.objects.filter(reader=alice).first()
        assert highlight is not None
        response = alice_client.post(
            reverse("highlight_note", args=[highlight.code]), {"note": "bad\x00note"}
        )
        assert response.status_code == 200
        assert "This has a null character in it" in response.content.decode()
        assert ">badnote</textarea>" in response.content.decode()
        highlight.refresh_from_db()
        assert "\x00" not in highlight.note
