import datetime as dt

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.importing.services import clippings_import
from books.models import NOTE_MAX_LENGTH, Highlight, Tag
from books.services import highlight_note_update, highlight_untag
from tests.books.kindle import MEMORY_LIBRARY, clippings_file
from tests.books.library import listed_books


@pytest.fixture
def think(alice: User) -> Highlight:
    clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")
    return Highlight.objects.get(reader=alice, location_start=412)


HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.mark.django_db
class NoteEditTests:
    def test_it_saves_a_note_inline_and_marks_it_edited(
        self, think: Highlight, alice_client: Client
    ) -> None:
        url = reverse("highlight_note", args=[think.code])
        response = alice_client.post(url, {"note": "  Funes, again.  "}, **HTMX)
        assert response.status_code == 200
        assert "Note saved." in response.content.decode()
        assert 'id="highlight-note"' in response.content.decode()
        think.refresh_from_db()
        assert (think.note, think.note_edited) == ("Funes, again.", True)
        assert "funes, again." in think.search_text

    def test_it_survives_a_reimport(
        self, think: Highlight, alice: User, alice_client: Client
    ) -> None:
        alice_client.post(reverse("highlight_note", args=[think.code]), {"note": "mine"})
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")
        think.refresh_from_db()
        assert think.note == "mine"

    def test_it_works_without_javascript(self, think: Highlight, alice_client: Client) -> None:
        response = alice_client.post(reverse("highlight_note", args=[think.code]), {"note": "x"})
        assert response.status_code == 302
        assert response["Location"] == think.get_absolute_url()

    def test_a_note_too_long_says_the_limit_and_the_count_and_keeps_the_words(
        self, think: Highlight, alice_client: Client
    ) -> None:
        think.note = "the old note"
        think.save(update_fields=["note"])
        typed = "word " * 4_004  # 20,020 characters, 20,019 once its last space is trimmed
        url = reverse("highlight_note", args=[think.code])
        inline = alice_client.post(url, {"note": typed}, **HTMX).content.decode()
        plain = alice_client.post(url, {"note": typed})  # no JavaScript: the page again
        assert plain.status_code == 200
        for content in (inline, plain.content.decode()):
            assert "Notes can be up to 10,000 characters; this one has 20,019." in content
            assert f'aria-describedby="note-status">{typed}</textarea>' in content
        think.refresh_from_db()
        assert think.note == "the old note"

    def test_it_says_it_in_spanish(self, think: Highlight, alice_client: Client) -> None:
        response = alice_client.post(
            reverse("highlight_note", args=[think.code]),
            {"note": "x" * 10_001},
            HTTP_ACCEPT_LANGUAGE="es",
            **HTMX,
        )
        assert (
            "Una nota puede tener hasta 10\u00a0000 caracteres; esta tiene 10\u00a0001."
            in response.content.decode()
        )

    def test_the_box_stops_at_the_limit_and_line_breaks_count_once(
        self, think: Highlight, alice_client: Client
    ) -> None:
        page = alice_client.get(think.get_absolute_url()).content.decode()
        assert f'maxlength="{NOTE_MAX_LENGTH}"' in page
        # A browser counts a line break once for `maxlength` and sends it as CRLF.
        lines = ["x" * 99] * 100  # 9,999 characters with "\n", 10,098 with "\r\n"
        url = reverse("highlight_note", args=[think.code])
        response = alice_client.post(url, {"note": "\r\n".join(lines)}, **HTMX)
        assert "Note saved." in response.content.decode()
        think.refresh_from_db()
        assert think.note == "\n".join(lines)

    def test_bob_cannot_write_alices_note(self, think: Highlight, bob_client: Client) -> None:
        url = reverse("highlight_note", args=[think.code])
        assert bob_client.post(url, {"note": "x" * 10_001}).status_code == 404
        assert bob_client.post(url, {"note": "mine"}, **HTMX).status_code == 404
        think.refresh_from_db()
        assert think.note != "mine"


