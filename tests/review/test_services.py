from datetime import date, datetime, timedelta

import pytest
from django.core import mail
from django.utils import timezone

from accounts.models import User
from books.models import Highlight
from books.services import highlight_delete
from review.models import ReviewCard, ReviewSettings, ReviewState
from review.scheduler import Answer
from review.services import (
    highlight_of_the_day,
    reader_for_unsubscribe_token,
    review_answer,
    review_emails_send,
    review_queue,
    unsubscribe_token,
)
from tests.books.library import book_of, highlight_in, library_of

TODAY = date(2026, 3, 2)


def _now() -> datetime:
    return timezone.make_aware(datetime(2026, 3, 2, 9, 0))


@pytest.mark.django_db
class ReviewQueueTests:
    def test_it_chooses_five_cards_a_day_by_default(self, alice: User) -> None:
        library_of(alice, 12)
        cards = review_queue(reader=alice, today=TODAY)
        assert len(cards) == 5
        assert len({card.highlight_id for card in cards}) == 5

    def test_it_follows_the_readers_setting(self, alice: User) -> None:
        library_of(alice, 12)
        ReviewSettings.objects.create(reader=alice, cards_per_day=3)
        assert len(review_queue(reader=alice, today=TODAY)) == 3

    def test_it_keeps_the_days_cards_all_day(self, alice: User) -> None:
        library_of(alice, 12)
        first = [card.highlight_id for card in review_queue(reader=alice, today=TODAY)]
        library_of(alice, 3)  # a re-import later that day brings new highlights
        again = [card.highlight_id for card in review_queue(reader=alice, today=TODAY)]
        assert again == first

    def test_it_changes_the_cards_the_next_day(self, alice: User) -> None:
        library_of(alice, 12)
        first = {card.highlight_id for card in review_queue(reader=alice, today=TODAY)}
        for card in review_queue(reader=alice, today=TODAY):
            review_answer(card=card, answer=Answer.KEEP, today=TODAY, now=_now())
        tomorrow = {c.highlight_id for c in review_queue(reader=alice, today=TODAY + timedelta(1))}
        assert len(tomorrow) == 5
        assert not tomorrow & first

    def test_it_never_shows_a_fragment_when_the_fuller_highlight_exists(self, alice: User) -> None:
        book = book_of(alice, "Ficciones")
        fuller = highlight_in(book, "To think is to forget differences, to generalize.", location=1)
        highlight_in(book, "to forget differences", location=2)
        ReviewSettings.objects.create(reader=alice, cards_per_day=5)
        cards = review_queue(reader=alice, today=TODAY)
        assert [card.highlight_id for card in cards] == [fuller.pk]

    def test_it_shows_a_short_highlight_found_in_another_book(self, alice: User) -> None:
        highlight_in(book_of(alice, "Ficciones"), "Memory is a treasury.", location=1)
        short = highlight_in(book_of(alice, "Walden"), "Memory", location=2)
        assert short.pk in {c.highlight_id for c in review_queue(reader=alice, today=TODAY)}

    def test_it_puts_favourites_first_among_the_due(self, alice: User) -> None:
        highlights = library_of(alice, 20)
        favourites = {h.pk for h in highlights[13:16]}
        Highlight.objects.filter(pk__in=favourites).update(favourite=True)
        cards = review_queue(reader=alice, today=TODAY)
        assert {card.highlight_id for card in cards[:3]} == favourites

    def test_it_skips_deleted_notes_and_empty_highlights(self, alice: User) -> None:
        book = book_of(alice, "Ficciones")
        alive = highlight_in(book, "A sentence that stays.", location=1)
        gone = highlight_in(book, "A sentence the reader deleted.", location=2)
        highlight_delete(highlight=gone)
        highlight_in(book, "", location=3)  # an image highlight: nothing to read
        note = highlight_in(book, "A standalone note.", location=4)
        note.kind = Highlight.Kind.NOTE
        note.save()
        assert [c.highlight_id for c in review_queue(reader=alice, today=TODAY)] == [alive.pk]

    def test_it_shows_only_due_highlights(self, alice: User) -> None:
        highlights = library_of(alice, 3)
        for h in highlights[:2]:
            ReviewState.objects.create(reader=alice, highlight=h, due=TODAY + timedelta(days=9))
        cards = review_queue(reader=alice, today=TODAY)
        assert [card.highlight_id for card in cards] == [highlights[2].pk]

    def test_it_offers_the_soonest_one_when_nothing_is_due(self, alice: User) -> None:
        highlights = library_of(alice, 2)
        ReviewState.objects.create(reader=alice, highlight=highlights[0], due=TODAY + timedelta(9))
        ReviewState.objects.create(reader=alice, highlight=highlights[1], due=TODAY + timedelta(3))
        cards = review_queue(reader=alice, today=TODAY)
        assert [card.highlight_id for card in cards] == [highlights[1].pk]

    def test_it_never_mixes_readers(self, alice: User, bob: User) -> None:
        library_of(alice, 5)
        assert review_queue(reader=bob, today=TODAY) == []
        assert highlight_of_the_day(reader=bob, today=TODAY) is None


