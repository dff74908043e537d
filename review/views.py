from collections.abc import Callable, Mapping
from dataclasses import dataclass
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_stubs_ext import StrOrPromise

from accounts.email_verification import email_is_verified, email_verification_send
from books.access import reader_of
from books.services import highlight_note_update
from review.forms import (
    AnswerForm,
    CardNoteForm,
    ReviewSettingsForm,
    WordAnswerForm,
    WordNoteForm,
)
from review.models import ReviewCard, ReviewState, WordCard, WordState
from review.scheduler import Answer
from review.selectors import (
    ShownWord,
    next_word_due,
    word_cards_shown,
    words_exist,
    words_listed,
)
from review.services import (
    reader_for_unsubscribe_token,
    review_answer,
    review_email_unsubscribe,
    review_queue,
    review_settings_for,
    word_answer,
    word_queue,
)

STATUS = {
    Answer.KEEP: _("Kept. It comes back on {due}."),
    Answer.LESS_OFTEN: _("Less often: it comes back on {due}."),
    Answer.FAVOURITE: _("A favourite now: it comes back sooner, on {due}."),
    Answer.OPEN: _("Kept. It comes back on {due}."),
    Answer.NOTE: _("Note saved. It comes back on {due}."),
}
WORD_STATUS = {
    Answer.KNOW: _("You know it: it comes back on {due}."),
    Answer.AGAIN: _("Again soon: it comes back on {due}."),
    Answer.OPEN: _("It comes back on {due}."),
    Answer.NOTE: _("Definition saved. It comes back on {due}."),
}


@dataclass(frozen=True)
class _Deck:
    """What differs between the two decks, the highlights' and the words': the rest of
    answering a card, writing its note and saying what happened is one code path."""

    card: type[ReviewCard] | type[WordCard]
    answer_form: type[AnswerForm] | type[WordAnswerForm]
    answer: Callable[..., ReviewState | WordState]
    status: Mapping[Answer, StrOrPromise]
    page: str
    bad_answer: StrOrPromise
    note_form: type[CardNoteForm] | type[WordNoteForm]


HIGHLIGHTS = _Deck(
    card=ReviewCard,
    answer_form=AnswerForm,
    answer=review_answer,
    status=STATUS,
    page="review",
    bad_answer=_("That is not an answer a card takes; nothing changed."),
    note_form=CardNoteForm,
)
WORDS = _Deck(
    card=WordCard,
    answer_form=WordAnswerForm,
    answer=word_answer,
    status=WORD_STATUS,
    page="review_words",
    bad_answer=_("That is not an answer a word takes; nothing changed."),
    note_form=WordNoteForm,
)


def _get_card_for_user(request: HttpRequest, deck: _Deck, code: UUID) -> ReviewCard | WordCard:
    card = get_object_or_404(
        deck.card.objects.select_related("highlight__book"),
        code=code,
        reader=reader_of(request),
        highlight__deleted_at__isnull=True,
    )
    assert isinstance(card, ReviewCard | WordCard)
    return card


@require_GET
@login_required
def review(request: HttpRequest) -> HttpResponse:
    reader = reader_of(request)
    today = timezone.localdate()
    cards = review_queue(reader=reader, today=today)
    next_due = (
        ReviewState.objects.filter(reader=reader, due__gt=today, highlight__deleted_at__isnull=True)
        .order_by("due")
        .values_list("due", flat=True)
        .first()
    )
    context = {
        "cards": cards,
        "answered": sum(1 for card in cards if card.answer),
        "total": len(cards),
        "today": today,
        "next_due": next_due,
        "settings": review_settings_for(reader),
    }
    return render(request, "review/review.html", context)


@require_GET
@login_required
def review_words(request: HttpRequest) -> HttpResponse:
    """The words deck: the day's looked-up words, each with the sentence it was read in."""
    reader = reader_of(request)
    today = timezone.localdate()
    cards = word_queue(reader=reader, today=today)
    answered = sum(1 for card in cards if card.answer)
    has_words = bool(cards) or words_exist(reader)
    context = {
        "shown": word_cards_shown(reader=reader, cards=cards),
        "answered": answered,
        "total": len(cards),
        "today": today,
        "settings": review_settings_for(reader),
        "has_words": has_words,
        "words_listed": 0 if has_words else words_listed(reader),
        "next_due": next_word_due(reader=reader, today=today)
        if not cards or answered == len(cards)
        else None,
    }
    return render(request, "review/words.html", context)


def _day_counts(card: ReviewCard | WordCard) -> dict[str, int]:
    """How many of the card's day (of its deck) are answered, and how many there are."""
    day = type(card).objects.filter(
        reader=card.reader_id, day=card.day, highlight__deleted_at__isnull=True
    )
    return {"answered": day.exclude(answer="").count(), "total": day.count()}


