"""A French or Italian word looked up with its elided article ("l'esprit", "d'esprit") is
the word "esprit" (books.vocabulary.word_key reads the elision as word_as_written does, in
the book's language): its schedule was kept under the key with the article, one per
article, so the words deck showed "esprit" twice. Each such schedule moves to the word's
key; where the word already had one (two articles, or the word looked up alone), they
become one: the schedule due soonest (review.scheduler: a word can be forgotten, "again
soon" is a reader saying so, and the deck shows a word when it is due; the soonest is the
showing the reader would have had first), the most answers, the latest day answered. A
key some highlight still has (an English book's "l'esprit", a name "d'Artagnan") keeps its
schedule as well. Cards already dealt move to the word's key; a day's second card of the
word goes, unless it was answered (then it stays as it was, a day's history).

Only the schedules whose key opens on an elision are read, and for their readers only the
words with an apostrophe: a few rows.
"""

import re
import unicodedata
from typing import Any

from django.db import migrations
from django.db.models import Count, Q

# books.vocabulary.word_key as it was before this migration: the elision kept.
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'"})
_QUOTED_EDGE = re.compile(r"^\W+|\W+$")


def _key_before(text: str) -> str:
    from books.text import fold

    tokens = []
    for token in unicodedata.normalize("NFC", text).translate(_APOSTROPHES).split():
        token = _QUOTED_EDGE.sub("", token)
        if any(ch.isalpha() for ch in token):
            tokens.append(token)
    return fold(" ".join(tokens))


def _book_languages(Highlight: Any, book_ids: set[int]) -> dict[int, str]:
    # books.selectors.book_languages: the language most of a book's passages are in.
    rows = (
        Highlight.objects.filter(book_id__in=book_ids, deleted_at__isnull=True, is_word=False)
        .exclude(language="unknown")
        .values_list("book_id", "language")
        .annotate(count=Count("id"))
        .order_by("book_id", "-count", "language")
    )
    languages: dict[int, str] = {}
    for book_id, language, _ in rows:
        languages.setdefault(book_id, language)
    return languages


def _merged(states: list[Any]) -> tuple[Any, int, Any]:
    """The schedule due soonest, the most answers, the latest day answered."""
    soonest = min(states, key=lambda s: (s.due, -s.interval_days, -s.reviews))
    answered = [s.last_reviewed_on for s in states if s.last_reviewed_on is not None]
    return soonest, max(s.reviews for s in states), max(answered, default=None)


def elided_words_one_key(apps: Any, schema_editor: Any) -> None:
    from books.vocabulary import opens_on_elision, word_key

    Highlight = apps.get_model("books", "Highlight")
    WordState = apps.get_model("review", "WordState")
    WordCard = apps.get_model("review", "WordCard")
    elided: dict[int, set[str]] = {}
    for reader_id, word in WordState.objects.values_list("reader_id", "word").iterator():
        if opens_on_elision(word):
            elided.setdefault(reader_id, set()).add(word)
    apostrophe = Q()
    for mark in ("'", "\u2019", "\u2018", "`"):
        apostrophe |= Q(text__contains=mark)
    for reader_id, keys in elided.items():
        words = list(
            Highlight.objects.filter(apostrophe, reader_id=reader_id, is_word=True).values_list(
                "pk", "text", "book_id", "language"
            )
        )
        languages = _book_languages(Highlight, {book_id for _, _, book_id, _ in words})
        new_key: dict[int, str] = {}
        kept: set[str] = set()  # old keys a highlight still has
        moves: dict[str, set[str]] = {}  # new key -> the old keys it takes the schedule of
        for pk, text, book_id, own in words:
            before = _key_before(text)
            if before not in keys:
                continue
            after = word_key(text, language=languages.get(book_id) or own)
            new_key[pk] = after
            if after == before:
                kept.add(before)
            else:
                moves.setdefault(after, set()).add(before)
        if not moves:
            continue
        states = {
            s.word: s
            for s in WordState.objects.filter(
                reader_id=reader_id, word__in=set(moves) | {k for ks in moves.values() for k in ks}
            )
        }
        for after, befores in moves.items():
            merged = [states[k] for k in sorted(befores)] + (
                [states[after]] if after in states else []
            )
            soonest, reviews, last = _merged(merged)
            target = states.get(after) or WordState(reader_id=reader_id, word=after)
            target.due, target.interval_days, target.ease = (
                soonest.due,
                soonest.interval_days,
                soonest.ease,
            )
            target.reviews, target.last_reviewed_on = reviews, last
            target.save()
            states[after] = target
        gone = {k for ks in moves.values() for k in ks} - kept
        WordState.objects.filter(reader_id=reader_id, word__in=gone).delete()
        cards = WordCard.objects.filter(reader_id=reader_id, word__in=keys)
        taken = set(
            WordCard.objects.filter(reader_id=reader_id, word__in=set(moves)).values_list(
                "day", "word"
            )
        )
        # A card shown from a highlight no longer read as the word (joined into another
        # since) follows its word's schedule.
        moved = {before: after for after, befores in moves.items() for before in befores - kept}
        for card in cards.order_by("day", "position"):
            after = new_key.get(card.highlight_id) or moved.get(card.word, card.word)
            if after == card.word:
                continue
            if (card.day, after) not in taken:
                card.word = after
                card.save(update_fields=["word"])
                taken.add((card.day, after))
            elif not card.answer:
                # The word's second card of a day, not answered: the deck deals another word
                # in its place (review.services.word_queue fills the day up).
                card.delete()


class Migration(migrations.Migration):
    dependencies = [
        ("books", "0045_sentences_are_not_headings"),
        ("review", "0002_words_deck"),
    ]

    operations = [migrations.RunPython(elided_words_one_key, migrations.RunPython.noop)]
