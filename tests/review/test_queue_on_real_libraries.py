"""The daily review over real Kindle libraries (../shared/data/clippings, read in place):
a month of reviews never shows a fragment of a fuller highlight, never shows a highlight
again before its time, and gives half of each day to highlights never shown yet; a month of
the words deck shows each word once a day, never before its time, and marks every word in
the sentence it shows."""

from datetime import date, datetime, timedelta

import pytest
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from accounts.models import User
from books.importing.clippings import Clipping, parse_clippings
from books.importing.services import clippings_import
from books.models import Highlight
from books.vocabulary import is_look_up, is_vocabulary, word_key
from review.models import ReviewSettings
from review.scheduler import DEFAULT_EASE, PASSAGE_ANSWERS, Answer, next_schedule
from review.selectors import word_cards_shown
from review.services import review_answer, review_queue, word_answer, word_queue
from review.words import Passage, word_context
from tests.corpus import require_clippings

# Skipped, saying why, on a clone without the shared folder (see tests/corpus.py).
pytestmark = pytest.mark.corpus
CORPUS = require_clippings()

LIBRARIES = ["en/mattioofr-kcp__My Clippings.txt", "en/baniol-kmc__My Clippings.txt"]
START = date(2026, 1, 5)
DAYS = 30


def _fuller_exists(highlight: Highlight) -> bool:
    return any(
        highlight.text in other.text and len(other.text) > len(highlight.text)
        for other in Highlight.objects.alive().filter(book=highlight.book_id).exclude(text="")
    )


@pytest.mark.django_db
@pytest.mark.parametrize("library", LIBRARIES)
def test_a_month_of_reviews_over_a_real_library(alice: User, library: str) -> None:
    path = CORPUS / library
    clippings_import(reader=alice, data=path.read_bytes(), file_name=path.name)
    ReviewSettings.objects.create(reader=alice, cards_per_day=10)
    shown: dict[int, date] = {}
    reviewable = Highlight.objects.filter(reader=alice, kind="highlight").exclude(text="").count()
    answers = [Answer.KEEP, Answer.LESS_OFTEN, Answer.FAVOURITE, Answer.KEEP, Answer.NOTE]
    for offset in range(DAYS):
        today = START + timedelta(days=offset)
        cards = review_queue(reader=alice, today=today)
        assert len(cards) == 10, f"{library}: {len(cards)} cards on day {offset}"
        never_shown = sum(1 for card in cards if card.highlight_id not in shown)
        if reviewable - len(shown) >= 50:
            # half the day's cards walk on through the library, whatever falls due again
            assert never_shown >= 5, f"day {offset}: only {never_shown} new highlights"
        for i, card in enumerate(cards):
            highlight = card.highlight
            assert highlight.text, "a card with nothing to read"
            assert not _fuller_exists(highlight), f"a fragment was shown: {highlight.text!r}"
            last = shown.get(highlight.pk)
            # favourites come back after 7 days at the soonest, the others after 14
            assert last is None or (today - last).days >= 7, "shown again too soon"
            shown[highlight.pk] = today
            now = timezone.make_aware(datetime.combine(today, datetime.min.time()))
            review_answer(card=card, answer=answers[i % len(answers)], today=today, now=now)
    assert len(shown) >= 14 * 10 + 16 * 5 - 20, "the review keeps circling a few highlights"


WORD_LIBRARIES = ["en/baniol-kmc__My Clippings.txt", "pt-BR/arturcp-kcr__My Clippings.txt"]


