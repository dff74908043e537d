"""Reads for the review pages: what a word card shows besides its highlight."""

from dataclasses import dataclass
from datetime import date

from django.db.models import Q

from accounts.models import User
from books.models import Highlight
from books.selectors import book_languages
from books.vocabulary import is_look_up
from review.models import WordCard, WordState
from review.words import NEAR_LOCATIONS, Part, Passage, word_context


@dataclass(frozen=True)
class ShownWord:
    card: WordCard
    # The sentence the word was looked up in, the word marked; None when the reader did
    # not highlight it.
    context: list[Part] | None
    # The word's next showing, once the card is answered.
    due: date | None

    @property
    def word(self) -> str:
        return self.card.highlight.word_as_written


def _near(card: WordCard) -> Q | None:
    word = card.highlight
    if word.location_start is not None:
        low, high = word.location_start - NEAR_LOCATIONS, word.location_start + NEAR_LOCATIONS
        return Q(book_id=word.book_id, location_start__lte=high) & (
            Q(location_end__gte=low) | Q(location_end__isnull=True, location_start__gte=low)
        )
    if word.page:
        return Q(book_id=word.book_id, page=word.page)
    return None


def word_cards_shown(*, reader: User, cards: list[WordCard]) -> list[ShownWord]:
    """The day's word cards with their sentences and due dates: two queries in all."""
    near = [q for q in (_near(card) for card in cards) if q is not None]
    passages: dict[int, list[Passage]] = {}
    if near:
        query = near[0]
        for q in near[1:]:
            query |= q
        rows = (
            Highlight.objects.alive()
            .passages()
            .filter(query, reader=reader, kind=Highlight.Kind.HIGHLIGHT)
            .values_list("book_id", "text", "location_start", "location_end", "page")
        )
        for book_id, text, start, end, page in rows:
            passages.setdefault(book_id, []).append(Passage(text, start, end, page))
    answered = [card.word for card in cards if card.answer]
    due = dict(
        WordState.objects.filter(reader=reader, word__in=answered).values_list("word", "due")
    )
    return [
        ShownWord(
            card=card,
            context=word_context(
                key=card.word,
                location=card.highlight.location_start,
                page=card.highlight.page,
                passages=passages.get(card.highlight.book_id, []),
            ),
            due=due.get(card.word) if card.answer else None,
        )
        for card in cards
    ]


def words_exist(reader: User) -> bool:
    """Whether the reader has a word for the deck: a look-up, not only headings."""
    words = Highlight.objects.alive().words().filter(reader=reader)
    rows = list(words.values_list("text", "book_id", "language"))
    languages = book_languages({book_id for _, book_id, _ in rows})
    return any(
        is_look_up(text, language=languages.get(book_id) or own) for text, book_id, own in rows
    )


def words_listed(reader: User) -> int:
    """How many words the reader's words page lists (headings and fragments included): a
    reader with some but no look-up is told why the deck stays empty, not "no words yet"."""
    return Highlight.objects.alive().words().filter(reader=reader).count()


def next_word_due(*, reader: User, today: date) -> date | None:
    """When a word comes back next, for the "done for today" line."""
    return (
        WordState.objects.filter(reader=reader, due__gt=today)
        .order_by("due")
        .values_list("due", flat=True)
        .first()
    )
