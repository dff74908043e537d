"""The daily review: choosing the day's cards (highlights, and the words deck), answering
them, and the daily e-mail."""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from django.conf import settings
from django.core import signing
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, transaction
from django.db.models import CharField, Exists, F, OuterRef, Q, QuerySet, Value
from django.db.models.functions import MD5, Cast, Concat, Length
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext, ngettext

from accounts.models import User
from books.models import Highlight
from books.selectors import book_languages, with_book_languages
from books.vocabulary import is_look_up, word_key
from exogram.links import site_link, site_link_to
from review.models import ReviewCard, ReviewSettings, ReviewState, WordCard, WordState
from review.scheduler import DEFAULT_EASE, Answer, next_schedule
from review.words import WordEntry, words_choose

logger = logging.getLogger(__name__)

UNSUBSCRIBE_SALT = "review.unsubscribe"
# How many of the best-placed candidates are checked for being a fragment of a fuller
# highlight: the containment test is a scan of the book, so it runs on a short list only.
CANDIDATE_WINDOW = 8


def review_settings_for(reader: User) -> ReviewSettings:
    review_settings, _ = ReviewSettings.objects.get_or_create(reader=reader)
    return review_settings


def review_settings_update(
    *, reader: User, cards_per_day: int, words_per_day: int, daily_email: bool, email: str
) -> ReviewSettings:
    """Save what the review settings form checked (review.forms.ReviewSettingsForm), from
    its page or from `manage.py review_settings`; the address is the reader's own, a new
    one unconfirmed until its link is followed (accounts.email_verification)."""
    current = review_settings_for(reader)
    current.cards_per_day = cards_per_day
    current.words_per_day = words_per_day
    current.daily_email = daily_email
    with transaction.atomic():
        current.save(update_fields=["cards_per_day", "words_per_day", "daily_email"])
        reader.email = email
        reader.save(update_fields=["email"])
    return current


def _reviewable(reader: User) -> QuerySet[Highlight]:
    # Highlights with text only: a standalone note or an image highlight has nothing to read.
    # Passages only: a looked-up word (books.vocabulary) is no card to reflect on; the
    # reader reviews those on the words page.
    return (
        Highlight.objects.alive()
        .passages()
        .filter(reader=reader, kind=Highlight.Kind.HIGHLIGHT)
        .exclude(text="")
    )


def _is_fragment() -> Exists:
    """A highlight whose whole text sits inside a longer highlight of the same book: a
    Kindle re-highlight that started mid-sentence. Its fuller version is shown instead."""
    return Exists(
        Highlight.objects.alive()
        .filter(book=OuterRef("book"), text__contains=OuterRef("text"))
        .annotate(length=Length("text"))
        .filter(length__gt=OuterRef("text_length"))
    )


def _first_whole(ordered: QuerySet[Highlight], count: int) -> list[int]:
    """The first `count` ids of `ordered` that are not fragments of a fuller highlight."""
    chosen: list[int] = []
    offset = 0
    while len(chosen) < count:
        window = list(ordered.values_list("pk", flat=True)[offset : offset + CANDIDATE_WINDOW])
        if not window:
            break
        fragments = set(
            Highlight.objects.filter(pk__in=window)
            .annotate(text_length=Length("text"), fragment=_is_fragment())
            .filter(fragment=True)
            .values_list("pk", flat=True)
        )
        chosen += [pk for pk in window if pk not in fragments][: count - len(chosen)]
        offset += CANDIDATE_WINDOW
    return chosen


