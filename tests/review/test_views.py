import re
from datetime import timedelta
from typing import Any

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.models import NOTE_MAX_LENGTH, Highlight
from books.services import highlight_delete
from review.models import ReviewCard, ReviewSettings, ReviewState, WordCard, WordState
from review.services import review_queue, unsubscribe_token, word_queue
from tests.books.library import book_of, highlight_in, library_of
from tests.conftest import PASSWORD
from tests.review.vocabulary import WORDS, word_in, words_of

HTMX = {"HTTP_HX_REQUEST": "true"}


def _first_card(reader: User) -> ReviewCard:
    library_of(reader, 8)
    return review_queue(reader=reader, today=timezone.localdate())[0]


@pytest.mark.django_db
class ReviewPageTests:
    def test_it_shows_the_days_cards(self, alice: User, alice_client: Client) -> None:
        library_of(alice, 8)
        response = alice_client.get(reverse("review"))
        assert response.status_code == 200
        cards = response.context["cards"]
        assert len(cards) == 5
        content = response.content.decode()
        for card in cards:
            assert card.highlight.text in content
        assert content.count(">Keep</button>") == 5
        main = content[content.index("<main") :]
        assert "style=" not in main
        assert "<script" not in main
        assert " on" + "click=" not in main

    def test_it_shows_an_empty_state(self, alice_client: Client) -> None:
        assert "Nothing to review yet." in alice_client.get(reverse("review")).content.decode()

    def test_home_shows_the_first_card_as_the_highlight_of_the_day(
        self, alice: User, alice_client: Client
    ) -> None:
        card = _first_card(alice)
        home = alice_client.get(reverse("home"))
        assert home.context["highlight_of_the_day"] == card.highlight

    def test_anonymous_readers_are_sent_to_login(self, client: Client) -> None:
        for url in (reverse("review"), reverse("review_settings")):
            response = client.get(url)
            assert response.status_code == 302
            assert response["Location"].startswith(reverse("login"))


def _pressed(card: str) -> list[str]:
    """The answers a card's buttons show as given."""
    return re.findall(r'value="(\w+)"[^>]*aria-pressed="true"', card)


