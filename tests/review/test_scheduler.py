from datetime import date, timedelta

import pytest

from review.scheduler import (
    DEFAULT_EASE,
    FIRST_INTERVAL_DAYS,
    MAX_EASE,
    MAX_INTERVAL_DAYS,
    Answer,
    next_schedule,
)

TODAY = date(2026, 3, 1)


def _after(answers: list[Answer], *, favourite: bool = False) -> list[int]:
    """Days until the next showing after each answer in turn."""
    interval, ease, waits = 0, DEFAULT_EASE, []
    for answer in answers:
        schedule = next_schedule(
            interval_days=interval, ease=ease, answer=answer, favourite=favourite, today=TODAY
        )
        interval, ease = schedule.interval_days, schedule.ease
        waits.append((schedule.due - TODAY).days)
    return waits


class NextScheduleTests:
    def test_it_brings_a_first_kept_highlight_back_in_two_weeks(self) -> None:
        schedule = next_schedule(
            interval_days=0, ease=DEFAULT_EASE, answer=Answer.KEEP, favourite=False, today=TODAY
        )
        assert schedule.interval_days == FIRST_INTERVAL_DAYS
        assert schedule.due == TODAY + timedelta(days=FIRST_INTERVAL_DAYS)

    def test_it_grows_the_interval_with_each_keep(self) -> None:
        intervals = _after([Answer.KEEP] * 4)
        assert intervals == [14, 28, 56, 112]

    def test_it_sends_a_less_often_highlight_further_than_a_kept_one(self) -> None:
        kept = _after([Answer.KEEP, Answer.KEEP])
        less = _after([Answer.KEEP, Answer.LESS_OFTEN])
        assert less[-1] > kept[-1]

    def test_it_makes_less_often_stick_by_raising_the_ease(self) -> None:
        schedule = next_schedule(
            interval_days=14,
            ease=DEFAULT_EASE,
            answer=Answer.LESS_OFTEN,
            favourite=False,
            today=TODAY,
        )
        assert schedule.ease == DEFAULT_EASE + 0.5
        capped = next_schedule(
            interval_days=14, ease=MAX_EASE, answer=Answer.LESS_OFTEN, favourite=False, today=TODAY
        )
        assert capped.ease == MAX_EASE

    def test_it_brings_favourites_back_twice_as_often(self) -> None:
        plain = _after([Answer.KEEP] * 3)
        favourite = _after([Answer.KEEP] * 3, favourite=True)
        assert favourite == [7, 14, 28]
        assert all(f * 2 == p for f, p in zip(favourite, plain, strict=True))

    @pytest.mark.parametrize("answer", [Answer.OPEN, Answer.NOTE, Answer.FAVOURITE])
    def test_it_schedules_open_note_and_favourite_like_keep(self, answer: Answer) -> None:
        args = {"interval_days": 28, "ease": DEFAULT_EASE, "favourite": False, "today": TODAY}
        assert next_schedule(answer=answer, **args) == next_schedule(answer=Answer.KEEP, **args)  # type: ignore[arg-type]

    def test_it_never_waits_more_than_two_years(self) -> None:
        intervals = _after([Answer.LESS_OFTEN] * 10)
        assert max(intervals) == MAX_INTERVAL_DAYS

    def test_it_clamps_a_nonsense_ease(self) -> None:
        schedule = next_schedule(
            interval_days=14, ease=0.0, answer=Answer.KEEP, favourite=False, today=TODAY
        )
        assert schedule.ease >= 1.3
        assert schedule.interval_days > 14