def _candidates(*, reader: User, today: date, exclude: set[int], count: int) -> list[int]:
    """Up to `count` highlight ids for the day: those due again (most overdue first) and,
    for half of the day's cards, highlights never shown yet (favourites first, then in a
    shuffle that changes daily); either half fills what the other cannot.

    Without the new half, the highlights shown in the first two weeks fall due again and
    fill every later day: measured over a month of a real 600-highlight library, the review
    kept circling 140 highlights (tests/review/test_queue_on_real_libraries.py).
    """
    shuffle = MD5(Concat(Cast("code", CharField()), Value(today.isoformat())))
    base = _reviewable(reader).exclude(pk__in=exclude).annotate(shuffle=shuffle)
    never_shown = base.filter(review_state__isnull=True).order_by("-favourite", "shuffle")
    due_again = base.filter(review_state__due__lte=today).order_by(
        "review_state__due", "-favourite", "shuffle"
    )
    fresh = _first_whole(never_shown, (count + 1) // 2)
    again = _first_whole(due_again, count - len(fresh))
    missing = count - len(fresh) - len(again)
    if missing > 0:
        fresh += _first_whole(never_shown.exclude(pk__in=fresh), missing)
    return again + fresh


def _soonest(*, reader: User, exclude: set[int]) -> list[int]:
    """When nothing is due, the one highlight closest to being due (never a fragment)."""
    ordered = (
        _reviewable(reader)
        .exclude(pk__in=exclude)
        .annotate(text_length=Length("text"), fragment=_is_fragment())
        .filter(fragment=False)
        .order_by(F("review_state__due").asc(nulls_first=True), "-favourite", "pk")
    )
    return list(ordered.values_list("pk", flat=True)[:1])


def review_queue(*, reader: User, today: date) -> list[ReviewCard]:
    """The day's cards, chosen on the first call of the day and kept: a delete, a
    re-import or a new card count later that day never reshuffles the ones chosen."""
    with transaction.atomic():
        review_settings = review_settings_for(reader)
        # One chooser at a time per reader: two tabs opening /review/ at once would
        # otherwise both find no cards and both choose.
        ReviewSettings.objects.select_for_update().filter(pk=review_settings.pk).get()
        existing = list(
            ReviewCard.objects.filter(reader=reader, day=today).values_list(
                "highlight_id", "position"
            )
        )
        missing = review_settings.cards_per_day - len(existing)
        if missing > 0:
            taken = {highlight_id for highlight_id, _ in existing}
            ids = _candidates(reader=reader, today=today, exclude=taken, count=missing)
            if not ids and not existing:
                ids = _soonest(reader=reader, exclude=taken)
            start = max((position for _, position in existing), default=-1) + 1
            try:
                with transaction.atomic():
                    ReviewCard.objects.bulk_create(
                        ReviewCard(reader=reader, day=today, position=start + i, highlight_id=pk)
                        for i, pk in enumerate(ids)
                    )
            except IntegrityError:  # pragma: no cover - a chooser outside the lock
                logger.warning("review queue of %s chosen twice on %s", reader.pk, today)
    return list(
        ReviewCard.objects.filter(reader=reader, day=today, highlight__deleted_at__isnull=True)
        .select_related("highlight__book", "highlight__review_state")
        .order_by("position")
    )


def highlight_of_the_day(*, reader: User, today: date) -> Highlight | None:
    """The first card of the day's review that reads as a sentence, or the first card when
    none does: the same all day, whatever else changes. A line like "Define and brainstorm
    your initial persona" (a heading the vocabulary rules keep as a passage) is a poor
    passage to greet the reader with."""
    cards = review_queue(reader=reader, today=today)
    sentences = [card for card in cards if reads_as_sentence(card.highlight.text)]
    chosen = sentences[0] if sentences else (cards[0] if cards else None)
    return chosen.highlight if chosen else None


# Eight words or more, or a full stop at the end: a sentence, not a heading or a list line.
SENTENCE_MIN_WORDS = 8
# (Japanese and Chinese stops too: U+3002, U+FF01, U+FF1F.)
SENTENCE_ENDS = (".", "!", "?", "…", "\u3002", "\uff01", "\uff1f")
CLOSING_QUOTES = "\"'”\u2019»)]"


def reads_as_sentence(text: str) -> bool:
    words = text.split()
    return len(words) >= SENTENCE_MIN_WORDS or text.strip().rstrip(CLOSING_QUOTES).endswith(
        SENTENCE_ENDS
    )


def review_answer(*, card: ReviewCard, answer: Answer, today: date, now: datetime) -> ReviewState:
    """Record the reader's answer and move the highlight's next showing accordingly."""
    with transaction.atomic():
        highlight = Highlight.objects.select_for_update().get(pk=card.highlight_id)
        state = ReviewState.objects.filter(highlight=highlight).first()
        if card.interval_before is None:
            card.interval_before = state.interval_days if state else 0
            card.ease_before = state.ease if state else DEFAULT_EASE
        if answer is Answer.FAVOURITE and not highlight.favourite:
            highlight.favourite = True
            highlight.save(update_fields=["favourite", "updated"])
        schedule = next_schedule(
            interval_days=card.interval_before,
            ease=card.ease_before if card.ease_before is not None else DEFAULT_EASE,
            answer=answer,
            favourite=highlight.favourite,
            today=today,
        )
        first_answer = not card.answer
        if state is None:
            state = ReviewState(reader_id=card.reader_id, highlight=highlight, reviews=0)
        state.interval_days = schedule.interval_days
        state.ease = schedule.ease
        state.due = schedule.due
        state.last_reviewed_on = today
        state.reviews += 1 if first_answer else 0
        state.save()
        card.answer = answer.value
        card.answered_at = now
        card.save(update_fields=["answer", "answered_at", "interval_before", "ease_before"])
    card.highlight = highlight
    return state


def _word_entries(reader: User) -> list[WordEntry]:
    # Every word of the reader, read once a day: a few hundred short rows even for a large
    # library (a fifth of 4,736 highlights), grouped by word in Python since no column
    # holds the word's key.
    rows = (
        Highlight.objects.alive()
        .words()
        .filter(reader=reader)
        .values_list("pk", "text", "favourite", "note", "book_id", "language")
    )
    languages = book_languages({row[4] for row in rows})
    # Only what a reader looks up (books.vocabulary.word_kind): headings and fragments of
    # sentences stay listed on their book's page and found by keyword, never in the deck.
    # A word's key is folded (one word however capitalised) and read in its book's language
    # as its card shows it ("l'esprit" and "d'esprit": "esprit", one card); the card shows
    # it as written.
    entries = []
    for pk, text, favourite, note, book_id, own in rows:
        language = languages.get(book_id) or own
        if is_look_up(text, language=language):
            key = word_key(text, language=language)
            entries.append(
                WordEntry(highlight_id=pk, key=key, favourite=favourite, has_note=bool(note))
            )
    return entries


def word_queue(*, reader: User, today: date) -> list[WordCard]:
    """The day's words deck, chosen on the first call of the day and kept (see
    review_queue); empty when the reader turned the deck off."""
    with transaction.atomic():
        review_settings = review_settings_for(reader)
        if review_settings.words_per_day == 0:
            return []
        # The same lock as the highlights' queue: one chooser at a time per reader.
        ReviewSettings.objects.select_for_update().filter(pk=review_settings.pk).get()
        existing = list(
            WordCard.objects.filter(reader=reader, day=today).values_list("word", "position")
        )
        missing = review_settings.words_per_day - len(existing)
        if missing > 0:
            chosen = words_choose(
                entries=_word_entries(reader),
                due=dict(WordState.objects.filter(reader=reader).values_list("word", "due")),
                today=today,
                count=missing,
                taken={word for word, _ in existing},
            )
            start = max((position for _, position in existing), default=-1) + 1
            WordCard.objects.bulk_create(
                WordCard(
                    reader=reader,
                    day=today,
                    position=start + i,
                    word=choice.key,
                    highlight_id=choice.highlight_id,
                )
                for i, choice in enumerate(chosen)
            )
    cards = list(
        WordCard.objects.filter(reader=reader, day=today, highlight__deleted_at__isnull=True)
        .select_related("highlight__book")
        .order_by("position")
    )
    # Each word told its book's language, as the words list tells it: the card and the
    # e-mail show it as the list does (an English book's "s'mores" is not "mores").
    with_book_languages(card.highlight for card in cards)
    return cards


def word_answer(*, card: WordCard, answer: Answer, today: date, now: datetime) -> WordState:
    """Record the reader's answer to a word and move the word's next showing.

    Opening a word or writing its definition counts as seeing it (a keep) on a card not
    answered yet, and leaves an answer already given alone: a reader who said "again
    soon" and then wrote the definition down still wants the word back soon.
    """
    with transaction.atomic():
        locked = WordCard.objects.select_for_update().get(pk=card.pk)
        state, _ = WordState.objects.select_for_update().get_or_create(
            reader_id=card.reader_id, word=card.word, defaults={"due": today}
        )
        if answer in (Answer.OPEN, Answer.NOTE) and locked.answer in (
            Answer.KNOW.value,
            Answer.AGAIN.value,
        ):
            return state
        if locked.interval_before is None:
            locked.interval_before = state.interval_days
            locked.ease_before = state.ease
        schedule = next_schedule(
            interval_days=locked.interval_before,
            ease=locked.ease_before if locked.ease_before is not None else DEFAULT_EASE,
            answer=answer,
            favourite=card.highlight.favourite,
            today=today,
        )
        state.reviews += 0 if locked.answer else 1
        state.interval_days = schedule.interval_days
        state.ease = schedule.ease
        state.due = schedule.due
        state.last_reviewed_on = today
        state.save()
        locked.answer = answer.value
        locked.answered_at = now
        locked.save(update_fields=["answer", "answered_at", "interval_before", "ease_before"])
    card.answer, card.answered_at = locked.answer, locked.answered_at
    card.interval_before, card.ease_before = locked.interval_before, locked.ease_before
    return state


def unsubscribe_token(reader: User) -> str:
    return signing.dumps({"reader": reader.pk}, salt=UNSUBSCRIBE_SALT, compress=True)


def reader_for_unsubscribe_token(token: str) -> User | None:
    """The reader a token was made for; None when it was tampered with."""
    try:
        data = signing.loads(token, salt=UNSUBSCRIBE_SALT)
    except signing.BadSignature:
        return None
    reader_id = data.get("reader") if isinstance(data, dict) else None
    if not isinstance(reader_id, int):
        return None
    return User.objects.filter(pk=reader_id).first()


def review_email_unsubscribe(*, reader: User) -> None:
    ReviewSettings.objects.filter(reader=reader).update(daily_email=False)


def review_emails_send(*, today: date) -> int:
    """Send the day's cards to every reader who asked for them; returns how many went.

    Each reader's day is claimed (last_emailed_on) before the message is built, so two
    runs on one day send at most one e-mail per reader.
    """
    sent = 0
    # Only to an address its reader confirmed (accounts.email_verification): anyone could
    # type someone else's.
    readers = (
        ReviewSettings.objects.filter(daily_email=True)
        .exclude(reader__email="")
        .filter(reader__verified_email=F("reader__email"))
    )
    for review_settings in readers.select_related("reader"):
        claimed = (
            ReviewSettings.objects.filter(pk=review_settings.pk)
            .filter(Q(last_emailed_on__isnull=True) | Q(last_emailed_on__lt=today))
            .update(last_emailed_on=today)
        )
        if not claimed:
            continue
        reader = review_settings.reader
        cards = review_queue(reader=reader, today=today)
        words = word_queue(reader=reader, today=today)
        if not cards and not words:
            continue
        review_email_build(reader=reader, cards=cards, words=words, today=today).send()
        sent += 1
    return sent


def _review_subject(*, cards: int, words: int) -> str:
    parts = []
    if cards:
        parts.append(ngettext("%(count)d highlight", "%(count)d highlights", cards))
        parts[-1] %= {"count": cards}
    if words:
        parts.append(ngettext("%(count)d word", "%(count)d words", words) % {"count": words})
    return gettext("Your daily review: %(what)s") % {"what": gettext(" and ").join(parts)}


@dataclass(frozen=True)
class MailedCard:
    """A card as the e-mail shows it, with its absolute links (exogram.links)."""

    highlight: Highlight
    url: str
    book_url: str


def review_email_build(
    *, reader: User, cards: list[ReviewCard], today: date, words: Sequence[WordCard] = ()
) -> EmailMultiAlternatives:
    unsubscribe = site_link_to("review_unsubscribe", args=(unsubscribe_token(reader),))
    context = {
        "reader": reader,
        "cards": [
            MailedCard(
                highlight=card.highlight,
                url=site_link(card.highlight.get_absolute_url()),
                book_url=site_link(card.highlight.book.get_absolute_url()),
            )
            for card in cards
        ],
        "words": words,
        "today": today,
        "review_url": site_link_to("review"),
        "words_url": site_link_to("review_words"),
        "unsubscribe_url": unsubscribe,
    }
    # In the reader's own language, whatever language the sending process runs in.
    with translation.override(reader.language or settings.LANGUAGE_CODE):
        message = EmailMultiAlternatives(
            subject=_review_subject(cards=len(cards), words=len(words)),
            body=render_to_string("review/email.txt", context),
            to=[reader.email],
            headers={"List-Unsubscribe": f"<{unsubscribe}>"},
        )
        html = render_to_string("review/email.html", context)
    message.attach_alternative(html, "text/html")
    return message