@pytest.mark.django_db
class CardAnswerTests:
    def test_it_keeps_a_card_inline(self, alice: User, alice_client: Client) -> None:
        card = _first_card(alice)
        url = reverse("review_card_answer", args=[card.code])
        response = alice_client.post(url, {"answer": "keep"}, **HTMX)
        assert response.status_code == 200
        assert "Kept. It comes back on" in response.content.decode()
        assert (
            '<span id="review-count" hx-swap-oob="true">1 of 5 reviewed</span>'
            in response.content.decode()
        )
        state = ReviewState.objects.get(highlight=card.highlight)
        assert (state.due - timezone.localdate()).days == 14

    def test_an_answered_card_shows_its_answer_and_takes_another(
        self, alice: User, alice_client: Client
    ) -> None:
        card = _first_card(alice)
        url = reverse("review_card_answer", args=[card.code])
        kept = alice_client.post(url, {"answer": "keep"}, **HTMX).content.decode()
        assert _pressed(kept) == ["keep"]
        assert "Another answer changes it." in kept
        changed = alice_client.post(url, {"answer": "less"}, **HTMX).content.decode()
        assert _pressed(changed) == ["less"]
        assert "Less often: it comes back on" in changed
        assert "1 of 5 reviewed" in changed  # one card, answered once
        state = ReviewState.objects.get(highlight=card.highlight)
        # "Less often" sends it further than "keep" did, counted as one review.
        assert (state.reviews, (state.due - timezone.localdate()).days > 14) == (1, True)

    def test_it_favourites_without_js(self, alice: User, alice_client: Client) -> None:
        card = _first_card(alice)
        url = reverse("review_card_answer", args=[card.code])
        response = alice_client.post(url, {"answer": "favourite"})
        assert response.status_code == 302
        assert response["Location"] == reverse("review")
        assert Highlight.objects.get(pk=card.highlight_id).favourite

    def test_it_opens_the_highlight_and_counts_it_kept(
        self, alice: User, alice_client: Client
    ) -> None:
        card = _first_card(alice)
        response = alice_client.post(
            reverse("review_card_answer", args=[card.code]), {"answer": "open"}
        )
        assert response["Location"] == card.highlight.get_absolute_url()
        assert ReviewState.objects.filter(highlight=card.highlight).exists()

    def test_it_refuses_an_unknown_answer(self, alice: User, alice_client: Client) -> None:
        card = _first_card(alice)
        url = reverse("review_card_answer", args=[card.code])
        response = alice_client.post(url, {"answer": "forget"}, follow=True)
        assert "not an answer" in response.content.decode()
        assert not ReviewState.objects.exists()

    def test_it_saves_a_note_from_the_card(self, alice: User, alice_client: Client) -> None:
        card = _first_card(alice)
        url = reverse("review_card_note", args=[card.code])
        response = alice_client.post(url, {"note": "Still true."}, **HTMX)
        assert "Note saved." in response.content.decode()
        highlight = Highlight.objects.get(pk=card.highlight_id)
        assert (highlight.note, highlight.note_edited) == ("Still true.", True)
        assert ReviewCard.objects.get(pk=card.pk).answer == "note"

    def test_a_notes_hashtags_tag_its_highlight_as_on_the_highlight_page(
        self, alice: User, alice_client: Client
    ) -> None:
        card = _first_card(alice)
        url = reverse("review_card_note", args=[card.code])

        alice_client.post(url, {"note": "#memoria, still true"}, **HTMX)

        highlight = Highlight.objects.get(pk=card.highlight_id)
        assert list(highlight.tags.values_list("name", flat=True)) == ["memoria"]

    def test_a_note_too_long_is_refused_as_on_the_highlight_page(
        self, alice: User, alice_client: Client
    ) -> None:
        card = _first_card(alice)
        page = alice_client.get(reverse("review")).content.decode()
        assert f'id="note-{card.code}" rows="3" maxlength="{NOTE_MAX_LENGTH}"' in page
        typed = "y" * 12_345
        url = reverse("review_card_note", args=[card.code])
        inline = alice_client.post(url, {"note": typed}, **HTMX).content.decode()
        highlight_page = alice_client.post(
            reverse("highlight_note", args=[card.highlight.code]), {"note": typed}, **HTMX
        ).content.decode()
        message = "Notes can be up to 10,000 characters; this one has 12,345."
        assert message in inline
        assert message in highlight_page
        assert '<details class="card-note" open>' in inline
        assert f">{typed}</textarea>" in inline
        assert 'class="status review-status error"' in inline
        plain = alice_client.post(url, {"note": typed}, follow=True).content.decode()
        assert message in plain
        assert Highlight.objects.get(pk=card.highlight_id).note == ""
        assert not ReviewCard.objects.get(pk=card.pk).answer

    def test_bob_cannot_answer_alices_card(self, alice: User, bob_client: Client) -> None:
        card = _first_card(alice)
        answer = bob_client.post(
            reverse("review_card_answer", args=[card.code]), {"answer": "keep"}
        )
        note = bob_client.post(reverse("review_card_note", args=[card.code]), {"note": "mine"})
        assert (answer.status_code, note.status_code) == (404, 404)
        assert not ReviewState.objects.exists()
        assert Highlight.objects.get(pk=card.highlight_id).note == ""

    def test_anonymous_readers_are_sent_to_login(self, alice: User, client: Client) -> None:
        card = _first_card(alice)
        for name in ("review_card_answer", "review_card_note"):
            response = client.post(reverse(name, args=[card.code]), {"answer": "keep"})
            assert response.status_code == 302
            assert response["Location"].startswith(reverse("login"))
        assert not ReviewState.objects.exists()