def _answered(
    request: HttpRequest,
    deck: _Deck,
    card: ReviewCard | WordCard,
    state: ReviewState | WordState,
    *,
    noted: bool = False,
) -> HttpResponse:
    """The card answered in place (htmx, with the day's count out of band), or the deck's
    page again with what happened. `noted`: a word's definition was just written (its
    answer may stay what it was), so the card shows it open."""
    status = deck.status[Answer(card.answer)].format(due=date_format(state.due))
    if not request.headers.get("HX-Request"):
        messages.success(request, status)
        return redirect(deck.page)
    if isinstance(card, WordCard):
        (shown,) = word_cards_shown(reader=reader_of(request), cards=[card])
        item = ShownWord(card=shown.card, context=shown.context, due=state.due)
        context = {"item": item, "status": status, "defined": noted, **_day_counts(card)}
        return render(request, "review/words.html#answered", context)
    assert isinstance(state, ReviewState)
    card.highlight.review_state = state
    context = {"card": card, "status": status, **_day_counts(card)}
    return render(request, "review/_card_answered.html", context)


def _card_refused(
    request: HttpRequest, card: ReviewCard | WordCard, status: str, *, typed_note: str
) -> HttpResponse:
    context = {"status": status, "refused": True, "typed_note": typed_note, **_day_counts(card)}
    if isinstance(card, WordCard):
        (context["item"],) = word_cards_shown(reader=reader_of(request), cards=[card])
        return render(request, "review/words.html#answered", context)
    return render(request, "review/_card_answered.html", {"card": card, **context})


def _answer(request: HttpRequest, deck: _Deck, code: UUID) -> HttpResponse:
    card = _get_card_for_user(request, deck, code)
    form = deck.answer_form(request.POST)
    if not form.is_valid():
        messages.error(request, deck.bad_answer)
        return redirect(deck.page)
    answer = Answer(form.cleaned_data["answer"])
    state = deck.answer(card=card, answer=answer, today=timezone.localdate(), now=timezone.now())
    if answer is Answer.OPEN:
        return redirect(card.highlight)
    return _answered(request, deck, card, state)


def _note(request: HttpRequest, deck: _Deck, code: UUID) -> HttpResponse:
    """The card's note (a word's definition): written, and counted as seeing the card."""
    card = _get_card_for_user(request, deck, code)
    form = deck.note_form(request.POST)
    if not form.is_valid():
        status = str(form.errors["note"][0])
        if request.headers.get("HX-Request"):
            # The card again, its note open with what the reader typed, and why it was not kept.
            typed_note = request.POST.get("note", "").replace("\x00", "")
            return _card_refused(request, card, status, typed_note=typed_note)
        messages.error(request, status)
        return redirect(deck.page)
    highlight_note_update(highlight=card.highlight, note=form.cleaned_data["note"])
    today, now = timezone.localdate(), timezone.now()
    state = deck.answer(card=card, answer=Answer.NOTE, today=today, now=now)
    return _answered(request, deck, card, state, noted=True)


@require_POST
@login_required
def card_answer(request: HttpRequest, code: UUID) -> HttpResponse:
    return _answer(request, HIGHLIGHTS, code)


@require_POST
@login_required
def card_note(request: HttpRequest, code: UUID) -> HttpResponse:
    return _note(request, HIGHLIGHTS, code)


@require_POST
@login_required
def word_card_answer(request: HttpRequest, code: UUID) -> HttpResponse:
    return _answer(request, WORDS, code)


@require_POST
@login_required
def word_card_note(request: HttpRequest, code: UUID) -> HttpResponse:
    return _note(request, WORDS, code)


@require_http_methods(["GET", "POST"])
@login_required
def review_settings(request: HttpRequest) -> HttpResponse:
    reader = reader_of(request)
    current = review_settings_for(reader)
    initial = {
        "cards_per_day": current.cards_per_day,
        "words_per_day": current.words_per_day,
        "daily_email": current.daily_email,
        "email": reader.email,
    }
    form = ReviewSettingsForm(
        request.POST if request.method == "POST" else None, initial=initial, reader=reader
    )
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, gettext("Review settings saved."))
        if reader.email and not email_is_verified(reader):
            email_verification_send(reader=reader, request=request)
            messages.info(
                request,
                gettext("No e-mail goes to %(email)s until you follow the link mailed to it.")
                % {"email": reader.email},
            )
        return redirect("review")
    return render(request, "review/settings.html", {"form": form})


@require_http_methods(["GET", "POST"])
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    """From the e-mail's link, no login needed: the signed token names the reader. A GET
    only asks (mail scanners follow links); the POST unsubscribes."""
    reader = reader_for_unsubscribe_token(token)
    if reader is None:
        return render(request, "review/unsubscribe.html", {"invalid": True}, status=400)
    done = False
    if request.method == "POST":
        review_email_unsubscribe(reader=reader)
        done = True
    return render(request, "review/unsubscribe.html", {"done": done})