def _tag_names(highlight: Highlight) -> list[str]:
    return sorted(highlight.tags.values_list("name", flat=True))


@pytest.mark.django_db
class NoteHashtagTests:
    """Hashtags typed in the note editor tag the highlight by the import's rule
    (books.importing.hashtags.hashtags_named_anew): those the note names anew only."""

    def test_the_hashtags_of_a_saved_note_tag_the_highlight_and_htmx_shows_them(
        self, think: Highlight, alice_client: Client
    ) -> None:
        url = reverse("highlight_note", args=[think.code])

        response = alice_client.post(
            url, {"note": "On #Memoria and #forgetting; C# #1 #ff0000"}, **HTMX
        )

        page = response.content.decode()
        assert _tag_names(think) == ["forgetting", "memoria"]
        assert "Note saved, and tagged from its hashtags: memoria, forgetting." in page
        # The tags swap in out of band beside the note, each with its link.
        assert 'id="highlight-tags" aria-labelledby="tags-heading" hx-swap-oob="true"' in page
        assert f'href="{reverse("tag", args=["memoria"])}"' in page
        assert 'id="highlight-note"' in page
        think.refresh_from_db()
        assert think.note == "On #Memoria and #forgetting; C# #1 #ff0000"

    def test_a_hashtag_taken_out_of_the_note_leaves_its_tag(
        self, think: Highlight, alice_client: Client
    ) -> None:
        url = reverse("highlight_note", args=[think.code])
        alice_client.post(url, {"note": "#memoria"}, **HTMX)

        response = alice_client.post(url, {"note": "No hashtag now."}, **HTMX)

        assert _tag_names(think) == ["memoria"]
        assert "Note saved." in response.content.decode()
        assert "hx-swap-oob" not in response.content.decode()

    def test_a_tag_the_reader_removed_stays_removed_while_the_note_still_names_it(
        self, think: Highlight, alice_client: Client
    ) -> None:
        url = reverse("highlight_note", args=[think.code])
        alice_client.post(url, {"note": "#memoria"}, **HTMX)
        tag = Tag.objects.get(name="memoria")
        alice_client.post(reverse("highlight_tag_remove", args=[think.code, tag.pk]), **HTMX)

        alice_client.post(url, {"note": "#memoria, again, and #olvido"}, **HTMX)

        assert _tag_names(think) == ["olvido"]

    def test_a_note_typed_with_a_full_width_hash_tags_too(
        self, think: Highlight, alice_client: Client
    ) -> None:
        url = reverse("highlight_note", args=[think.code])

        alice_client.post(url, {"note": "記憶について\u3000\uff03記憶 \uff03忘却"}, **HTMX)

        assert _tag_names(think) == ["忘却", "記憶"]

    def test_without_javascript_the_page_says_it_and_shows_the_tags(
        self, think: Highlight, alice_client: Client
    ) -> None:
        url = reverse("highlight_note", args=[think.code])

        response = alice_client.post(url, {"note": "#memoria"}, follow=True)

        page = response.content.decode()
        assert response.redirect_chain == [(think.get_absolute_url(), 302)]
        assert "Note saved, and tagged from its hashtag: memoria." in page
        assert f'href="{reverse("tag", args=["memoria"])}"' in page

    def test_it_says_it_in_spanish(self, think: Highlight, alice_client: Client) -> None:
        url = reverse("highlight_note", args=[think.code])

        response = alice_client.post(
            url, {"note": "#memoria #olvido"}, HTTP_ACCEPT_LANGUAGE="es", **HTMX
        )

        page = response.content.decode()
        assert "Nota guardada y etiquetada con sus hashtags: memoria, olvido." in page

    def test_the_service_returns_the_tags_the_note_named_anew(
        self, think: Highlight, alice: User
    ) -> None:
        # Every note the reader writes goes through it: the highlight page's, the review
        # card's, the API's and the MCP server's add_note.
        tagged = highlight_note_update(highlight=think, note="#memoria")
        again = highlight_note_update(highlight=think, note="#memoria #Memoria")

        assert (tagged, again) == (["memoria"], [])
        assert _tag_names(think) == ["memoria"]

    def test_a_hashtag_pushed_past_the_twentieth_by_a_new_one_is_not_new_again(
        self, think: Highlight, alice: User
    ) -> None:
        twenty = " ".join(f"#t{i:02d}" for i in range(20))
        highlight_note_update(highlight=think, note=twenty)
        highlight_untag(highlight=think, tag=Tag.objects.get(reader=alice, name="t19"))

        added = highlight_note_update(highlight=think, note=f"#new {twenty}")
        removed = highlight_note_update(highlight=think, note=twenty)  # #new taken out

        assert (added, removed) == (["new"], [])
        assert "t19" not in _tag_names(think)
        assert len(_tag_names(think)) == 20  # t00 to t18, and new

    def test_a_change_gives_at_most_twenty_tags_those_it_names_anew(self, think: Highlight) -> None:
        twenty = " ".join(f"#t{i:02d}" for i in range(20))
        highlight_note_update(highlight=think, note=twenty)

        more = highlight_note_update(
            highlight=think, note=twenty + " " + " ".join(f"#u{i:02d}" for i in range(25))
        )

        assert more == [f"u{i:02d}" for i in range(20)]