@pytest.mark.django_db
class ReviewSettingsTests:
    def test_it_saves_the_count_and_the_email(self, alice: User, alice_client: Client) -> None:
        data = {
            "cards_per_day": "3",
            "words_per_day": "0",
            "daily_email": "on",
            "email": "alice@example.org",
            "password": PASSWORD,
        }
        response = alice_client.post(reverse("review_settings"), data)
        assert response.status_code == 302
        settings = ReviewSettings.objects.get(reader=alice)
        assert (settings.cards_per_day, settings.words_per_day, settings.daily_email) == (
            3,
            0,
            True,
        )
        alice.refresh_from_db()
        assert alice.email == "alice@example.org"
        # Not confirmed yet: a link went to it, and no review e-mail will until followed.
        assert [m.to for m in mail.outbox] == [["alice@example.org"]]

    def test_it_needs_the_password_to_change_the_address(
        self, alice: User, alice_client: Client
    ) -> None:
        data = {"cards_per_day": "3", "words_per_day": "0", "email": "mallory@example.org"}
        response = alice_client.post(reverse("review_settings"), data)
        assert response.status_code == 200
        assert "Type your password to change the address" in response.content.decode()
        alice.refresh_from_db()
        assert alice.email == ""

    def test_it_wants_an_address_for_the_email(self, alice: User, alice_client: Client) -> None:
        response = alice_client.post(
            reverse("review_settings"),
            {"cards_per_day": "5", "words_per_day": "10", "daily_email": "on"},
        )
        assert response.status_code == 200
        assert "needs an address" in response.content.decode()
        assert not ReviewSettings.objects.filter(reader=alice, daily_email=True).exists()

    def test_it_refuses_a_count_out_of_range(self, alice_client: Client) -> None:
        response = alice_client.post(
            reverse("review_settings"), {"cards_per_day": "500", "words_per_day": "-1"}
        )
        assert response.status_code == 200
        assert response.context["form"].errors["cards_per_day"]
        assert response.context["form"].errors["words_per_day"]

    def test_it_offers_ten_words_a_day_by_default(self, alice_client: Client) -> None:
        response = alice_client.get(reverse("review_settings"))
        assert response.context["form"]["words_per_day"].value() == 10
        assert "0 turns the words deck off." in response.content.decode()

    def test_each_reader_has_their_own(self, alice: User, bob: User, bob_client: Client) -> None:
        ReviewSettings.objects.create(reader=alice, cards_per_day=9)
        bob_client.post(
            reverse("review_settings"), {"cards_per_day": "2", "words_per_day": "4", "email": ""}
        )
        assert ReviewSettings.objects.get(reader=alice).cards_per_day == 9
        assert ReviewSettings.objects.get(reader=bob).cards_per_day == 2


@pytest.mark.django_db
class UnsubscribeTests:
    def test_it_asks_then_unsubscribes_without_a_login(self, alice: User, client: Client) -> None:
        ReviewSettings.objects.create(reader=alice, daily_email=True)
        url = reverse("review_unsubscribe", args=[unsubscribe_token(alice)])
        assert "Stop the daily review e-mail?" in client.get(url).content.decode()
        assert ReviewSettings.objects.get(reader=alice).daily_email
        response = client.post(url)
        assert "no more daily review e-mails" in response.content.decode()
        assert not ReviewSettings.objects.get(reader=alice).daily_email

    def test_it_refuses_a_tampered_token(self, alice: User, bob: User, client: Client) -> None:
        ReviewSettings.objects.create(reader=alice, daily_email=True)
        url = reverse("review_unsubscribe", args=[unsubscribe_token(alice) + "x"])
        assert client.post(url).status_code == 400
        assert ReviewSettings.objects.get(reader=alice).daily_email


def _first_word_card(reader: User) -> WordCard:
    words_of(reader, 3)
    return word_queue(reader=reader, today=timezone.localdate())[0]


