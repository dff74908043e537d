import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from books.models import Highlight
from review.models import ReviewCard, ReviewSettings, ReviewState
from review.services import review_queue, unsubscribe_token
from tests.books.library import library_of

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
        data = {"cards_per_day": "3", "daily_email": "on", "email": "alice@example.org"}
        response = alice_client.post(reverse("review_settings"), data)
        assert response.status_code == 302
        settings = ReviewSettings.objects.get(reader=alice)
        assert (settings.cards_per_day, settings.daily_email) == (3, True)
        alice.refresh_from_db()
        assert alice.email == "alice@example.org"

    def test_it_wants_an_address_for_the_email(self, alice: User, alice_client: Client) -> None:
        response = alice_client.post(
            reverse("review_settings"), {"cards_per_day": "5", "daily_email": "on"}
        )
        assert response.status_code == 200
        assert "needs an address" in response.content.decode()
        assert not ReviewSettings.objects.filter(reader=alice, daily_email=True).exists()

    def test_it_refuses_a_count_out_of_range(self, alice_client: Client) -> None:
        response = alice_client.post(reverse("review_settings"), {"cards_per_day": "500"})
        assert response.status_code == 200
        assert response.context["form"].errors["cards_per_day"]

    def test_each_reader_has_their_own(self, alice: User, bob: User, bob_client: Client) -> None:
        ReviewSettings.objects.create(reader=alice, cards_per_day=9)
        bob_client.post(reverse("review_settings"), {"cards_per_day": "2", "email": ""})
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
