from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from review.scheduler import (
    AGAIN_EASE_STEP,
    AGAIN_WAIT_DAYS,
    DEFAULT_EASE,
    FIRST_INTERVAL_DAYS,
    MAX_EASE,
    MAX_INTERVAL_DAYS,
    MIN_EASE,
    WORD_ANSWERS,
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


class WordScheduleTests:
    def test_it_sends_a_known_word_much_further_than_a_kept_highlight(self) -> None:
        # 14 days x ease 2.5 x 2: a word known at first sight is back in ten weeks
        assert _after([Answer.KNOW]) == [70]
        assert _after([Answer.KNOW])[0] > _after([Answer.KEEP])[0]

    def test_it_brings_a_word_not_known_back_in_two_days(self) -> None:
        assert _after([Answer.AGAIN]) == [AGAIN_WAIT_DAYS]
        assert _after([Answer.KNOW, Answer.KNOW, Answer.AGAIN])[-1] == AGAIN_WAIT_DAYS

    def test_it_starts_a_forgotten_word_over_a_little_slower(self) -> None:
        schedule = next_schedule(
            interval_days=420, ease=3.0, answer=Answer.AGAIN, favourite=False, today=TODAY
        )
        assert (schedule.interval_days, schedule.ease) == (0, 3.0 - AGAIN_EASE_STEP)
        # the next "I know it" starts from the first interval, not from 420 days
        known = next_schedule(
            interval_days=schedule.interval_days,
            ease=schedule.ease,
            answer=Answer.KNOW,
            favourite=False,
            today=TODAY,
        )
        assert known.interval_days == round(FIRST_INTERVAL_DAYS * (schedule.ease + 0.5) * 2)

    def test_it_never_lowers_the_ease_below_its_floor(self) -> None:
        schedule = next_schedule(
            interval_days=0, ease=MIN_EASE, answer=Answer.AGAIN, favourite=True, today=TODAY
        )
        assert schedule.ease == MIN_EASE
        assert schedule.due == TODAY + timedelta(days=AGAIN_WAIT_DAYS)

    @given(
        answers=st.lists(st.sampled_from(WORD_ANSWERS), min_size=1, max_size=15),
        favourite=st.booleans(),
    )
    def test_it_orders_the_words_answers_whatever_came_before(
        self, answers: list[Answer], favourite: bool
    ) -> None:
        """After any history: "again soon" is the soonest, "I know it" the furthest, and
        no word waits more than two years or comes back the same day."""
        interval, ease = 0, DEFAULT_EASE
        for answer in answers:
            waits = {
                option: (
                    next_schedule(
                        interval_days=interval,
                        ease=ease,
                        answer=option,
                        favourite=favourite,
                        today=TODAY,
                    ).due
                    - TODAY
                ).days
                for option in WORD_ANSWERS
            }
            assert 1 <= waits[Answer.AGAIN] <= AGAIN_WAIT_DAYS
            assert waits[Answer.AGAIN] < waits[Answer.OPEN] == waits[Answer.NOTE]
            assert waits[Answer.NOTE] <= waits[Answer.KNOW] <= MAX_INTERVAL_DAYS
            schedule = next_schedule(
                interval_days=interval, ease=ease, answer=answer, favourite=favourite, today=TODAY
            )
            assert MIN_EASE <= schedule.ease <= MAX_EASE
            interval, ease = schedule.interval_days, schedule.ease