@pytest.mark.django_db
class HighlightOfTheDayTests:
    def test_it_is_the_first_card_of_the_day(self, alice: User) -> None:
        library_of(alice, 12)
        first = review_queue(reader=alice, today=TODAY)[0]
        assert highlight_of_the_day(reader=alice, today=TODAY) == first.highlight

    def test_it_stays_the_same_after_another_highlight_is_deleted(self, alice: User) -> None:
        highlights = library_of(alice, 12)
        chosen = highlight_of_the_day(reader=alice, today=TODAY)
        for highlight in highlights:
            if highlight != chosen:
                highlight_delete(highlight=highlight)
                break
        library_of(alice, 4)
        assert highlight_of_the_day(reader=alice, today=TODAY) == chosen

    def test_it_moves_on_when_it_is_deleted_itself(self, alice: User) -> None:
        library_of(alice, 12)
        chosen = highlight_of_the_day(reader=alice, today=TODAY)
        assert chosen is not None
        highlight_delete(highlight=chosen)
        assert highlight_of_the_day(reader=alice, today=TODAY) not in (None, chosen)


@pytest.mark.django_db
class ReviewAnswerTests:
    def _card(self, reader: User) -> ReviewCard:
        library_of(reader, 3)
        return review_queue(reader=reader, today=TODAY)[0]

    def test_it_schedules_a_kept_highlight_two_weeks_out(self, alice: User) -> None:
        card = self._card(alice)
        state = review_answer(card=card, answer=Answer.KEEP, today=TODAY, now=_now())
        assert state.due == TODAY + timedelta(days=14)
        assert (state.reviews, card.answer) == (1, "keep")

    def test_it_sends_less_often_further(self, alice: User) -> None:
        card = self._card(alice)
        state = review_answer(card=card, answer=Answer.LESS_OFTEN, today=TODAY, now=_now())
        assert state.due > TODAY + timedelta(days=14)

    def test_it_makes_a_favourite_and_brings_it_back_sooner(self, alice: User) -> None:
        card = self._card(alice)
        state = review_answer(card=card, answer=Answer.FAVOURITE, today=TODAY, now=_now())
        assert Highlight.objects.get(pk=card.highlight_id).favourite
        assert state.due == TODAY + timedelta(days=7)

    def test_a_changed_mind_answers_from_the_same_start(self, alice: User) -> None:
        card = self._card(alice)
        review_answer(card=card, answer=Answer.KEEP, today=TODAY, now=_now())
        state = review_answer(card=card, answer=Answer.LESS_OFTEN, today=TODAY, now=_now())
        assert state.reviews == 1
        # what "less often" gives a never-reviewed highlight: 14 days x ease 2.5 x 2
        assert state.due == TODAY + timedelta(days=70)


@pytest.mark.django_db
class ReviewEmailTests:
    def _subscriber(self, reader: User) -> None:
        reader.email = "alice@example.org"
        reader.save()
        ReviewSettings.objects.create(reader=reader, daily_email=True)
        library_of(reader, 8)

    def test_it_sends_the_days_cards_once(self, alice: User, settings: object) -> None:
        self._subscriber(alice)
        assert review_emails_send(today=TODAY) == 1
        assert review_emails_send(today=TODAY) == 0
        assert len(mail.outbox) == 1
        message = mail.outbox[0]
        assert message.to == ["alice@example.org"]
        cards = review_queue(reader=alice, today=TODAY)
        for card in cards:
            assert card.highlight.text in message.body
        assert "/review/unsubscribe/" in message.body
        assert message.extra_headers["List-Unsubscribe"].startswith("<http")

    def test_it_sends_again_the_next_day(self, alice: User) -> None:
        self._subscriber(alice)
        review_emails_send(today=TODAY)
        assert review_emails_send(today=TODAY + timedelta(days=1)) == 1

    def test_it_sends_nothing_to_readers_who_did_not_ask(self, alice: User, bob: User) -> None:
        library_of(bob, 3)
        bob.email = "bob@example.org"
        bob.save()
        self._subscriber(alice)
        ReviewSettings.objects.filter(reader=alice).update(daily_email=False)
        assert review_emails_send(today=TODAY) == 0
        assert mail.outbox == []

    def test_its_unsubscribe_token_names_the_reader_and_resists_tampering(
        self, alice: User, bob: User
    ) -> None:
        token = unsubscribe_token(alice)
        assert reader_for_unsubscribe_token(token) == alice
        assert reader_for_unsubscribe_token(token[:-2] + "xx") is None
        assert reader_for_unsubscribe_token("nonsense") is None