@pytest.mark.django_db
@pytest.mark.parametrize("library", WORD_LIBRARIES)
def test_a_month_of_the_words_deck_over_a_real_library(alice: User, library: str) -> None:
    path = CORPUS / library
    clippings_import(reader=alice, data=path.read_bytes(), file_name=path.name)
    # The deck's words, each once however often it was looked up ("" has no letter): the
    # look-ups only, never headings or fragments (books.vocabulary.word_kind).
    library_words = {
        word_key(text)
        for text in Highlight.objects.words().values_list("text", flat=True)
        if is_look_up(text)
    }
    library_words.discard("")
    passages = set(Highlight.objects.alive().passages().values_list("book_id", "text"))
    due: dict[str, date] = {}
    answers = [Answer.KNOW, Answer.AGAIN, Answer.NOTE, Answer.KNOW, Answer.OPEN]
    for offset in range(DAYS):
        today = START + timedelta(days=offset)
        cards = word_queue(reader=alice, today=today)
        keys = [card.word for card in cards]
        assert len(keys) == len(set(keys)), f"day {offset}: a word twice in one day"
        never_shown = {card.word for card in cards if card.word not in due}
        eligible = {key for key in library_words if due.get(key, today) <= today}
        assert len(cards) == min(10, len(eligible)), f"day {offset}: {len(cards)} words"
        for card in cards:
            assert card.highlight.is_word
            assert due.get(card.word, today) <= today, f"{card.word!r} shown before its time"
        for shown in word_cards_shown(reader=alice, cards=cards):
            if shown.context is None:
                continue
            marked = [part.text for part in shown.context if part.marked]
            assert marked
            assert all(word_key(m) == shown.card.word for m in marked)
            text = "".join(part.text for part in shown.context)
            assert (shown.card.highlight.book_id, text) in passages
        for i, card in enumerate(cards):
            now = timezone.make_aware(datetime.combine(today, datetime.min.time()))
            state = word_answer(card=card, answer=answers[i % len(answers)], today=today, now=now)
            due[card.word] = state.due
        assert len(never_shown) >= min(5, len(library_words) - len(due) + len(never_shown))


@given(
    # A passage's answers only: "again soon" (the words deck's) is the one that comes closer.
    answers=st.lists(st.sampled_from(PASSAGE_ANSWERS), min_size=1, max_size=12),
    favourite=st.booleans(),
)
def test_every_answer_pushes_the_next_showing_into_the_future(
    answers: list[Answer], favourite: bool
) -> None:
    interval, ease, previous_plain = 0, DEFAULT_EASE, 0
    for answer in answers:
        schedule = next_schedule(
            interval_days=interval, ease=ease, answer=answer, favourite=favourite, today=START
        )
        plain = next_schedule(
            interval_days=interval, ease=ease, answer=answer, favourite=False, today=START
        )
        assert schedule.due > START
        assert schedule.due <= plain.due  # a favourite never waits longer
        assert schedule.interval_days >= previous_plain or schedule.interval_days == 730
        previous_plain = schedule.interval_days
        interval, ease = schedule.interval_days, schedule.ease


def test_every_word_is_marked_in_the_sentences_of_the_real_files() -> None:
    """Over every Kindle file: where a word has a passage near it that holds it, the
    passage comes back whole, with marks that are the word itself. (Imported, most such
    words are absorbed into their passage as duplicates; here the file is read as it is.)"""
    found = 0
    for path in sorted(CORPUS.rglob("*.txt")):
        books: dict[tuple[str, str], list[Clipping]] = {}
        for clipping in parse_clippings(path.read_bytes()).clippings:
            if clipping.kind == "highlight" and clipping.text:
                books.setdefault((clipping.title, clipping.author), []).append(clipping)
        for clippings in books.values():
            passages = [
                Passage(c.text, c.location_start, c.location_end, c.page or "")
                for c in clippings
                if not is_vocabulary(c.text)
            ]
            for word in (c for c in clippings if is_vocabulary(c.text)):
                key = word_key(word.text)
                parts = word_context(
                    key=key, location=word.location_start, page=word.page or "", passages=passages
                )
                if parts is None:
                    continue
                found += 1
                assert "".join(part.text for part in parts) in {p.text for p in passages}
                marks = [part.text for part in parts if part.marked]
                assert marks, word.text
                assert all(word_key(mark) == key for mark in marks), word.text
    assert found >= 40, f"only {found} words found in their sentences"
