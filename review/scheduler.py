"""When a highlight comes back for review: pure rules, no Django, no clock of their own.

A reading memory is not a flash-card deck: nothing is "wrong", so every answer pushes the
highlight further away, and only the pace differs. *Keep* grows the interval by the
highlight's ease, *less often* grows the ease too (and doubles the step), and a
favourite comes back twice as often as it would otherwise.

The words deck (the reader's looked-up words) is one: a word can be forgotten. *I know it*
sends a word away by the *less often* rule; *again soon* is the one answer that brings
something closer, in two days, and starts the word's pace over a little slower.
"""

from dataclasses import dataclass
from datetime import date, timedelta
from enum import StrEnum


class Answer(StrEnum):
    KEEP = "keep"
    LESS_OFTEN = "less"
    FAVOURITE = "favourite"
    OPEN = "open"
    NOTE = "note"
    # The words deck's own two: a word is known, or it is not yet.
    KNOW = "know"
    AGAIN = "again"


# What each deck's cards can be answered with.
PASSAGE_ANSWERS = (Answer.KEEP, Answer.LESS_OFTEN, Answer.FAVOURITE, Answer.OPEN, Answer.NOTE)
WORD_ANSWERS = (Answer.KNOW, Answer.AGAIN, Answer.OPEN, Answer.NOTE)


# A highlight kept for the first time comes back in two weeks; Readwise-like pacing that
# lets a 5-a-day review walk a few-thousand-highlight library without drowning it.
FIRST_INTERVAL_DAYS = 14
DEFAULT_EASE = 2.0
MIN_EASE = 1.3
MAX_EASE = 4.0
LESS_OFTEN_EASE_STEP = 0.5
# Favourites come back twice as often: the reader asked for them.
FAVOURITE_FACTOR = 0.5
# Nothing disappears for good: at most two years between two showings.
MAX_INTERVAL_DAYS = 730
# A word the reader did not know comes back the day after tomorrow: soon enough to still
# remember the look-up, late enough not to be answered from the screen before. Its ease
# drops as after a lapse in Anki (by 0.2), so the word then comes back more often.
AGAIN_WAIT_DAYS = 2
AGAIN_EASE_STEP = 0.2


@dataclass(frozen=True)
class Schedule:
    # The interval as if the highlight were not a favourite: a favourite's due date is
    # half of it away, so the pace still grows, twice as slowly.
    interval_days: int
    ease: float
    due: date


def next_schedule(
    *, interval_days: int, ease: float, answer: Answer, favourite: bool, today: date
) -> Schedule:
    """The schedule after `answer`, given the one before it (interval 0: never reviewed)."""
    ease = min(MAX_EASE, max(MIN_EASE, ease))
    if answer is Answer.AGAIN:
        # Interval 0: the next answer starts the word over from the first interval.
        ease = max(MIN_EASE, ease - AGAIN_EASE_STEP)
        return Schedule(interval_days=0, ease=ease, due=today + timedelta(days=AGAIN_WAIT_DAYS))
    step = max(interval_days, FIRST_INTERVAL_DAYS) if interval_days else 0
    if answer in (Answer.LESS_OFTEN, Answer.KNOW):
        ease = min(MAX_EASE, ease + LESS_OFTEN_EASE_STEP)
        interval = round(max(step, FIRST_INTERVAL_DAYS) * ease * 2)
    else:
        interval = round(step * ease) if step else FIRST_INTERVAL_DAYS
    interval = min(interval, MAX_INTERVAL_DAYS)
    wait = max(1, round(interval * FAVOURITE_FACTOR)) if favourite else interval
    return Schedule(interval_days=interval, ease=ease, due=today + timedelta(days=wait))
