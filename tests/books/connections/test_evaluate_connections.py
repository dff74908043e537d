"""The threshold calibration command, on a tiny STS-B-shaped folder written here (real model)."""

import csv
import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

# (English pair, Spanish translation of the pair, STS score). The scores ≥ 4 are plain
# paraphrases and the scores ≤ 2 share nothing, so the default model must sort them at 0.45.
TRAIN = [
    (
        ("A man is playing the guitar.", "A man plays a guitar."),
        ("Un hombre está tocando la guitarra.", "Un hombre toca una guitarra."),
        5.0,
    ),
    (
        ("The cat is sleeping on the sofa.", "A cat sleeps on the couch."),
        ("El gato está durmiendo en el sofá.", "Un gato duerme en el sofá."),
        4.6,
    ),
    (
        ("A woman is slicing an onion.", "The stock market fell sharply today."),
        ("Una mujer está cortando una cebolla.", "La bolsa cayó bruscamente hoy."),
        0.0,
    ),
    (
        ("Children are playing football in the park.", "The senate passed a tax bill."),
        ("Unos niños juegan al fútbol en el parque.", "El senado aprobó una ley de impuestos."),
        0.4,
    ),
    # Between 2 and 4: ambiguous, left out of every count.
    (
        ("A dog runs across the beach.", "A dog is digging in the sand."),
        ("Un perro corre por la playa.", "Un perro está cavando en la arena."),
        3.0,
    ),
]
DEV = [
    (
        ("A plane is taking off.", "An airplane is taking off."),
        ("Un avión está despegando.", "Un aeroplano está despegando."),
        5.0,
    ),
    (
        ("Two boys are swimming in a lake.", "A chef is baking bread in an oven."),
        ("Dos chicos nadan en un lago.", "Un cocinero hornea pan en un horno."),
        0.0,
    ),
]


def _write(folder: Path, name: str, rows: list[tuple[str, str, float]]) -> None:
    with (folder / name).open("w", newline="", encoding="utf-8") as file:
        csv.writer(file).writerows(rows)


def _sts_folder(folder: Path, *, spanish: bool = True) -> Path:
    for split, pairs in (("train", TRAIN), ("dev", DEV)):
        _write(folder, f"stsb-en-{split}.csv", [(*en, score) for en, _, score in pairs])
        if spanish:
            _write(folder, f"stsb-es-{split}.csv", [(*es, score) for _, es, score in pairs])
    return folder


def _evaluate(folder: Path, *extra: str) -> str:
    out = StringIO()
    call_command(
        "evaluate_connections", "--data", str(folder), *extra, stdout=out, stderr=StringIO()
    )
    return out.getvalue()


