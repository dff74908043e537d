"""`manage.py search` and `manage.py evaluate_search`, on the real model."""

import json
import random
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from accounts.models import User
from books.importing.services import clippings_import
from books.models import Book, Highlight, Import
from books.search.search import NOTICE_MODEL_UNAVAILABLE
from evaluation.search import (
    EvaluationLibrary,
    assign_books,
    build_library,
    clippings_bytes,
    language_probes,
    names_probes,
    read_labelled_set,
    read_quotes,
    read_sentences,
    read_translations,
    typo,
    words_probes,
)
from tests.books.kindle import MEMORY_LIBRARY, clippings_file

# Written for these tests: three paraphrase pairs (score >= 4) among unrelated sentences.
LABELLED = [
    ("The old lighthouse keeper forgot every name.", "The aged keeper lost all names.", 4.6),
    ("Rain fell on the harbour all night.", "It rained over the port through the night.", 4.2),
    ("She baked bread before dawn.", "Before sunrise she made the loaves.", 4.0),
    ("A train left the station on time.", "The orchard bloomed in a warm winter.", 0.2),
    ("Children played chess in the square.", "The market sold fish and lemons.", 1.4),
    ("He wrote letters to the weather.", "Someone argued with the storm in writing.", 3.2),
]  # fmt: skip