@pytest.mark.django_db
class TagTests:
    def test_it_adds_and_removes_tags(self, think: Highlight, alice_client: Client) -> None:
        add = reverse("highlight_tag_add", args=[think.code])
        response = alice_client.post(add, {"name": "  Memory  "}, **HTMX)
        assert "Tagged “memory”." in response.content.decode()
        alice_client.post(add, {"name": "memory"}, **HTMX)
        tag = Tag.objects.get()
        assert list(think.tags.all()) == [tag]
        tags_page = alice_client.get(reverse("tags")).content.decode()
        assert "memory" in tags_page
        tag_page = alice_client.get(reverse("tag", args=["memory"])).content.decode()
        assert "To think is to forget" in tag_page
        remove = reverse("highlight_tag_remove", args=[think.code, tag.pk])
        alice_client.post(remove, **HTMX)
        assert not Tag.objects.exists()  # a tag on nothing is dropped

    def test_it_refuses_an_empty_tag(self, think: Highlight, alice_client: Client) -> None:
        response = alice_client.post(
            reverse("highlight_tag_add", args=[think.code]), {"name": "   "}, **HTMX
        )
        assert "A tag needs a name" in response.content.decode()
        assert not Tag.objects.exists()

    def test_it_saves_a_name_that_grows_past_the_limit_when_case_folded(
        self, think: Highlight, alice_client: Client
    ) -> None:
        # 64 characters, as the form takes; 68 once "ß" folds to "ss": cut after the fold.
        name = "Straße" * 10 + "ßßßß"
        response = alice_client.post(
            reverse("highlight_tag_add", args=[think.code]), {"name": name}, **HTMX
        )
        assert response.status_code == 200
        (tag,) = think.tags.all()
        assert tag.name == name.casefold()[:64]

    def test_bob_cannot_see_or_use_alices_tags(
        self, think: Highlight, alice_client: Client, bob: User, bob_client: Client
    ) -> None:
        alice_client.post(reverse("highlight_tag_add", args=[think.code]), {"name": "memory"})
        tag = Tag.objects.get()
        assert bob_client.get(reverse("tag", args=["memory"])).status_code == 404
        assert b"memory" not in bob_client.get(reverse("tags")).content
        remove = reverse("highlight_tag_remove", args=[think.code, tag.pk])
        assert bob_client.post(remove).status_code == 404


@pytest.mark.django_db
class FavouriteTests:
    def test_it_toggles(self, think: Highlight, alice_client: Client) -> None:
        url = reverse("highlight_favourite", args=[think.code])
        assert "Added to favourites." in alice_client.post(url, **HTMX).content.decode()
        think.refresh_from_db()
        assert think.favourite
        alice_client.post(url, **HTMX)
        think.refresh_from_db()
        assert not think.favourite