@pytest.mark.django_db
class WordsPageTests:
    def test_it_shows_the_days_words_with_their_books(
        self, alice: User, alice_client: Client
    ) -> None:
        words_of(alice, 12)
        response = alice_client.get(reverse("review_words"))
        assert response.status_code == 200
        shown = response.context["shown"]
        assert len(shown) == 10
        content = response.content.decode()
        assert content.count(">I know it</button>") == 10
        assert content.count("The Word Book") >= 10
        assert "Lexis, Ana" in content
        for item in shown:
            assert f">{item.word}</h2>" in content
            assert f"location {item.card.highlight.location_start}</p>" in content
        assert "0 of 10 reviewed" in content
        main = content[content.index("<main") :]
        assert "style=" not in main
        assert "<script" not in main

    def test_it_shows_the_word_marked_in_the_sentence_it_was_read_in(
        self, alice: User, alice_client: Client
    ) -> None:
        book = book_of(alice, "Walden", "Thoreau, Henry David")
        word_in(book, "allay,", location=120, note="to calm")
        highlight_in(book, "Nothing could <b>allay</b> the fears of the town.", location=119)
        highlight_in(book, "She tried to allay his doubts, far off in the book.", location=400)
        content = alice_client.get(reverse("review_words")).content.decode()
        assert '<h2 class="word"' in content
        assert ">allay</h2>" in content
        assert "Nothing could &lt;b&gt;<mark>allay</mark>&lt;/b&gt; the fears" in content
        assert "far off in the book" not in content
        assert "to calm" in content
        assert "Show your definition" in content
        assert "location 120" in content

    def test_it_shows_no_sentence_when_none_was_highlighted(
        self, alice: User, alice_client: Client
    ) -> None:
        _first_word_card(alice)
        content = alice_client.get(reverse("review_words")).content.decode()
        assert "word-context" not in content
        assert "Add a definition" in content

    def test_it_reads_a_deck_in_a_fixed_number_of_queries(
        self, alice: User, alice_client: Client, django_assert_num_queries: Any
    ) -> None:
        book = book_of(alice, "Walden")
        for i, word in enumerate(WORDS):
            word_in(book, word, location=10 * i + 5)
            highlight_in(book, f"A sentence with {word} in it, number {i}.", location=10 * i + 4)
        alice_client.get(reverse("review_words"))  # the day's choice, made once
        with django_assert_num_queries(
            11
        ):  # as many for 1 card as for 10; one is the books' languages
            content = alice_client.get(reverse("review_words")).content.decode()
        assert content.count("<mark>") == 10

    def test_it_says_when_there_are_no_words_yet(self, alice: User, alice_client: Client) -> None:
        library_of(alice, 3)
        content = alice_client.get(reverse("review_words")).content.decode()
        assert "No words yet." in content
        assert "All done for today." not in content

    def test_it_says_why_the_deck_is_empty_when_every_word_is_a_heading_or_a_fragment(
        self, alice: User, alice_client: Client
    ) -> None:
        book = book_of(alice, "Indistractable", "Nir Eyal;")
        for n, text in enumerate(["INTRODUCTION", "Chapter One", "London"]):
            word_in(book, text, location=10 * (n + 1))
        content = alice_client.get(reverse("review_words")).content.decode()
        assert "No looked-up words yet." in content
        assert "Your words page lists 3 short highlights" in content
        assert f'href="{reverse("words")}"' in content
        assert "No words yet." not in content
        assert "Import your highlights" not in content

    def test_it_says_all_done_when_no_word_is_due_today(
        self, alice: User, alice_client: Client
    ) -> None:
        today = timezone.localdate()
        for word in words_of(alice, 2):
            WordState.objects.create(reader=alice, word=word.text, due=today + timedelta(days=5))
        content = alice_client.get(reverse("review_words")).content.decode()
        assert "All done for today." in content
        assert f"the next one comes back on {today + timedelta(days=5):%-d %b %Y}" in content

    def test_it_says_when_the_deck_is_off(self, alice: User, alice_client: Client) -> None:
        words_of(alice, 2)
        ReviewSettings.objects.create(reader=alice, words_per_day=0)
        content = alice_client.get(reverse("review_words")).content.decode()
        assert "The words deck is off." in content
        assert not WordCard.objects.exists()

    def test_it_is_linked_from_the_review_and_the_words_page(
        self, alice: User, alice_client: Client
    ) -> None:
        words_of(alice, 1)
        link = f'href="{reverse("review_words")}"'
        assert link in alice_client.get(reverse("review")).content.decode()
        assert link in alice_client.get(reverse("words")).content.decode()

    def test_anonymous_readers_are_sent_to_login(self, client: Client) -> None:
        response = client.get(reverse("review_words"))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))

    def test_bob_sees_only_his_own_words(self, alice: User, bob_client: Client) -> None:
        words_of(alice, 3)
        content = bob_client.get(reverse("review_words")).content.decode()
        assert "No words yet." in content
        assert "allay" not in content


