"""The opt-in fast encoder: built by the command, loaded like any model folder, faithful."""

import itertools
import json
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from accounts.models import User
from books.embedding.builtin import minilm_model_spec
from books.embedding.encoder import Encoder
from books.embedding.model_dir import model_spec_from_dir
from books.importing.services import clippings_import
from modelbuild.quantize import MIN_CALIBRATION_TEXTS
from tests.books.kindle import Entry, clippings_file

SUBJECTS = ["Memory", "A garden", "The city", "Every river", "Old age", "A library", "Grief"]
VERBS = ["keeps", "forgets", "hides", "returns", "changes", "carries", "names"]
OBJECTS = [
    "what we loved",
    "the light of an afternoon",
    "the names of the dead",
    "a promise made in winter",
    "every road we did not take",
    "the shape of a voice",
]
# 294 distinct sentences, a little past the minimum.
TEXTS = [f"{s} {v} {o}." for s, v, o in itertools.product(SUBJECTS, VERBS, OBJECTS)]
SENTENCES = [
    "We forget most of what we read within a week.",
    "Most of what we read is forgotten within days.",
    "Prune roses in early spring before the buds open.",
]


@pytest.fixture(scope="module")
def fast_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    texts = tmp_path_factory.mktemp("calibration") / "texts.txt"
    texts.write_text("\n".join(TEXTS))
    directory = tmp_path_factory.mktemp("fast")
    call_command("build_fast_model", str(directory), "--texts", str(texts), stdout=StringIO())
    return directory


class BuildFastModelTests:
    def test_it_writes_a_model_folder_that_loads_and_is_pinned(self, fast_dir: Path) -> None:
        description = json.loads((fast_dir / "exogram_model.json").read_text())
        assert description["name"] == "all-MiniLM-L6-v2-int8"
        assert description["dimensions"] == 384
        spec = model_spec_from_dir(fast_dir)
        assert spec.model_sha256 == description["model_sha256"]
        encoder = Encoder(spec, threads=1)
        assert encoder.vectors_id.startswith("all-MiniLM-L6-v2-int8@")
        assert encoder.vectors_id != Encoder(minilm_model_spec(), threads=1).vectors_id

    def test_its_vectors_stay_close_to_the_full_precision_models(self, fast_dir: Path) -> None:
        fast = Encoder(model_spec_from_dir(fast_dir), threads=1).encode(SENTENCES)
        full = Encoder(minilm_model_spec(), threads=1).encode(SENTENCES)
        np.testing.assert_allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
        assert ((fast * full).sum(axis=1) > 0.98).all()
        # The paraphrases stay closer to each other than to the unrelated sentence.
        assert fast[0] @ fast[1] > fast[0] @ fast[2] + 0.4

    def test_it_says_how_to_use_the_model(self, tmp_path: Path) -> None:
        texts = tmp_path / "texts.txt"
        texts.write_text("\n".join(TEXTS))
        out = StringIO()
        call_command("build_fast_model", str(tmp_path / "m"), "--texts", str(texts), stdout=out)
        assert f"EXOGRAM_EMBEDDING_MODEL_DIR={tmp_path / 'm'}" in out.getvalue()
        assert "manage.py reembed" in out.getvalue()

    def test_it_refuses_too_few_calibration_texts_and_writes_nothing(self, tmp_path: Path) -> None:
        texts = tmp_path / "texts.txt"
        texts.write_text("\n".join(TEXTS[:10]))
        with pytest.raises(CommandError, match=f"at least {MIN_CALIBRATION_TEXTS} texts"):
            call_command("build_fast_model", str(tmp_path / "m"), "--texts", str(texts))
        assert not (tmp_path / "m").exists()

    def test_it_refuses_a_sample_below_the_minimum(self, tmp_path: Path) -> None:
        with pytest.raises(CommandError, match="--sample must be at least"):
            call_command("build_fast_model", str(tmp_path / "m"), "--sample", "10")

    def test_an_unreadable_texts_file_is_a_clear_error(self, tmp_path: Path) -> None:
        with pytest.raises(CommandError, match="Cannot read"):
            call_command("build_fast_model", str(tmp_path / "m"), "--texts", str(tmp_path / "x"))

    def test_a_small_library_is_told_to_import_more(self, alice: User, tmp_path: Path) -> None:
        entries = [
            Entry("Ficciones (Borges, Jorge Luis)", text, location=f"{10 * i}-{10 * i + 1}")
            for i, text in enumerate(TEXTS[:20])
        ]
        clippings_import(reader=alice, data=clippings_file(*entries), file_name="a.txt")
        with pytest.raises(CommandError, match=r"the library has 20\. Import more highlights"):
            call_command("build_fast_model", str(tmp_path / "m"))
