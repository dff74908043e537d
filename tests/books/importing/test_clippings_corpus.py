"""The parser against the real clippings files in ../shared/data/clippings (when present).

Those files have no licence to be copied into the project, so they are read in place and
these tests skip when the folder is not beside the repository.
"""

# ruff: noqa: RUF001

import re
from collections import Counter
from pathlib import Path

import pytest

from books.importing.clippings import (
    CLIPPING_LIMIT_PLACEHOLDERS,
    NOT_A_CLIPPINGS_FILE,
    ParseResult,
    Problem,
    parse_clippings,
)
from tests.corpus import require_clippings

# Skipped, saying why, on a clone without the shared folder (see tests/corpus.py).
pytestmark = pytest.mark.corpus
CORPUS = require_clippings()

CLIPPINGS_FILES = sorted(CORPUS.glob("*/*.txt"))
# html/ holds Kindle "Export notebook" HTML and multi/ a TypeScript test that embeds entries
# in strings: other formats, which the parser must refuse as a whole rather than misread.
OTHER_FILES = sorted(path for path in CORPUS.glob("*/*") if path.suffix != ".txt")

ALL_LANGUAGES = {"en", "es", "de", "fr", "it", "pt", "nl", "ru", "ja", "zh"}
# Files sit in a folder named for their UI language; multi/ mixes several.
FOLDER_LANGUAGES = {
    "en": {"en"},
    "es": {"es"},
    "de": {"de"},
    "pt-BR": {"pt"},
    "ru": {"ru"},
    "ja": {"ja"},
    "zh": {"zh"},
}
MULTI_LANGUAGES = {
    "samueldg-clippings__MyClippings.txt": {"en", "es"},
    "yakimka-clippings__my_clippings_languages_examples.txt": ALL_LANGUAGES,
}

# Written independently of the parser: a line shaped like any language's metadata line.
METADATA_LINE = re.compile(
    r"^\s*[-–] .*\|\s*(?:Added on|Hinzugefügt am|Añadido el|Ajouté le|Aggiunto in data"
    r"|Toegevoegd op|Adicionado:|Добавлено:|作成日:|添加于)",
    flags=re.MULTILINE,
)
SEPARATOR_LINE = re.compile(rb"^(?:\xef\xbb\xbf)?==========\s*$", flags=re.MULTILINE)


def corpus_id(path: Path) -> str:
    return str(path.relative_to(CORPUS))


def parse(path: Path) -> ParseResult:
    return parse_clippings(path.read_bytes())


def clipping_limit_counts() -> dict[str, int]:
    """SOURCES.md's count of clipping-limit lines per file, measured without this parser."""
    sources = (CORPUS / "SOURCES.md").read_text(encoding="utf-8")
    counts = {}
    for section in sources.split("\n### `")[1:]:
        name = section.split("`", 1)[0]
        found = re.search(r"clipping-limit lines: (\d+)", section)
        if found:
            counts[name] = int(found.group(1))
    return counts


@pytest.mark.parametrize("path", CLIPPINGS_FILES, ids=corpus_id)
class CorpusFileTests:
    def test_it_accounts_for_every_entry_without_problems(self, path: Path) -> None:
        result = parse(path)

        assert len(result.clippings) + len(result.problems) == result.entries
        assert result.problems == []
        # Every entry ends with a separator; a file may also start with one.
        separators = len(SEPARATOR_LINE.findall(path.read_bytes()))
        assert separators - 1 <= result.entries <= separators

    def test_it_keeps_metadata_lines_out_of_highlight_text(self, path: Path) -> None:
        for clipping in parse(path).clippings:
            assert not METADATA_LINE.search(clipping.text), (clipping.line, clipping.text)
            # `…арестовали ==========` is highlighted text; a separator line never is.
            assert "==========" not in (line.strip() for line in clipping.text.split("\n"))

    def test_it_gives_every_highlight_a_title_a_date_and_a_position(self, path: Path) -> None:
        for clipping in parse(path).clippings:
            assert clipping.title, clipping.line
            assert "\ufeff" not in clipping.title
            assert clipping.added_at is not None, (clipping.line, clipping.added_raw)
            assert clipping.page is not None or clipping.location_start is not None
            if clipping.location_end is not None:
                assert clipping.location_start is not None
                assert clipping.location_end >= clipping.location_start, clipping.line

    def test_it_detects_the_folders_ui_language(self, path: Path) -> None:
        languages = {clipping.language for clipping in parse(path).clippings}

        folder = path.parent.name
        if folder == "multi":
            assert languages == MULTI_LANGUAGES.get(path.name, languages & ALL_LANGUAGES)
        else:
            assert languages == FOLDER_LANGUAGES[folder]

    def test_it_finds_every_clipping_limit_line_that_sources_md_counts(self, path: Path) -> None:
        expected = clipping_limit_counts().get(corpus_id(path))
        if expected is None:
            pytest.skip(f"SOURCES.md does not count clipping-limit lines for {corpus_id(path)}")

        clippings = parse(path).clippings
        # SOURCES.md counts the bodies that are a placeholder alone; a few more keep their
        # first words before it (24 in the corpus), and none keeps the placeholder.
        replaced = [clipping for clipping in clippings if clipping.truncated and not clipping.text]

        assert len(replaced) == expected
        assert not any(c.text.endswith(tuple(CLIPPING_LIMIT_PLACEHOLDERS)) for c in clippings)


@pytest.mark.parametrize("path", OTHER_FILES, ids=corpus_id)
class OtherFormatTests:
    def test_it_reports_the_file_as_not_a_clippings_file(self, path: Path) -> None:
        result = parse(path)

        assert result.clippings == []
        assert result.problems == [Problem(line=1, message=NOT_A_CLIPPINGS_FILE)]


class CorpusTests:
    def test_it_reads_every_ui_language_somewhere_in_the_corpus(self) -> None:
        languages: Counter[str] = Counter()
        for path in CLIPPINGS_FILES:
            languages.update(clipping.language for clipping in parse(path).clippings)

        assert set(languages) == ALL_LANGUAGES
        assert languages["en"] > 5_000
        assert languages["pt"] > 5_000
        assert languages["ja"] > 3_000