def _report(folder: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(_evaluate(folder, "--json"))
    return report


@pytest.fixture(autouse=True)
def _threshold(settings: Any) -> None:
    # Pinned, so the test does not move when the model's default is recalibrated. These
    # figures are MiniLM's (0.45 means nothing to e5, whose distances sit in a narrow band);
    # the default model has its own test below, at its own threshold.
    settings.EXOGRAM_EMBEDDING_MODEL = "minilm-l6"
    settings.EXOGRAM_CONNECTION_THRESHOLD = 0.45


@pytest.mark.django_db
class EvaluateConnectionsTests:
    def test_it_reports_every_split_and_pair_set(self, tmp_path: Path) -> None:
        report = _report(_sts_folder(tmp_path))
        assert report["model"].startswith("all-MiniLM-L6-v2@")
        # MiniLM judges every pair itself, at the setting's cut.
        assert set(report["judges"].values()) == {report["model"]}
        assert all(r["cuts"][0] == 0.45 for r in report["results"] if r["pairs"] == "en")
        assert [(r["split"], r["pairs"]) for r in report["results"]] == [
            ("train", "en"),
            ("train", "es"),
            ("train", "es-en"),
            ("dev", "en"),
            ("dev", "es"),
            ("dev", "es-en"),
        ]
        by_set = {(r["split"], r["pairs"]): r for r in report["results"]}
        # The score-3 pair is left out; Spanish↔English takes each aligned row both ways.
        assert (by_set[("train", "en")]["same"], by_set[("train", "en")]["different"]) == (2, 2)
        assert (by_set[("train", "es-en")]["same"], by_set[("train", "es-en")]["different"]) == (
            4,
            4,
        )
        for result in report["results"]:
            for key in ("at_same_idea", "at_related", "best_f1", "precision_90"):
                metrics = result[key]
                if metrics is None:
                    continue
                assert set(metrics) == {"threshold", "precision", "recall", "f1"} | {
                    "tp",
                    "fp",
                    "fn",
                    "tn",
                }
                assert metrics["tp"] + metrics["fn"] == result["same"]
                assert metrics["fp"] + metrics["tn"] == result["different"]
                assert 0.0 <= metrics["precision"] <= 1.0
                assert 0.0 <= metrics["recall"] <= 1.0
                assert 0.0 < metrics["threshold"] <= 2.0
            assert result["best_f1"]["f1"] >= result["at_same_idea"]["f1"]
            assert result["best_f1"]["f1"] >= result["at_related"]["f1"]
            if result["precision_90"] is not None:
                assert result["precision_90"]["precision"] >= 0.90

    def test_it_connects_a_paraphrase_and_not_an_unrelated_pair(self, tmp_path: Path) -> None:
        report = _report(_sts_folder(tmp_path))
        for result in report["results"]:
            if result["pairs"] != "en":
                continue
            at = result["at_same_idea"]
            # Every plain paraphrase is a true positive, every unrelated pair a true negative.
            assert (at["tp"], at["fn"]) == (result["same"], 0)
            assert (at["fp"], at["tn"]) == (0, result["different"])
            assert at["f1"] == 1.0
            assert result["auc"] == 1.0

    def test_it_prints_a_table(self, tmp_path: Path) -> None:
        table = _evaluate(_sts_folder(tmp_path))
        assert "each pair set judged as the app judges it" in table
        assert "< 0.450" in table
        assert "best F1" in table
        lines = [line.split() for line in table.splitlines()]
        assert [line[:2] for line in lines if line[:1] in (["train"], ["dev"])] == [
            ["train", "en"],
            ["train", "es"],
            ["train", "es-en"],
            ["dev", "en"],
            ["dev", "es"],
            ["dev", "es-en"],
        ]

    def test_it_leaves_nothing_behind(self, tmp_path: Path) -> None:
        tables = set(connection.introspection.table_names())
        _report(_sts_folder(tmp_path))
        # Twice in one transaction: the temporary tables of the first run are gone.
        _report(_sts_folder(tmp_path))
        assert set(connection.introspection.table_names()) == tables

    def test_it_evaluates_english_alone_when_there_is_no_spanish(self, tmp_path: Path) -> None:
        report = _report(_sts_folder(tmp_path, spanish=False))
        assert [(r["split"], r["pairs"]) for r in report["results"]] == [
            ("train", "en"),
            ("dev", "en"),
        ]

    def test_it_reads_the_original_tab_separated_layout(self, tmp_path: Path) -> None:
        lines = [
            f"main-captions\tMSRvid\t2012test\t{n:04d}\t{score:.3f}\t{en[0]}\t{en[1]}\n"
            for n, (en, _, score) in enumerate(TRAIN)
        ]
        (tmp_path / "sts-train.csv").write_text("".join(lines), encoding="utf-8")
        (result,) = _report(tmp_path)["results"]
        assert (result["split"], result["pairs"], result["same"], result["different"]) == (
            "train",
            "en",
            2,
            2,
        )

    def test_it_refuses_misaligned_languages(self, tmp_path: Path) -> None:
        _sts_folder(tmp_path)
        _write(tmp_path, "stsb-es-dev.csv", [("Una frase.", "Otra frase.", 5.0)])
        with pytest.raises(CommandError, match="not aligned"):
            _report(tmp_path)

    def test_it_refuses_a_folder_without_sts_files(self, tmp_path: Path) -> None:
        with pytest.raises(CommandError, match="No STS-B files"):
            _report(tmp_path)
        with pytest.raises(CommandError, match="is not a folder"):
            _report(tmp_path / "missing")


@pytest.mark.django_db
class EvaluateConnectionsPerModelTests:
    def test_it_judges_each_pair_set_as_the_app_does(self, tmp_path: Path) -> None:
        from books.embedding.profiles import E5, MINILM

        folder = _sts_folder(tmp_path)
        report = json.loads(_evaluate(folder, "--json", "--model", "multilingual-e5-small"))
        assert report["model"].startswith("multilingual-e5-small@")
        # Two English sentences by the English model beside e5, the rest by e5 itself, each
        # at its own cuts, not the setting's 0.45.
        assert report["judges"]["en"].startswith("all-MiniLM-L6-v2@")
        assert report["judges"]["es"] == report["judges"]["es-en"] == report["model"]
        cuts = {r["pairs"]: r["cuts"] for r in report["results"]}
        assert cuts["en"] == [MINILM.same_idea_cut, MINILM.related_cut]
        # e5's own cuts, one for every language pair: the distances alone (the pair judge,
        # `train_pair_judge`, weighs them with each pair's context).
        assert cuts["es"] == cuts["es-en"] == [E5.same_idea_cut, E5.related_cut]
        for result in report["results"]:
            at = result["at_related"]
            assert at["fp"] == 0, result["pairs"]  # unrelated pairs never connect
        assert [t["split"] for t in report["translations"]] == ["train", "dev"]
        for translations in report["translations"]:
            assert translations["threshold"] == E5.related_cut
            # Here a sentence's nearest neighbour in the other language is its translation
            # or its pair's (the pairs are near-paraphrases of each other).
            assert translations["es_to_en_recall_at_1"] >= 0.6
            assert translations["en_to_es_recall_at_1"] >= 0.6

    def test_minilm_misses_the_translations(self, tmp_path: Path) -> None:
        report = json.loads(_evaluate(_sts_folder(tmp_path), "--json", "--model", "minilm-l6"))
        assert report["model"].startswith("all-MiniLM-L6-v2@")
        assert all(t["connected"] <= 0.25 for t in report["translations"])

    def test_the_same_idea_of_two_english_sentences_needs_both_models(self, tmp_path: Path) -> None:
        from books.embedding.profiles import E5

        # The English model puts both pairs under its same-idea cut; e5 only the first.
        _write(
            tmp_path,
            "stsb-en-train.csv",
            [
                (
                    "Memory is not a record of the past but a story we keep rewriting every "
                    "time we remember.",
                    "Every act of remembering rewrites the story, so memory is less a record "
                    "than a retelling.",
                    4.8,
                ),
                (
                    "Money cannot buy happiness, but it can buy the time to pursue what makes "
                    "us happy.",
                    "Happiness depends less on money than on the people we spend our days with.",
                    1.6,
                ),
            ],
        )
        report = json.loads(_evaluate(tmp_path, "--json", "--model", "multilingual-e5-small"))
        (result,) = report["results"]
        assert result["same_idea_confirmed_by"] == [report["model"], E5.same_idea_cut]
        assert report["confirmed_by"] == {"en": [report["model"], E5.same_idea_cut]}
        at_same_idea, at_related = result["at_same_idea"], result["at_related"]
        assert (at_same_idea["tp"], at_same_idea["fp"]) == (1, 0)
        # Both connect (related is the English model's alone).
        assert (at_related["tp"], at_related["fp"]) == (1, 1)
        table = _evaluate(tmp_path, "--model", "multilingual-e5-small")
        assert f"is under {E5.same_idea_cut:g} too" in table
