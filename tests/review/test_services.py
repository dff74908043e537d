from datetime import date, datetime, timedelta

import pytest
from django.core import mail
from django.utils import timezone

from accounts.models import User
from books.models import Highlight
from books.services import highlight_delete
from review.models import ReviewCard, ReviewSettings, ReviewState, WordCard, WordState
from review.scheduler import Answer
from review.services import (
    highlight_of_the_day,
    reader_for_unsubscribe_token,
    review_answer,
    review_emails_send,
    review_queue,
    unsubscribe_token,
    word_answer,
    word_queue,
)
from tests.books.library import book_of, highlight_in, library_of
from tests.review.vocabulary import word_in, words_of

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

    def test_it_prefers_a_sentence_to_a_heading_like_line(self, alice: User) -> None:
        book = book_of(alice, "Product Design")
        heading = highlight_in(book, "Define and brainstorm your initial persona", location=10)
        sentence = highlight_in(book, "Personas are useful fictions.", location=20)
        ReviewState.objects.create(reader=alice, highlight=heading, due=TODAY - timedelta(10))
        ReviewState.objects.create(reader=alice, highlight=sentence, due=TODAY)
        assert review_queue(reader=alice, today=TODAY)[0].highlight == heading
        assert highlight_of_the_day(reader=alice, today=TODAY) == sentence

    def test_it_takes_a_heading_like_line_when_there_is_nothing_else(self, alice: User) -> None:
        heading = highlight_in(book_of(alice, "Product Design"), "Initial persona", location=10)
        assert highlight_of_the_day(reader=alice, today=TODAY) == heading


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
        reader.verified_email = reader.email  # the reader followed the mailed link
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

    def test_it_sends_nothing_to_an_address_its_reader_did_not_confirm(self, alice: User) -> None:
        self._subscriber(alice)
        alice.email = "someone-else@example.org"  # typed, never confirmed
        alice.save()
        assert review_emails_send(today=TODAY) == 0
        assert mail.outbox == []

    def test_its_unsubscribe_token_names_the_reader_and_resists_tampering(
        self, alice: User, bob: User
    ) -> None:
        token = unsubscribe_token(alice)
        assert reader_for_unsubscribe_token(token) == alice
        assert reader_for_unsubscribe_token(token[:-2] + "xx") is None
        assert reader_for_unsubscribe_token("nonsense") is None


@pytest.mark.django_db
class WordQueueTests:
    def test_it_chooses_ten_words_a_day_by_default(self, alice: User) -> None:
        words_of(alice, 12)
        cards = word_queue(reader=alice, today=TODAY)
        assert len(cards) == 10
        assert len({card.word for card in cards}) == 10

    def test_it_follows_the_readers_setting_and_zero_turns_it_off(self, alice: User) -> None:
        words_of(alice, 12)
        ReviewSettings.objects.create(reader=alice, words_per_day=3)
        assert len(word_queue(reader=alice, today=TODAY)) == 3
        ReviewSettings.objects.filter(reader=alice).update(words_per_day=0)
        assert word_queue(reader=alice, today=TODAY + timedelta(days=1)) == []
        assert not WordCard.objects.filter(day=TODAY + timedelta(days=1)).exists()

    def test_it_keeps_the_days_words_all_day(self, alice: User) -> None:
        words_of(alice, 12)
        ReviewSettings.objects.create(reader=alice, words_per_day=4)
        first = [card.word for card in word_queue(reader=alice, today=TODAY)]
        word_in(book_of(alice, "Another"), "limpid", location=5)
        assert [card.word for card in word_queue(reader=alice, today=TODAY)] == first

    def test_it_shows_only_words_never_passages(self, alice: User) -> None:
        library_of(alice, 5)
        words = words_of(alice, 2)
        cards = word_queue(reader=alice, today=TODAY)
        assert {card.highlight_id for card in cards} == {w.pk for w in words}
        assert all(not card.highlight.is_word for card in review_queue(reader=alice, today=TODAY))

    def test_it_shows_only_look_ups_never_headings_or_fragments(self, alice: User) -> None:
        book = book_of(alice, "Punished by Rewards")
        looked_up = word_in(book, "ostensibly,", location=10)
        for n, text in enumerate(["Why Incentives Fail", "continue to", "Introduce yourself"]):
            word_in(book, text, location=20 + n)
        word_in(book, "TABLE 1.1 Jarrett engagements, 1974/5", location=30)

        cards = word_queue(reader=alice, today=TODAY)

        assert [card.highlight_id for card in cards] == [looked_up.pk]

    def test_it_shows_a_word_looked_up_in_two_books_once(self, alice: User) -> None:
        word_in(book_of(alice, "Walden"), "Allay,", location=10)
        defined = word_in(book_of(alice, "Ficciones"), "allay", location=20, note="to calm")
        cards = word_queue(reader=alice, today=TODAY)
        assert [(card.word, card.highlight_id) for card in cards] == [("allay", defined.pk)]

    def test_it_shows_a_word_met_often_once_a_reflexive_pronoun_too(self, alice: User) -> None:
        # A tester's library: "someone" twice in one book, "yourself" six times in two.
        week = book_of(alice, "The 4-Hour Workweek")
        word_in(week, "someone", location=620)
        word_in(week, "someone", location=1460)
        for n in range(6):
            word_in(week if n % 2 else book_of(alice, "Peopleware"), "yourself", location=n)
        word_in(week, "himself", location=2000)
        cards = word_queue(reader=alice, today=TODAY)
        assert sorted(card.word for card in cards) == ["himself", "someone", "yourself"]

    def test_it_skips_deleted_words_and_words_without_a_letter(self, alice: User) -> None:
        book = book_of(alice, "Ficciones")
        gone = word_in(book, "pyre", location=1)
        highlight_delete(highlight=gone)
        word_in(book, "[20].", location=2)
        kept = word_in(book, "iota", location=3)
        assert [card.highlight_id for card in word_queue(reader=alice, today=TODAY)] == [kept.pk]

    def test_it_leaves_the_day_empty_when_every_word_is_due_later(self, alice: User) -> None:
        for word in words_of(alice, 2):
            WordState.objects.create(reader=alice, word=word.text, due=TODAY + timedelta(days=3))
        assert word_queue(reader=alice, today=TODAY) == []
        assert len(word_queue(reader=alice, today=TODAY + timedelta(days=3))) == 2

    def test_it_never_mixes_readers(self, alice: User, bob: User) -> None:
        words_of(alice, 3)
        assert word_queue(reader=bob, today=TODAY) == []


