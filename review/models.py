import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from books.models import Highlight
from review.scheduler import DEFAULT_EASE, Answer

MAX_CARDS_PER_DAY = 50
MAX_WORDS_PER_DAY = 50


class ReviewSettings(models.Model):
    """A reader's daily review: how many cards, and whether they come by e-mail."""

    reader = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_settings"
    )
    cards_per_day = models.PositiveSmallIntegerField(default=5)
    # The words deck (review.words): 0 turns it off. Ten, like a vocabulary app's daily
    # set: a word is answered in a second, a passage is read.
    words_per_day = models.PositiveSmallIntegerField(default=10)
    daily_email = models.BooleanField(default=False)
    # The day the last e-mail went out: claimed before sending, so a second run that day
    # (a beat restart, the command by hand) sends nothing twice.
    last_emailed_on = models.DateField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "review settings"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(cards_per_day__gte=1)
                & models.Q(cards_per_day__lte=MAX_CARDS_PER_DAY),
                name="review_settings_cards_per_day_range",
            ),
            models.CheckConstraint(
                condition=models.Q(words_per_day__lte=MAX_WORDS_PER_DAY),
                name="review_settings_words_per_day_range",
            ),
        ]

    def __str__(self) -> str:
        return f"review settings of {self.reader}"


class Schedule(models.Model):
    """Where something stands in spaced repetition (review.scheduler): both decks'."""

    interval_days = models.PositiveIntegerField(default=0)
    ease = models.FloatField(default=DEFAULT_EASE)
    due = models.DateField()
    reviews = models.PositiveIntegerField(default=0)
    last_reviewed_on = models.DateField(null=True, blank=True)

    class Meta:
        abstract = True


class DayCard(models.Model):
    """One card of one reader's deck on one day, chosen once and kept all day. Both decks'."""

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    day = models.DateField()
    position = models.PositiveSmallIntegerField()
    answered_at = models.DateTimeField(null=True, blank=True)
    # The schedule before the first answer: a reader who changes their mind is answered
    # from the same start, not from the schedule their first answer made.
    interval_before = models.PositiveIntegerField(null=True, blank=True)
    ease_before = models.FloatField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["day", "position"]


class ReviewState(Schedule):
    """Where one highlight stands in its reader's spaced repetition."""

    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_states"
    )
    highlight = models.OneToOneField(
        Highlight, on_delete=models.CASCADE, related_name="review_state"
    )

    class Meta:
        indexes = [
            # The day's queue: a reader's highlights that are due, soonest first.
            models.Index(fields=["reader", "due"], name="review_state_reader_due"),
        ]

    def __str__(self) -> str:
        return f"{self.highlight_id} due {self.due}"


class ReviewCard(DayCard):
    """One highlight in one reader's review of one day. The day's cards are chosen once
    and kept, so the review (and the highlight of the day) stay the same all day."""

    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_cards"
    )
    highlight = models.ForeignKey(Highlight, on_delete=models.CASCADE, related_name="+")
    answer = models.CharField(
        max_length=16,
        blank=True,
        choices=[
            (Answer.KEEP.value, _("Kept")),
            (Answer.LESS_OFTEN.value, _("Less often")),
            (Answer.FAVOURITE.value, _("Favourite")),
            (Answer.OPEN.value, _("Opened")),
            (Answer.NOTE.value, _("Noted")),
        ],
    )

    class Meta(DayCard.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["reader", "day", "highlight"], name="review_card_once_a_day"
            ),
            models.UniqueConstraint(
                fields=["reader", "day", "position"], name="review_card_position_per_day"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.day} #{self.position}: {self.highlight_id}"


class WordState(Schedule):
    """Where one of the reader's words stands in its own spaced repetition. Kept per word
    (books.vocabulary.word_key), not per highlight: a word looked up in two books is one word
    to learn, and knowing it in one book is knowing it."""

    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="word_states"
    )
    word = models.TextField()

    class Meta:
        constraints = [
            # Also the index of the day's choice, which reads a reader's words and dues.
            models.UniqueConstraint(fields=["reader", "word"], name="word_state_once_per_reader"),
        ]

    def __str__(self) -> str:
        return f"{self.word} due {self.due}"


class WordCard(DayCard):
    """One word in one reader's words deck of one day, shown from one of its highlights;
    chosen once and kept all day, like the highlights' cards."""

    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="word_cards"
    )
    word = models.TextField()
    highlight = models.ForeignKey(Highlight, on_delete=models.CASCADE, related_name="+")
    answer = models.CharField(
        max_length=16,
        blank=True,
        choices=[
            (Answer.KNOW.value, _("Known")),
            (Answer.AGAIN.value, _("Again soon")),
            (Answer.OPEN.value, _("Opened")),
            (Answer.NOTE.value, _("Defined")),
        ],
    )

    class Meta(DayCard.Meta):
        constraints = [
            models.UniqueConstraint(fields=["reader", "day", "word"], name="word_card_once_a_day"),
            models.UniqueConstraint(
                fields=["reader", "day", "position"], name="word_card_position_per_day"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.day} #{self.position}: {self.word}"
