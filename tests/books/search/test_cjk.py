"""Keyword search in Chinese and Japanese, which put no spaces between words: the stored
keyword text writes each run as pairs of characters (books.text.search_fold), so that a
word inside a sentence is found, and a one-character word too."""

from importlib import import_module
from uuid import uuid4

import pytest
from django.apps import apps
from django.test import Client

from accounts.models import User
from books.models import Book, Highlight
from books.search.search import search
from books.selectors import book_highlights
from books.text import fold, search_fold, search_words

# The reader's own sentences, written for these tests.
JAPANESE = [
    "散歩は脳を休ませる一番の方法だと彼女は言った。",
    "湖の水面は穏やかな状態に戻り、鳥が一羽だけ飛んでいった。",
    "毎朝、新聞で情報を集めるのが祖父の習慣だった。",
    "ハンバーガーを食べた後で、公園のベンチで眠った。",
]
CHINESE = [
    "我们在图书馆里读了一整天的历史书。",
    "他每天早上都去河边跑步，然后喝一杯热茶。",  # noqa: RUF001 (a Chinese comma)
    "历史不会重复，但常常押韵。",  # noqa: RUF001
]
ENGLISH = ["Reading history is a walk through other people's mistakes."]


def _library(reader: User) -> dict[str, Highlight]:
    book = Book.objects.create(reader=reader, title="Notebook", key="notebook")
    made = {}
    for text in [*JAPANESE, *CHINESE, *ENGLISH]:
        highlight = Highlight(reader=reader, book=book, text=text, dedupe_key=uuid4().hex)
        highlight.refresh_search_text()
        highlight.save()
        made[text] = highlight
    return made


def _found(reader: User, query: str) -> list[str]:
    return [r.highlight.text for r in search(reader, query, mode="keyword").results]


class SearchFoldTests:
    def test_it_writes_a_run_as_pairs_of_characters(self) -> None:
        assert search_fold("脳を休ませる。") == " 脳を を休 休ま ませ せる る 。"

    def test_it_leaves_text_without_chinese_or_japanese_as_fold_does(self) -> None:
        for text in ["Liquidación del Ärger", "Straße", "한국어 문장", "plain words"]:
            assert search_fold(text) == fold(text)

    def test_it_writes_a_query_word_as_the_pairs_it_must_find_in_order(self) -> None:
        assert search_words(["休ませる"]) == ("休ま", "ませ", "せる")
        assert search_words(["aiの時代"]) == ("ai", "の時", "時代")
        # Before another word, the run ends there: its last character is a word of its own.
        assert search_words(["休ませる", "ai"]) == ("休ま", "ませ", "せる", "る", "ai")
        assert search_words(["脳"]) == ("脳",)


@pytest.mark.django_db
class JapaneseKeywordTests:
    @pytest.mark.parametrize(
        ("query", "expected"),
        [
            ("脳を休ませる", JAPANESE[0]),
            ("穏やかな状態", JAPANESE[1]),
            ("情報", JAPANESE[2]),
            ("ハンバーガー", JAPANESE[3]),
            ("方法", JAPANESE[0]),
            ("祖父", JAPANESE[2]),
        ],
    )
    def test_it_finds_a_word_inside_a_sentence(
        self, alice: User, query: str, expected: str
    ) -> None:
        _library(alice)
        assert _found(alice, query) == [expected]

    def test_it_still_finds_the_whole_clause(self, alice: User) -> None:
        _library(alice)
        assert _found(alice, "散歩は脳を休ませる一番の方法だと彼女は言った") == [JAPANESE[0]]

    def test_it_requires_the_characters_in_order(self, alice: User) -> None:
        """Every pair of `休ませ` is somewhere in "休ま…ませ" only in that order: `せ休`
        is not, and `状態穏やか` has both words but not side by side."""
        _library(alice)
        assert _found(alice, "せ休") == []
        assert _found(alice, '"状態穏やか"') == []

    def test_it_finds_a_single_character(self, alice: User) -> None:
        _library(alice)
        assert _found(alice, "湖") == [JAPANESE[1]]
        # The last character of a run is a word of its own: `茶` ends `热茶`.
        assert _found(alice, "鳥") == [JAPANESE[1]]
        assert _found(alice, "茶") == [CHINESE[1]]

    def test_two_words_must_both_be_there(self, alice: User) -> None:
        _library(alice)
        assert _found(alice, "公園 眠った") == [JAPANESE[3]]
        # No highlight has both: the any-word pass says so.
        assert search(alice, "公園 祖父", mode="keyword").keyword_pass == "any"

    def test_it_leaves_out_an_excluded_word(self, alice: User) -> None:
        _library(alice)
        assert _found(alice, "情報 -祖父") == []


@pytest.mark.django_db
class ChineseKeywordTests:
    def test_it_finds_a_word_inside_a_sentence(self, alice: User) -> None:
        _library(alice)
        assert _found(alice, "图书馆") == [CHINESE[0]]
        assert _found(alice, "跑步") == [CHINESE[1]]
        assert sorted(_found(alice, "历史")) == sorted([CHINESE[0], CHINESE[2]])

    def test_english_beside_it_is_found_as_before(self, alice: User) -> None:
        _library(alice)
        assert _found(alice, "history") == [ENGLISH[0]]
        assert _found(alice, '"a walk through"') == [ENGLISH[0]]


@pytest.mark.django_db
class BookPageFilterTests:
    def test_the_book_page_finds_a_word_inside_a_sentence(self, alice: User) -> None:
        made = _library(alice)
        book = made[JAPANESE[0]].book
        assert [h.text for h in book_highlights(book, query="情報")] == [JAPANESE[2]]
        assert [h.text for h in book_highlights(book, query="湖")] == [JAPANESE[1]]


@pytest.mark.django_db
class SearchPageTests:
    def test_the_search_page_lists_a_japanese_word(self, alice: User, alice_client: Client) -> None:
        _library(alice)
        page = alice_client.get("/search/", {"q": "穏やかな状態", "mode": "keyword"})
        assert "湖の水面は<mark>穏やかな状態</mark>に戻り" in page.content.decode()

    def test_it_marks_a_single_character(self, alice: User, alice_client: Client) -> None:
        _library(alice)
        page = alice_client.get("/search/", {"q": "湖", "mode": "keyword"})
        assert "<mark>湖</mark>の水面は穏やかな状態" in page.content.decode()


@pytest.mark.django_db
class MigrationTests:
    def test_it_writes_stored_rows_as_pairs_and_leaves_others(self, alice: User) -> None:
        made = _library(alice)
        # As an earlier version stored them: the whole run one word.
        for highlight in made.values():
            Highlight.objects.filter(pk=highlight.pk).update(search_text=fold(highlight.text))
        assert _found(alice, "情報") == []
        migration = import_module("books.migrations.0032_cjk_search_pairs")
        migration.pair_search_text(apps, None)
        assert _found(alice, "情報") == [JAPANESE[2]]
        english = Highlight.objects.get(pk=made[ENGLISH[0]].pk)
        assert english.search_text == fold(ENGLISH[0])
        migration.unpair_search_text(apps, None)
        assert _found(alice, "情報") == []