@pytest.mark.django_db
class WordAnswerTests:
    def _card(self, reader: User) -> WordCard:
        words_of(reader, 3)
        return word_queue(reader=reader, today=TODAY)[0]

    def test_it_sends_a_known_word_ten_weeks_out(self, alice: User) -> None:
        card = self._card(alice)
        state = word_answer(card=card, answer=Answer.KNOW, today=TODAY, now=_now())
        assert state.due == TODAY + timedelta(days=70)
        assert (state.word, state.reviews, card.answer) == (card.word, 1, "know")

    def test_it_brings_a_word_not_known_back_in_two_days(self, alice: User) -> None:
        card = self._card(alice)
        state = word_answer(card=card, answer=Answer.AGAIN, today=TODAY, now=_now())
        assert state.due == TODAY + timedelta(days=2)
        tomorrow = word_queue(reader=alice, today=TODAY + timedelta(days=1))
        assert card.word not in {c.word for c in tomorrow}
        back = word_queue(reader=alice, today=TODAY + timedelta(days=2))
        assert card.word in {c.word for c in back}

    def test_a_changed_mind_answers_from_the_same_start(self, alice: User) -> None:
        card = self._card(alice)
        word_answer(card=card, answer=Answer.KNOW, today=TODAY, now=_now())
        state = word_answer(card=card, answer=Answer.AGAIN, today=TODAY, now=_now())
        assert (state.reviews, state.due) == (1, TODAY + timedelta(days=2))
        state = word_answer(card=card, answer=Answer.KNOW, today=TODAY, now=_now())
        assert state.due == TODAY + timedelta(days=70)

    def test_a_definition_counts_as_seen_but_never_undoes_again_soon(self, alice: User) -> None:
        cards = (self._card(alice), *word_queue(reader=alice, today=TODAY)[1:2])
        fresh = word_answer(card=cards[0], answer=Answer.NOTE, today=TODAY, now=_now())
        assert (fresh.due, cards[0].answer) == (TODAY + timedelta(days=14), "note")
        word_answer(card=cards[1], answer=Answer.AGAIN, today=TODAY, now=_now())
        for answer in (Answer.NOTE, Answer.OPEN):
            state = word_answer(card=cards[1], answer=answer, today=TODAY, now=_now())
            assert state.due == TODAY + timedelta(days=2)
        assert WordCard.objects.get(pk=cards[1].pk).answer == "again"

    def test_knowing_a_word_in_one_book_is_knowing_it_in_the_other(self, alice: User) -> None:
        word_in(book_of(alice, "Walden"), "allay", location=10)
        word_in(book_of(alice, "Ficciones"), "Allay.", location=20)
        (card,) = word_queue(reader=alice, today=TODAY)
        word_answer(card=card, answer=Answer.KNOW, today=TODAY, now=_now())
        for offset in range(1, 70):
            assert word_queue(reader=alice, today=TODAY + timedelta(days=offset)) == []
        assert len(word_queue(reader=alice, today=TODAY + timedelta(days=70))) == 1


@pytest.mark.django_db
class ReviewEmailWordsTests:
    def test_it_lists_the_days_words_after_the_highlights(self, alice: User) -> None:
        alice.email = "alice@example.org"
        alice.verified_email = alice.email  # she followed the mailed link
        alice.save()
        ReviewSettings.objects.create(reader=alice, daily_email=True, words_per_day=2)
        library_of(alice, 3)
        book = book_of(alice, "The Word Book")
        # As the selection caught them: the email shows them as the deck does, clean.
        word_in(book, "allay,", location=100, note="to calm, to put to rest")
        word_in(book, "“iota”", location=200)
        assert review_emails_send(today=TODAY) == 1
        message = mail.outbox[0]
        assert message.subject == "Your daily review: 3 highlights and 2 words"
        assert "\nallay — The Word Book: to calm, to put to rest" in message.body
        assert "/review/words/" in message.body
        html = message.alternatives[0][0]
        assert "<strong>iota</strong>" in str(html)

    def test_it_sends_the_words_alone_to_a_reader_with_only_words(self, alice: User) -> None:
        alice.email = "alice@example.org"
        alice.verified_email = alice.email  # she followed the mailed link
        alice.save()
        ReviewSettings.objects.create(reader=alice, daily_email=True)
        words_of(alice, 1)
        assert review_emails_send(today=TODAY) == 1
        assert mail.outbox[0].subject == "Your daily review: 1 word"
        assert "Keep, send further away" not in mail.outbox[0].body
