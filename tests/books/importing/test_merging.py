"""When two clippings are one highlight (books.importing.merging): pure, no database."""

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from books.importing.merging import How, merged, page_turn_joined
from books.text import fold_spacing_and_bom as fold

AT = datetime(2025, 3, 3, 14, 20, 33, tzinfo=UTC)


def joined(first: str, second: str, *, seconds: int = 18, shared: bool = True) -> str | None:
    return page_turn_joined(
        first,
        second,
        first_end=2680,
        second_start=2680 if shared else 2681,
        first_added=AT,
        second_added=AT + timedelta(seconds=seconds),
    )


class FoldTests:
    def test_it_folds_whitespace_case_and_byte_order_marks(self) -> None:
        assert fold("\ufeff  To THINK\r\n is\tto  forget ") == "to think is to forget"


class MergedTests:
    def test_it_keeps_the_longer_text_when_it_contains_the_other(self) -> None:
        assert merged("To think is", "to  THINK is to forget", kept_first=True) == (
            "to  THINK is to forget",
            How.EXTENDED,
        )

    def test_it_changes_nothing_when_the_kept_text_holds_the_other(self) -> None:
        assert merged("To think is to forget", "think is", kept_first=True) is None

    def test_it_stitches_a_reselection_that_starts_earlier(self) -> None:
        stored = "Sometimes the blood clot dissolves on its own, and a new deficit develops."
        earlier = "or, as is too often the case, die. Sometimes the blood clot dissolves"

        text, how = merged(stored, earlier, kept_first=False) or ("", None)

        assert how is How.OVERLAPPED
        assert text == (
            "or, as is too often the case, die. Sometimes the blood clot dissolves on its own, "
            "and a new deficit develops."
        )

    def test_it_stitches_in_reading_order_whichever_comes_first(self) -> None:
        first, second = "alpha beta gamma delta epsilon", "gamma delta epsilon zeta eta"
        expected = "alpha beta gamma delta epsilon zeta eta"

        assert merged(first, second, kept_first=True) == (expected, How.OVERLAPPED)
        assert merged(second, first, kept_first=False) == (expected, How.OVERLAPPED)

    def test_it_keeps_the_original_whitespace_and_case_of_the_second_text(self) -> None:
        first, second = "One two Three four five", "three FOUR five\nsix  seven"
        text, _ = merged(first, second, kept_first=True) or ("", 0)
        assert text == "One two Three four five\nsix  seven"

    def test_it_never_merges_neighbouring_sentences_that_share_words(self) -> None:
        liar = "People think that a liar gains a victory over his victim."
        slave = "The man who lies to the world, is the world's slave from then on-"
        assert merged(liar, slave, kept_first=True) is None
        assert merged(slave, liar, kept_first=False) is None

    def test_it_never_merges_on_a_shared_stop_word_or_two(self) -> None:
        assert (
            merged("he walked to the end of the", "of the road and back", kept_first=True) is None
        )

    def test_it_stitches_scripts_without_spaces_over_a_long_stretch(self) -> None:
        first = "海风把旧信吹进抽屉里她数着灯塔的光等待一个不会来的船期"
        second = "抽屉里她数着灯塔的光等待一个不会来的船期夜色很慢记忆很轻"

        text, how = merged(first, second, kept_first=True) or ("", None)

        assert how is How.OVERLAPPED
        assert text == "海风把旧信吹进抽屉里她数着灯塔的光等待一个不会来的船期夜色很慢记忆很轻"

    def test_it_does_not_merge_empty_texts(self) -> None:
        assert merged("", "anything at all here", kept_first=True) is None
        assert merged("anything at all here", " ", kept_first=True) is None

    @settings(max_examples=200, deadline=None)
    @given(
        words=st.lists(
            st.sampled_from(["the", "of", "a", "river", "Memory", "lantern", "ß", "İ", "x\u00a0y"]),
            min_size=2,
            max_size=40,
        ),
        cut_a=st.integers(0, 40),
        cut_b=st.integers(0, 40),
        kept_first=st.booleans(),
    )
    def test_a_merge_always_keeps_every_word_of_both(
        self, words: list[str], cut_a: int, cut_b: int, kept_first: bool
    ) -> None:
        a = " ".join(words[: max(cut_a, cut_b)])
        b = "  ".join(words[min(cut_a, cut_b) :])
        for kept, other in ((a, b), (b, a)):
            outcome = merged(kept, other, kept_first=kept_first)
            if outcome is not None:
                assert fold(kept) in fold(outcome[0])
                assert fold(other) in fold(outcome[0])


class PageTurnTests:
    def test_it_joins_a_highlight_split_at_a_page_turn(self) -> None:
        assert joined(
            "If you are tempted to return null from a",
            "method, consider throwing an exception or returning a SPECIAL CASE object instead.",
        ) == (
            "If you are tempted to return null from a method, consider throwing an exception "
            "or returning a SPECIAL CASE object instead."
        )
        assert (
            joined("First Law You may not write production code until you have", "written a test.")
            == "First Law You may not write production code until you have written a test."
        )

    def test_it_keeps_two_highlights_when_the_first_ends_a_sentence(self) -> None:
        assert joined("People think that a liar gains a victory.", "and the man who lies") is None
        assert joined("Its reasons are three:", "first, that it works") is None
        assert joined("that they were punished like that.”1", "deserving people win.") is None

    def test_it_keeps_two_highlights_when_the_second_starts_a_sentence(self) -> None:
        assert joined("the river kept its own counsel", "The lanterns burned low.") is None

    def test_it_keeps_two_highlights_written_more_than_a_minute_apart(self) -> None:
        assert (
            joined("If you are tempted to return null from a", "method, consider", seconds=61)
            is None
        )

    def test_it_keeps_two_highlights_that_do_not_share_a_location(self) -> None:
        assert (
            joined("If you are tempted to return null from a", "method, ok", shared=False) is None
        )

    def test_it_keeps_looked_up_words_apart(self) -> None:
        assert joined("bingeing", "purging") is None
        assert joined("a gash", "and limp toward the cabin.") is None

    def test_it_needs_both_dates(self) -> None:
        assert (
            page_turn_joined(
                "If you are tempted to return null from a",
                "method, consider throwing",
                first_end=1,
                second_start=1,
                first_added=None,
                second_added=AT,
            )
            is None
        )
