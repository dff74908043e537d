"""The *related* calibration of evaluate_connections, on a tiny quotable-shaped folder and
a tiny fortunes_es-shaped one written here (real models), and the pair labelling it rests on."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from books.embedding.profiles import E5, MINILM
from evaluation.sts_data import (
    TaggedQuote,
    read_fortunes_subjects,
    related_pairs,
)

QUOTES = [
    ("A friend is one who knows you and loves you just the same.", "Hubbard", ["Friendship"]),
    ("True friendship is a plant of slow growth.", "Washington", ["Friendship", "Famous Quotes"]),
    ("Friends show their love in times of trouble.", "Euripides", ["Friendship"]),
    ("Technology is a useful servant but a dangerous master.", "Lange", ["Technology"]),
    ("Computers are useless. They can only give you answers.", "Picasso", ["Technology"]),
    ("The machine does not isolate us from the great problems of nature.", "Saint-Exupéry",
     ["Technology", "Famous Quotes"]),
    ("In the depth of winter I learned there was in me an invincible summer.", "Camus",
     ["Famous Quotes"]),
    ("Well done is better than well said.", "Franklin", ["Wisdom"]),
]  # fmt: skip


def _folder(path: Path) -> Path:
    rows = [{"content": c, "author": a, "tags": t} for c, a, t in QUOTES]
    (path / "quotes.json").write_text(json.dumps(rows), encoding="utf-8")
    return path


def _quotes() -> list[TaggedQuote]:
    return [TaggedQuote(c, a, frozenset(t)) for c, a, t in QUOTES]


class RelatedPairsTests:
    def test_related_pairs_share_a_specific_tag_across_authors(self) -> None:
        pairs = related_pairs(_quotes())
        texts = {q.text: set(q.tags) for q in _quotes()}
        related = [p for p in pairs if p.same]
        # Three friendship pairs and three technology pairs.
        assert len(related) == 6
        for pair in related:
            assert texts[pair.first] & texts[pair.second] - {"Famous Quotes"}

    def test_unrelated_pairs_share_no_tag_and_have_a_subject(self) -> None:
        pairs = related_pairs(_quotes())
        texts = {q.text: set(q.tags) for q in _quotes()}
        unrelated = [p for p in pairs if not p.same]
        assert unrelated
        for pair in unrelated:
            assert not texts[pair.first] & texts[pair.second]
            # A quote with only generic tags has no known subject: never in a pair.
            assert "Well done is better than well said." not in (pair.first, pair.second)
            assert not pair.first.startswith("In the depth of winter")

    def test_it_draws_the_same_pairs_every_time(self) -> None:
        assert related_pairs(_quotes()) == related_pairs(_quotes())


def _evaluate(*args: str) -> str:
    out = StringIO()
    call_command("evaluate_connections", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.mark.django_db
class EvaluateRelatedTests:
    def test_it_reports_precision_and_recall_per_threshold(self, tmp_path: Path) -> None:
        from books.embedding.profiles import MINILM

        report = json.loads(_evaluate("--quotable", str(_folder(tmp_path)), "--json"))
        # English quotes, judged as the app judges two English passages: by the English
        # model beside the default one, at its related cut.
        assert report["related_threshold"] == MINILM.related_cut
        assert report["model"].startswith("all-MiniLM-L6-v2@")
        # 3 x 3 friendship-technology pairs, less Washington's and Saint-Exupéry's, which
        # share "Famous Quotes": as many as among all the pairs.
        assert (report["related"], report["unrelated"]) == (6, 8)
        thresholds = [row["threshold"] for row in report["table"]]
        assert thresholds == sorted(thresholds)
        assert thresholds[0] == 0.2
        assert thresholds[-1] == 0.7
        recalls = [row["recall"] for row in report["table"]]
        assert recalls == sorted(recalls)
        at = report["at_threshold"]
        assert at["tp"] + at["fn"] == 6
        assert at["fp"] + at["tn"] == 8
        # Friends with friends and machines with machines are closer than the rest.
        assert report["auc"] > 0.7
        if report["precision_75"] is not None:
            assert report["precision_75"]["precision"] >= 0.75

    def test_it_prints_a_table(self, tmp_path: Path) -> None:
        table = _evaluate("--quotable", str(_folder(tmp_path)))
        assert f"current related threshold {MINILM.related_cut:.3f}" in table
        assert "P ≥ 0.75" in table

    def test_it_needs_a_folder(self) -> None:
        with pytest.raises(CommandError, match="--data"):
            _evaluate()

    def test_it_explains_a_folder_without_quotes(self, tmp_path: Path) -> None:
        with pytest.raises(CommandError, match=r"No quotes\.json"):
            _evaluate("--quotable", str(tmp_path))


SPANISH_CUT = E5.related_cut

# Spanish sayings in strfile files, one a subject; refranes gathers them by source.
SAYINGS = {
    "amistad": [
        ("La amistad es un alma que habita en dos cuerpos.", "Aristóteles"),
        ("Un amigo fiel es un refugio seguro en los días de tormenta.", "Eclesiástico"),
        ("Los amigos verdaderos se conocen en la desgracia.", "Eurípides"),
    ],
    "ciencia": [
        ("La ciencia avanza midiendo lo que antes nadie sabía medir.", "Kelvin"),
        ("Un experimento bien hecho vale más que mil teorías.", "Faraday"),
        ("La investigación científica empieza con una pregunta sencilla.", "Curie"),
    ],
    "refranes": [("A quien madruga, Dios le ayuda, dice el refrán.", "Refrán")],
}


def _fortunes(path: Path) -> Path:
    folder = path / "es"
    folder.mkdir()
    for subject, sayings in SAYINGS.items():
        entries = [f"{text}\n\t\t-- {author}. Escritor.\n" for text, author in sayings]
        (folder / f"{subject}.fortunes").write_text("%\n".join(entries), encoding="utf-8")
    return path


class FortunesSubjectsTests:
    def test_each_saying_is_tagged_with_its_subject_and_the_gatherings_are_left_out(
        self, tmp_path: Path
    ) -> None:
        sayings = read_fortunes_subjects(_fortunes(tmp_path))
        assert {(q.author, *q.tags) for q in sayings} == {
            (author, subject)
            for subject, rows in SAYINGS.items()
            if subject != "refranes"
            for _text, author in rows
        }
        related = [p for p in related_pairs(sayings) if p.same]
        assert len(related) == 6  # three friendship pairs, three science pairs

    def test_it_explains_a_folder_without_sayings(self, tmp_path: Path) -> None:
        with pytest.raises(CommandError, match="No Spanish sayings"):
            read_fortunes_subjects(tmp_path)


@pytest.mark.django_db
class EvaluateSpanishRelatedTests:
    def test_it_judges_spanish_sayings_as_the_app_judges_two_spanish_passages(
        self, tmp_path: Path
    ) -> None:
        report = json.loads(_evaluate("--fortunes", str(_fortunes(tmp_path)), "--json"))
        assert report["pair_set"] == "es"
        assert "amistad" in report["subjects"]
        assert "generic_tags" not in report
        assert report["model"].startswith("multilingual-e5-small@")
        # e5's own cut, one for every language pair (the pair judge weighs the rest).
        assert report["related_threshold"] == pytest.approx(SPANISH_CUT)
        assert (report["related"], report["unrelated"]) == (6, 9)
        # e5's table is in hundredths, from half its cut to twice it.
        thresholds = [row["threshold"] for row in report["table"]]
        assert thresholds == pytest.approx(
            [0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.10, 0.11, 0.12, 0.13, 0.14]
        )
        assert report["auc"] > 0.7

    def test_it_prints_both_calibrations_and_refuses_both_in_json(self, tmp_path: Path) -> None:
        quotable = tmp_path / "quotable"
        quotable.mkdir()
        _folder(quotable)
        fortunes = tmp_path / "fortunes"
        fortunes.mkdir()
        _fortunes(fortunes)
        table = _evaluate("--quotable", str(quotable), "--fortunes", str(fortunes))
        assert "en pairs, model all-MiniLM-L6-v2@" in table
        assert "es pairs, model multilingual-e5-small@" in table
        assert f"current related threshold {SPANISH_CUT:.3f}" in table
        with pytest.raises(CommandError, match="one of --data, --quotable and --fortunes"):
            _evaluate("--quotable", str(quotable), "--fortunes", str(fortunes), "--json")

    def test_a_bad_second_folder_fails_before_anything_is_encoded(self, tmp_path: Path) -> None:
        quotable = tmp_path / "quotable"
        quotable.mkdir()
        _folder(quotable)
        out, err = StringIO(), StringIO()
        with pytest.raises(CommandError, match="No Spanish sayings"):
            call_command(
                "evaluate_connections", "--quotable", str(quotable), "--fortunes",
                str(tmp_path / "missing"), stdout=out, stderr=err,
            )  # fmt: skip
        assert out.getvalue() == ""
        assert "encoding" not in err.getvalue()


def test_a_saying_filed_under_two_subjects_is_one_quote_with_both(tmp_path: Path) -> None:
    folder = tmp_path / "es"
    folder.mkdir()
    saying = "La libertad de un amigo es el mayor regalo.\n\t\t-- Séneca. Filósofo.\n"
    for subject in ("amistad", "libertad"):
        (folder / f"{subject}.fortunes").write_text(saying, encoding="utf-8")
    (quote,) = read_fortunes_subjects(tmp_path)
    assert quote.tags == {"amistad", "libertad"}
