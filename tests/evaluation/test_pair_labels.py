"""Label sets from the data's own filing, built from a small shared folder written here."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from evaluation.labels import labelled_texts, read_labels
from evaluation.pair_labels import FORTUNES_SUBJECTS, build_label_sets, split_of

EN = ["A man is cutting bread.,A man slices bread.,4.5", "A dog runs.,Stocks fell today.,0.4"]
ES = ["Un hombre corta pan.,Un hombre rebana pan.,4.5", "Un perro corre.,Las acciones bajaron.,0.4"]
MIDDLE = "A cat sleeps.,A cat naps on a sofa.,3.0"


def _write_shared(root: Path) -> Path:
    stsb = root / "eval" / "stsb"
    stsb.mkdir(parents=True)
    for part in ("train", "dev"):
        (stsb / f"stsb-en-{part}.csv").write_text("\n".join([*EN, MIDDLE]) + "\n")
        middle_es = "Un gato duerme.,Un gato dormita en un sofá.,3.0"
        (stsb / f"stsb-es-{part}.csv").write_text("\n".join([*ES, middle_es]) + "\n")
    quotes = [
        {"_id": f"f{i}", "content": f"A friend in need is a friend indeed, number {i}.",
         "author": f"Author {i}", "tags": ["Friendship", "Famous Quotes"]}
        for i in range(12)
    ] + [
        {"_id": f"t{i}", "content": f"Machines will think for us one day, number {i}.",
         "author": f"Writer {i}", "tags": ["Technology"]}
        for i in range(12)
    ] + [{"_id": "w0", "content": "Only a generic tag on this one.", "author": "X",
          "tags": ["Wisdom"]}]  # fmt: skip
    (root / "eval" / "quotable").mkdir()
    (root / "eval" / "quotable" / "quotes.json").write_text(json.dumps(quotes))
    fortunes = root / "eval" / "fortunes_es" / "es"
    fortunes.mkdir(parents=True)
    for subject in FORTUNES_SUBJECTS:
        entries = [
            f"Un dicho sobre {subject}, el número {i}, bastante largo.\n\t\t-- Autor {i}. (1900)"
            for i in range(10)
        ]
        (fortunes / f"{subject}.fortunes").write_text("\n%\n".join(entries) + "\n%\n")
    return root


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    return _write_shared(tmp_path / "shared")


class PairLabelsTests:
    def test_it_labels_stsb_by_score_and_row(self, shared: Path) -> None:
        sets = build_label_sets(shared)
        en = sets["stsb-en"]
        # The middle score is left out; dev rows are test.
        assert [(r.a.locator, r.label) for r in en] == [("0:0", "same"), ("1:0", "unrelated")] * 2
        assert [r.split for r in en[2:]] == ["test", "test"]
        assert {r.split for r in en[:2]} <= {"train", "calibrate", "test"}
        cross = labelled_texts(sets["stsb-es-en"], shared)
        assert (cross[0].a_text, cross[0].b_text) == ("Un hombre corta pan.", "A man slices bread.")
        assert (cross[1].a_text, cross[1].b_text) == (
            "A man is cutting bread.",
            "Un hombre rebana pan.",
        )
        translations = labelled_texts(sets["stsb-translations"], shared)
        assert len(translations) == 6  # every row, the middle one too
        assert (translations[1].a_text, translations[1].b_text) == (
            "Las acciones bajaron.",
            "Stocks fell today.",
        )
        assert {t.label for t in translations} == {"same"}

    def test_it_labels_quotes_by_specific_tags(self, shared: Path) -> None:
        rows = labelled_texts(build_label_sets(shared)["quotable-tags"], shared)
        related = [r for r in rows if r.label == "related"]
        unrelated = [r for r in rows if r.label == "unrelated"]
        assert related
        assert len(related) == len(unrelated)
        for row in related:
            assert ("friend" in row.a_text) == ("friend" in row.b_text)
        for row in unrelated:
            assert ("friend" in row.a_text) != ("friend" in row.b_text)
        # A quote with only a generic tag has no known subject.
        assert not any("generic" in r.a_text or "generic" in r.b_text for r in rows)
        # Both sides of a pair sit in one split.
        for row in rows:
            a_id, b_id = row.row.a.locator, row.row.b.locator
            assert split_of(f"q-{a_id}") == split_of(f"q-{b_id}") == row.row.split

    def test_it_labels_sayings_by_subject_file(self, shared: Path) -> None:
        rows = build_label_sets(shared)["fortunes-es-subjects"]
        assert {r.label for r in rows} == {"related", "unrelated"}
        for row in rows:
            same_file = row.a.source == row.b.source
            assert same_file == (row.label == "related")


class BuildPairLabelsCommandTests:
    def test_it_writes_the_sets_and_checks_them(self, shared: Path, tmp_path: Path) -> None:
        out = tmp_path / "labels"
        output = StringIO()
        call_command("build_pair_labels", shared=shared, out=out, stdout=output)
        assert "stsb-en.tsv: 4 pairs" in output.getvalue()
        assert len(read_labels(out / "quotable-tags.tsv")) > 0
        checked = StringIO()
        call_command("build_pair_labels", shared=shared, out=out, check=True, stdout=checked)
        assert "stsb-translations.tsv: 6 pairs resolve" in checked.getvalue()

    def test_it_says_what_is_missing(self, tmp_path: Path) -> None:
        with pytest.raises(CommandError, match=r"no file eval/stsb/stsb-en-train\.csv"):
            call_command("build_pair_labels", shared=tmp_path, out=tmp_path / "labels")