@pytest.mark.django_db
class DeleteTests:
    def test_it_deletes_and_offers_undo_once(self, think: Highlight, alice_client: Client) -> None:
        response = alice_client.post(reverse("highlight_delete", args=[think.code]))
        assert response["Location"] == think.book.get_absolute_url()
        book_page = alice_client.get(response["Location"]).content.decode()
        # Listed only under Recently deleted, below the book's highlights.
        listed, deleted = book_page.split('id="recently-deleted"')
        assert "To think is to forget" not in listed
        assert "To think is to forget" in deleted
        assert reverse("highlight_undo", args=[think.code]) in book_page
        assert (
            reverse("highlight_undo", args=[think.code])
            not in alice_client.get(reverse("home")).content.decode()
        )
        assert alice_client.get(think.get_absolute_url()).status_code == 404
        restored = alice_client.post(reverse("highlight_undo", args=[think.code]))
        assert restored["Location"] == think.get_absolute_url()
        assert alice_client.get(think.get_absolute_url()).status_code == 200

    def test_it_cannot_undo_after_the_window(self, think: Highlight, alice_client: Client) -> None:
        alice_client.post(reverse("highlight_delete", args=[think.code]))
        Highlight.objects.filter(pk=think.pk).update(
            deleted_at=timezone.now() - dt.timedelta(hours=2)
        )
        alice_client.post(reverse("highlight_undo", args=[think.code]))
        think.refresh_from_db()
        assert think.deleted_at is not None

    def test_a_deleted_highlight_is_not_brought_back_by_reimport(
        self, think: Highlight, alice: User, alice_client: Client
    ) -> None:
        alice_client.post(reverse("highlight_delete", args=[think.code]))
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")
        assert alice_client.get(think.get_absolute_url()).status_code == 404

    def test_bob_cannot_delete_or_restore_alices_highlight(
        self, think: Highlight, bob_client: Client
    ) -> None:
        assert bob_client.post(reverse("highlight_delete", args=[think.code])).status_code == 404
        assert bob_client.post(reverse("highlight_undo", args=[think.code])).status_code == 404
        think.refresh_from_db()
        assert think.deleted_at is None

    @pytest.mark.parametrize(
        "name", ["highlight_note", "highlight_tag_add", "highlight_favourite", "highlight_delete"]
    )
    def test_anonymous_readers_are_sent_to_login(
        self, think: Highlight, client: Client, name: str
    ) -> None:
        response = client.post(reverse(name, args=[think.code]))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
class HomeExtrasTests:
    def test_it_shows_a_highlight_of_the_day(self, think: Highlight, alice_client: Client) -> None:
        response = alice_client.get(reverse("home"))
        chosen = response.context["highlight_of_the_day"]
        assert chosen is not None
        assert chosen.reader_id == think.reader_id
        assert chosen.kind == "highlight"


@pytest.mark.django_db
class LibrarySortTests:
    def test_it_sorts_and_filters(self, think: Highlight, alice_client: Client) -> None:
        by_count = listed_books(
            alice_client.get(reverse("library"), {"sort": "highlights"}).content
        )
        assert by_count[0][0] == "Ficciones"
        found = listed_books(alice_client.get(reverse("library"), {"q": "sacks"}).content)
        assert [title for title, _ in found] == ["The Man Who Mistook His Wife for a Hat"]
        empty = alice_client.get(reverse("library"), {"q": "nothing like it"})
        assert "No book matches" in empty.content.decode()


@pytest.mark.django_db
class SemanticMapTests:
    def test_it_has_an_empty_state_and_shows_nothing_of_others(
        self, think: Highlight, bob_client: Client
    ) -> None:
        Highlight.objects.update(embedding_status=Highlight.EmbeddingStatus.DONE,
                                 embedding=[1.0] + [0.0] * 383)  # fmt: skip
        content = bob_client.get(reverse("map")).content.decode()
        assert "Nothing to map yet" in content
        assert "map-canvas" not in content
