"""Blind samples: what the judge sees, the key kept apart, and verdicts read back."""

import json
from pathlib import Path

import pytest

from evaluation.blind import BlindError, BlindPair, read_key, read_verdicts, scored, write_sample

PAIRS = [
    BlindPair("Friends double joy.", "A friend halves grief.", "candidate", "en-en", {"id": 1}),
    BlindPair("Der Weg ist das Ziel.", "Rain falls on the just.", "control", "de-en", {"id": 2}),
    BlindPair("La verdad os hará libres.", "The truth sets you free.", "candidate", "en-es"),
]


class WriteSampleTests:
    def test_it_shows_the_judge_only_the_texts(self, tmp_path: Path) -> None:
        key_path, verdicts_path = write_sample(PAIRS, tmp_path / "sample.txt", seed=3)
        shown = (tmp_path / "sample.txt").read_text(encoding="utf-8")
        for word in ("candidate", "control", "en-en", "de-en", '"id"'):
            assert word not in shown
        for pair in PAIRS:
            assert pair.a_text in shown
            assert pair.b_text in shown
        assert verdicts_path.name == "sample.verdicts.txt"
        key = read_key(key_path)
        assert sorted(item["number"] for item in key) == [1, 2, 3]
        assert sorted(item["group"] for item in key) == ["candidate", "candidate", "control"]

    def test_it_keeps_each_number_with_its_pair(self, tmp_path: Path) -> None:
        key_path, _ = write_sample(PAIRS, tmp_path / "sample.txt", seed=5)
        shown = (tmp_path / "sample.txt").read_text(encoding="utf-8")
        for item in json.loads(key_path.read_text(encoding="utf-8"))["pairs"]:
            block = shown.split(f"[{item['number']}]\n", 1)[1].split("\n\n", 1)[0]
            pair = next(p for p in PAIRS if p.kind == item["kind"])
            assert {pair.a_text, pair.b_text} == {
                line.split(": ", 1)[1] for line in block.splitlines()
            }


class ReadVerdictsTests:
    def test_it_reads_words_and_letters(self, tmp_path: Path) -> None:
        path = tmp_path / "v.txt"
        path.write_text("# a comment\n1 related\n2: u\n\n3 SAME  # a translation\n")
        assert read_verdicts(path, expected=3) == {1: "related", 2: "unrelated", 3: "same"}

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("1 related\n2 maybe\n3 u\n", r"v\.txt:2: '2 maybe'"),
            ("1 related\n1 same\n2 u\n3 u\n", r"v\.txt:2: pair 1 is judged twice"),
            ("1 related\n4 u\n", r"v\.txt:2: no pair 4 \(1-3\)"),
            ("1 related\n", r"2 pairs have no verdict: 2, 3"),
        ],
    )
    def test_it_names_what_is_wrong(self, tmp_path: Path, text: str, message: str) -> None:
        path = tmp_path / "v.txt"
        path.write_text(text)
        with pytest.raises(BlindError, match=message):
            read_verdicts(path, expected=3)

    def test_it_says_when_the_key_is_missing(self, tmp_path: Path) -> None:
        with pytest.raises(BlindError, match="write the sample first"):
            read_key(tmp_path / "none.key.json")


class ScoredTests:
    def test_it_tallies_by_group_and_kind(self, tmp_path: Path) -> None:
        key_path, _ = write_sample(PAIRS, tmp_path / "sample.txt", seed=3)
        key = read_key(key_path)
        verdicts = {
            item["number"]: "unrelated" if item["group"] == "control" else "related" for item in key
        }
        found = scored(key, verdicts)
        assert found[("candidate", "all")].related_share == 1.0
        assert found[("candidate", "en-es")].total == 1
        assert found[("control", "all")].unrelated == 1
        assert (
            str(found[("control", "de-en")]) == "0/1 related (0%; 0 same, 0 related, 1 unrelated)"
        )