def _run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def stsb(tmp_path: Path) -> Path:
    lines = [f'"{a}","{b}",{score}' for a, b, score in LABELLED]
    (tmp_path / "stsb-en-dev.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


# LABELLED's rows in Spanish, row for row (STS-B's Spanish files are its English ones,
# translated).
SPANISH = [
    ("El viejo farero olvidó todos los nombres.", "El anciano guardián perdió todos los nombres."),
    ("La lluvia cayó sobre el puerto toda la noche.", "Llovió sobre el puerto durante la noche."),
    ("Ella horneó pan antes del amanecer.", "Antes del alba hizo las hogazas."),
    ("Un tren salió de la estación a tiempo.", "El huerto floreció en un invierno templado."),
    ("Unos niños jugaban al ajedrez en la plaza.", "El mercado vendía pescado y limones."),
    ("Escribía cartas al tiempo.", "Alguien discutía por escrito con la tormenta."),
]  # fmt: skip


@pytest.fixture
def stsb_es(stsb: Path) -> Path:
    lines = [
        f'"{a}","{b}",{score}' for (a, b), (_, _, score) in zip(SPANISH, LABELLED, strict=True)
    ]
    (stsb / "stsb-es-dev.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return stsb


class LanguageTaskTests:
    def test_it_asks_in_one_language_for_the_partner_in_the_other(self, stsb_es: Path) -> None:
        labelled = read_labelled_set(stsb_es / "stsb-en-dev.csv", 4.0)
        translations = read_translations(stsb_es / "stsb-en-dev.csv", stsb_es / "stsb-es-dev.csv")
        library = build_library(labelled, [], [], translations)
        assert len(library.texts) == 24
        library.ids = [1000 + n for n in range(len(library.texts))]
        ids = {text: library.ids[n] for n, text in enumerate(library.texts)}
        es_en = {p.query: p for p in language_probes(library, labelled, "es-en")}
        probe = es_en["El viejo farero olvidó todos los nombres."]
        assert probe.wanted == {ids["The aged keeper lost all names."]}
        # Its own sentence in both languages and its Spanish partner are left out.
        assert set(probe.exclude) == {
            ids["The old lighthouse keeper forgot every name."],
            ids["El viejo farero olvidó todos los nombres."],
            ids["El anciano guardián perdió todos los nombres."],
        }
        en_es = {p.query: p for p in language_probes(library, labelled, "en-es")}
        probe = en_es["Before sunrise she made the loaves."]
        assert probe.wanted == {ids["Ella horneó pan antes del amanecer."]}
        assert ids["She baked bread before dawn."] in probe.exclude
        assert len(es_en) == len(en_es) == 6


@pytest.mark.django_db
class SearchCommandTests:
    @pytest.fixture
    def library(self, alice: User) -> None:
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")

    def test_it_prints_the_results(self, library: None) -> None:
        out, _ = _run("search", "--user", "alice", "life-story", "--mode", "keyword")
        assert "1 highlight by words:" in out
        assert "The Man Who Mistook His Wife for a Hat (Sacks, Oliver), location 1520-1522" in out
        assert "We have each of us a life-story" in out

    def test_it_prints_how_each_result_was_found(self, library: None) -> None:
        out, _ = _run("search", "--user", "alice", "life-story", "--mode", "keyword")
        assert "location 1520-1522  [keyword, 0." in out
        # A book named alone lists its highlights in reading order: neither half found them.
        out, _ = _run("search", "--user", "alice", 'book:"ficciones" -sleep')
        listed = [line for line in out.splitlines() if re.match(r" +\d+\. ", line)]
        assert [line.rsplit("  ", 1)[1] for line in listed] == ["[in reading order]"] * 2
        assert "[," not in out

    def test_it_prints_json(self, library: None) -> None:
        out, _ = _run("search", "--user", "alice", "think forget", "--json")
        rows = json.loads(out)
        assert rows[0]["text"] == "To think is to forget differences, to generalize, to abstract."
        assert rows[0]["note"] == "Read this twice."
        assert rows[0]["author"] == "Borges, Jorge Luis"
        assert rows[0]["location"] == "412-414"
        assert "keyword" in rows[0]["matched"]

    def test_it_says_when_nothing_matches(self, library: None) -> None:
        out, _ = _run("search", "--user", "alice", "zebra", "--mode", "keyword")
        assert out.strip() == "No results."

    def test_it_offers_the_readers_word_for_a_slip(self, library: None) -> None:
        out, _ = _run("search", "--user", "alice", "distractd", "--mode", "keyword")
        assert out.splitlines() == ["No results.", "Did you mean: distracted"]
        out, _ = _run("search", "--user", "alice", "remembered evrey", "--mode", "keyword")
        assert out.splitlines()[0] == "Did you mean: remembered every"

    def test_it_falls_back_to_words_without_the_model(
        self, library: None, settings: object, tmp_path: Path
    ) -> None:
        settings.EXOGRAM_EMBEDDING_MODEL_DIR = tmp_path  # type: ignore[attr-defined]
        out, err = _run("search", "--user", "alice", "sleep", "--json")
        assert err.strip() == NOTICE_MODEL_UNAVAILABLE
        assert [row["location"] for row in json.loads(out)] == ["100-102"]

    def test_it_refuses_an_unknown_reader(self, alice: User) -> None:
        with pytest.raises(CommandError, match="No reader named 'zed'"):
            _run("search", "--user", "zed", "memory")


class LabelledSetTests:
    def test_it_reads_pairs_and_places_partners_in_different_books(self, stsb: Path) -> None:
        labelled = read_labelled_set(stsb / "stsb-en-dev.csv", 4.0)
        assert len(labelled.sentences) == 12
        assert labelled.answers == {0: {1}, 1: {0}, 2: {3}, 3: {2}, 4: {5}, 5: {4}}
        shelf = assign_books(labelled, 2)
        assert all(shelf[q] != shelf[p] for q, ps in labelled.answers.items() for p in ps)
        data = clippings_bytes(labelled, shelf)
        assert data.count(b"==========") == 12


# Written for these tests: quotes with authors and tags, and distractor sentences.
QUOTES = [
    {"content": "A friend is a second self who walks beside you.", "author": "Ada Quill",
     "tags": ["Friendship"]},
    {"content": "Every machine dreams of the hand that built it.", "author": "Ada Quill",
     "tags": ["Technology"]},
    {"content": "Friends are the family we choose by lamplight.", "author": "Bram Ostrow",
     "tags": ["Friendship"]},
    {"content": "Courage is fear that has said its prayers.", "author": "Bram Ostrow",
     "tags": ["Courage", "Famous Quotes"]},
]  # fmt: skip
DISTRACTORS = [
    "The ferry waited for the late bus.",
    "Copper pans hung above the stove.",
    "A heron stood still in the reeds.",
]


@pytest.fixture
def quotes(tmp_path: Path) -> Path:
    path = tmp_path / "quotes.json"
    path.write_text(json.dumps(QUOTES), encoding="utf-8")
    return path


@pytest.fixture
def distractors(tmp_path: Path) -> Path:
    path = tmp_path / "distractors.txt"
    path.write_text("\n".join(DISTRACTORS) + "\n\n", encoding="utf-8")
    return path


class SentenceListTests:
    def test_it_reads_any_sentence_list(self, tmp_path: Path, stsb: Path, quotes: Path) -> None:
        text = tmp_path / "lines.txt"
        text.write_text("One.\n\nTwo.\nOne.\n", encoding="utf-8")
        assert read_sentences(text) == ["One.", "Two."]
        assert read_sentences(quotes)[0] == QUOTES[0]["content"]
        from_csv = read_sentences(stsb / "stsb-en-dev.csv")
        assert len(from_csv) == 12
        assert "4.6" not in from_csv

    def test_it_refuses_a_list_it_cannot_read(self, tmp_path: Path) -> None:
        with pytest.raises(CommandError, match="No sentence list"):
            read_sentences(tmp_path / "missing.txt")
        empty = tmp_path / "empty.txt"
        empty.write_text("\n", encoding="utf-8")
        with pytest.raises(CommandError, match="has no sentences"):
            read_sentences(empty)
        broken = tmp_path / "broken.json"
        broken.write_text("{", encoding="utf-8")
        with pytest.raises(CommandError, match="is not JSON"):
            read_sentences(broken)


class GeneratedQueriesTests:
    @pytest.fixture
    def library(self, stsb: Path, quotes: Path) -> EvaluationLibrary:
        labelled = read_labelled_set(stsb / "stsb-en-dev.csv", 4.0)
        built = build_library(labelled, read_quotes(quotes), DISTRACTORS)
        built.ids = list(range(1000, 1000 + len(built.texts)))
        return built

    def test_a_typo_is_one_slip(self) -> None:
        rng = random.Random(1)
        for _ in range(200):
            slipped = typo("lighthouse", rng)
            assert slipped != "lighthouse"
            assert abs(len(slipped) - len("lighthouse")) <= 1
            assert slipped[0] == "l"

    def test_remembered_words_come_from_their_highlight(self, library: EvaluationLibrary) -> None:
        probes = words_probes(library, random.Random(3), 50, typo_share=0.0)
        assert probes
        for probe in probes:
            (target,) = probe.wanted
            text = library.texts[library.ids.index(target)].casefold()
            words = probe.query.split()
            assert 2 <= len(words) <= 4
            assert all(word in text for word in words), probe
            # Never a distractor.
            assert library.ids.index(target) < library.quotes_start + len(library.quotes)

    def test_names_queries_target_the_authors_quotes_on_the_topic(
        self, library: EvaluationLibrary
    ) -> None:
        probes = names_probes(library, random.Random(3), 50)
        # Ada Quill on friendship and on technology, Bram Ostrow on friendship and courage.
        assert len(probes) == 4
        for probe in probes:
            for target in probe.wanted:
                quote = library.quotes[library.ids.index(target) - library.quotes_start]
                assert quote.author.split()[-1] in probe.query
                assert any(tag.casefold() in probe.query for tag in quote.tags)


@pytest.mark.django_db
class EvaluateSearchCommandTests:
    def test_it_measures_three_tasks_and_leaves_nothing_behind(
        self, alice: User, stsb: Path, quotes: Path, distractors: Path
    ) -> None:
        out, _ = _run(
            "evaluate_search", "--data", str(stsb), "--quotes", str(quotes),
            "--distractors", str(distractors), "--json",
        )  # fmt: skip
        report = json.loads(out)
        assert report["highlights"] == 12 + 4 + 3
        assert report["embedded"] == 19
        assert (report["quotes"], report["distractors"]) == (4, 3)
        assert set(report["tasks"]) == {"paraphrase", "words", "names"}
        assert report["tasks"]["paraphrase"]["queries"] == 6
        assert report["tasks"]["names"]["queries"] == 4
        for task in report["tasks"].values():
            assert set(task["modes"]) == {"keyword", "meaning", "hybrid"}
            for row in task["modes"].values():
                assert 0 <= row["recall@1"] <= row["recall@5"] <= row["recall@10"] <= 1
                assert 0 <= row["mrr@10"] <= 1
                assert 0 <= row["loose@10"] <= row["recall@10"]
        # Paraphrases among a few sentences: meaning finds every one in its top five.
        assert report["tasks"]["paraphrase"]["modes"]["meaning"]["recall@5"] == 1.0
        # A name and a topic among four quotes: the author's quote on it comes first.
        assert report["tasks"]["names"]["modes"]["hybrid"]["recall@1"] == 1.0
        assert list(User.objects.values_list("username", flat=True)) == ["alice"]
        assert not Highlight.objects.exists()
        assert not Book.objects.exists()
        assert not Import.objects.exists()

    def test_it_measures_the_language_tasks_with_the_spanish_file(self, stsb_es: Path) -> None:
        out, _ = _run("evaluate_search", "--data", str(stsb_es), "--json")
        report = json.loads(out)
        assert set(report["tasks"]) == {"paraphrase", "words", "es-en", "en-es"}
        assert report["spanish_sentences"] == 12
        assert report["tasks"]["es-en"]["queries"] == 6
        # Three pairs among a few sentences: the partner in the other language is near.
        assert report["tasks"]["es-en"]["modes"]["meaning"]["recall@5"] == 1.0
        assert report["tasks"]["en-es"]["modes"]["meaning"]["recall@5"] == 1.0

    def test_it_refuses_the_language_tasks_without_the_spanish_file(self, stsb: Path) -> None:
        with pytest.raises(CommandError, match="No Spanish translations"):
            _run("evaluate_search", "--data", str(stsb), "--task", "es-en")

    def test_it_prints_a_table(self, stsb: Path) -> None:
        out, _ = _run("evaluate_search", "--data", str(stsb), "--task", "paraphrase")
        lines = out.splitlines()
        assert "12 highlights (12 paraphrase sentences, 0 quotes, 0 distractors)" in lines[0]
        assert lines[1].split() == [
            "task",
            "mode",
            "Recall@1",
            "Recall@5",
            "Recall@10",
            "MRR@10",
            "Loose@10",
            "ms/query",
        ]
        assert [line.split()[:2] for line in lines[2:5]] == [
            ["paraphrase", "keyword"],
            ["paraphrase", "meaning"],
            ["paraphrase", "hybrid"],
        ]

    def test_it_leaves_out_the_names_task_without_quotes(self, stsb: Path) -> None:
        out, err = _run("evaluate_search", "--data", str(stsb), "--json")
        assert set(json.loads(out)["tasks"]) == {"paraphrase", "words"}
        assert "the names task is left out" in err

    def test_it_refuses_a_missing_file(self, tmp_path: Path) -> None:
        with pytest.raises(CommandError, match="No labelled set"):
            _run("evaluate_search", "--data", str(tmp_path))

    def test_it_refuses_the_names_task_without_quotes(self, stsb: Path) -> None:
        with pytest.raises(CommandError, match="No quotes at"):
            _run("evaluate_search", "--data", str(stsb), "--task", "names")