@pytest.mark.django_db
class WordAnswerViewTests:
    def test_it_knows_a_word_inline(self, alice: User, alice_client: Client) -> None:
        card = _first_word_card(alice)
        url = reverse("review_word_answer", args=[card.code])
        response = alice_client.post(url, {"answer": "know"}, **HTMX)
        content = response.content.decode()
        assert response.status_code == 200
        assert "You know it: it comes back on" in content
        assert '<span id="review-count" hx-swap-oob="true">1 of 3 reviewed</span>' in content
        assert (
            f'value="know" aria-describedby="word-{card.code}-word" aria-pressed="true"' in content
        )
        state = WordState.objects.get(reader=alice, word=card.word)
        assert (state.due - timezone.localdate()).days == 70

    def test_it_answers_again_soon_without_js(self, alice: User, alice_client: Client) -> None:
        card = _first_word_card(alice)
        response = alice_client.post(
            reverse("review_word_answer", args=[card.code]), {"answer": "again"}, follow=True
        )
        assert "Again soon: it comes back on" in response.content.decode()
        assert "Again soon · back on" in response.content.decode()
        state = WordState.objects.get(reader=alice, word=card.word)
        assert (state.due - timezone.localdate()).days == 2

    def test_it_opens_the_word(self, alice: User, alice_client: Client) -> None:
        card = _first_word_card(alice)
        response = alice_client.post(
            reverse("review_word_answer", args=[card.code]), {"answer": "open"}
        )
        assert response["Location"] == card.highlight.get_absolute_url()
        assert WordCard.objects.get(pk=card.pk).answer == "open"

    def test_it_refuses_an_unknown_answer(self, alice: User, alice_client: Client) -> None:
        card = _first_word_card(alice)
        url = reverse("review_word_answer", args=[card.code])
        for answer in ("forget", "keep"):  # keep is a highlight's answer, not a word's
            response = alice_client.post(url, {"answer": answer}, follow=True)
            assert "not an answer a word takes" in response.content.decode()
        assert not WordState.objects.exists()

    def test_it_saves_a_definition_from_the_card(self, alice: User, alice_client: Client) -> None:
        card = _first_word_card(alice)
        url = reverse("review_word_note", args=[card.code])
        response = alice_client.post(url, {"note": "  to calm, to put to rest "}, **HTMX)
        content = response.content.decode()
        assert "Definition saved." in content
        assert '<details class="card-note" open>' in content
        highlight = Highlight.objects.get(pk=card.highlight_id)
        assert (highlight.note, highlight.note_edited) == ("to calm, to put to rest", True)
        assert WordCard.objects.get(pk=card.pk).answer == "note"

    def test_it_refuses_a_definition_too_long_and_keeps_the_old_one(
        self, alice: User, alice_client: Client
    ) -> None:
        card = _first_word_card(alice)
        Highlight.objects.filter(pk=card.highlight_id).update(note="to calm")
        url = reverse("review_word_note", args=[card.code])
        page = alice_client.get(reverse("review_words")).content.decode()
        assert f'rows="2" maxlength="{NOTE_MAX_LENGTH}"' in page
        response = alice_client.post(url, {"note": "x" * 10_001}, follow=True)
        message = "Definitions can be up to 10,000 characters; this one has 10,001."
        assert message in response.content.decode()
        inline = alice_client.post(url, {"note": "z" * 10_002}, **HTMX).content.decode()
        assert "this one has 10,002." in inline
        assert '<details class="card-note" open>' in inline
        assert f">{'z' * 10_002}</textarea>" in inline
        assert Highlight.objects.get(pk=card.highlight_id).note == "to calm"

    def test_bob_cannot_answer_or_define_alices_word(self, alice: User, bob_client: Client) -> None:
        card = _first_word_card(alice)
        answer = bob_client.post(
            reverse("review_word_answer", args=[card.code]), {"answer": "know"}
        )
        note = bob_client.post(reverse("review_word_note", args=[card.code]), {"note": "mine"})
        assert (answer.status_code, note.status_code) == (404, 404)
        assert not WordState.objects.exists()
        assert Highlight.objects.get(pk=card.highlight_id).note == ""

    def test_anonymous_readers_are_sent_to_login(self, alice: User, client: Client) -> None:
        card = _first_word_card(alice)
        for name in ("review_word_answer", "review_word_note"):
            response = client.post(reverse(name, args=[card.code]), {"answer": "know"})
            assert response.status_code == 302
            assert response["Location"].startswith(reverse("login"))
        assert not WordState.objects.exists()

    def test_a_deleted_word_is_gone_from_the_deck(self, alice: User, alice_client: Client) -> None:
        card = _first_word_card(alice)
        highlight_delete(highlight=card.highlight)
        url = reverse("review_word_answer", args=[card.code])
        assert alice_client.post(url, {"answer": "know"}).status_code == 404
        content = alice_client.get(reverse("review_words")).content.decode()
        assert "0 of 2 reviewed" in content
        assert f">{card.highlight.text}</h2>" not in content
