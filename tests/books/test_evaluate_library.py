"""evaluate_library and blind_pairs on tiny libraries written here: the real import path,
the real model, the real database; the shared data is a small folder written here too."""

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import User
from books.importing.clippings import parse_clippings
from books.models import Connection, Highlight
from books.vocabulary import is_vocabulary
from evaluation import library
from evaluation.blind import BlindPair, read_key, read_key_notes, write_sample
from evaluation.kindle_books import LibraryBook, Passage, add_lookups
from evaluation.labels import SHARED_DATA, LabelError, labelled_texts, read_labels
from evaluation.quote_library import clippings_file, make_books

QUOTES = [
    ("A friend is one who knows you and loves you just the same.", "Elbert Hubbard"),
    ("True friendship is a plant of slow growth.", "George Washington"),
    ("Friends show their love in times of trouble, not in happiness.", "Euripides"),
    ("Technology is a useful servant but a dangerous master.", "Christian Lange"),
    ("Computers are useless. They can only give you answers.", "Pablo Picasso"),
    # The same idea as the first quote, in other words: a connection under any rule.
    ("A real friend knows everything about you and loves you all the same.", "Woodrow Wilson"),
    ("It is not a lack of love, but a lack of friendship that makes unhappy marriages.",
     "Friedrich Nietzsche"),
    ("Machines take me by surprise with great frequency.", "Alan Turing"),
]  # fmt: skip
SAYINGS_ES = [
    "Un amigo de verdad te conoce y te quiere igual, con todos tus defectos.",
    "La amistad verdadera es una planta de lento crecimiento.",
    "Las máquinas nos sorprenden con mucha frecuencia, dijo el matemático.",
]
SAYINGS_DE = [
    "Ein wahrer Freund kennt dich ganz und hat dich trotzdem gern.",
    "Die Technik ist ein nützlicher Diener, aber ein gefährlicher Herr.",
    "Freundschaft ist eine Pflanze, die langsam wächst und lange hält.",
]


def _folder(path: Path) -> Path:
    (path / "quotable").mkdir()
    # One topic each: each quote lands in an anthology of its own (its author has too few
    # quotes for a book), under its own editor.
    rows = [{"content": c, "author": a, "tags": [f"Topic {i}"]} for i, (c, a) in enumerate(QUOTES)]
    (path / "quotable" / "quotes.json").write_text(json.dumps(rows), encoding="utf-8")
    return path


def _shared(root: Path) -> Path:
    """A shared data folder in the layout of the real one, with the texts above."""
    quotes = [
        {"_id": f"q{i}", "content": c, "author": a, "tags": ["Friendship"]}
        for i, (c, a) in enumerate(QUOTES)
    ]
    (root / "eval" / "quotable").mkdir(parents=True)
    (root / "eval" / "quotable" / "quotes.json").write_text(json.dumps(quotes), encoding="utf-8")
    for folder, name, sayings in (
        ("fortunes_es/es", "amistad.fortunes", SAYINGS_ES),
        ("fortunes_de", "zitate", SAYINGS_DE),
    ):
        (root / "eval" / folder).mkdir(parents=True)
        text = "\n%\n".join(f"{s}\n\t\t-- Autor {i}" for i, s in enumerate(sayings))
        (root / "eval" / folder / name).write_text(text + "\n%\n", encoding="utf-8")
    return root


def _many_languages(shared: Path) -> library.Library:
    """Three books, one a language, each passage traced to the folder above."""
    books = [
        LibraryBook(
            f"Book {number}",
            f"Author {number}",
            language,
            [Passage(text, "", language, "", source, str(i)) for i, text in enumerate(t)],
        )
        for number, (language, source, t) in enumerate(
            [
                ("en", "eval/quotable/quotes.json", [c for c, _ in QUOTES]),
                ("es", "eval/fortunes_es/es/amistad.fortunes", SAYINGS_ES),
                ("de", "eval/fortunes_de/zitate", SAYINGS_DE),
            ]
        )
    ]
    # quotable's locators are its ids.
    books[0].entries = [
        Passage(p.text, "", "en", "", p.source, f"q{p.locator}")
        for p in books[0].entries
        if isinstance(p, Passage)
    ]
    add_lookups(books, share=0.2, seed=1)
    return library.Library(books)


class LibraryBuildingTests:
    def test_lookups_come_from_the_books_own_passages_at_the_share_asked(self) -> None:
        books = make_books([Passage(c, a, "en", "Friendship") for c, a in QUOTES], seed=1)
        added = add_lookups(books, share=0.2, seed=1)
        entries = [e if isinstance(e, str) else e.text for book in books for e in book.entries]
        assert added == 2  # 8 passages, a fifth of 10 highlights
        lookups = [e for e in entries if is_vocabulary(e)]
        assert len(lookups) == added
        every_word = " ".join(c for c, _ in QUOTES).lower()
        assert all(word in every_word for lookup in lookups for word in lookup.lower().split())

    def test_the_clippings_file_reads_back_whole(self) -> None:
        passage = Passage("One passage here.", "Someone", "en", "")
        books = [LibraryBook("Sayings", "Someone", "en", [passage, "ineffable"])]
        result = parse_clippings(clippings_file(books, seed=1))
        assert [c.text for c in result.clippings] == ["One passage here.", "ineffable"]
        assert {c.author for c in result.clippings} == {"Someone"}

    def test_the_realistic_file_has_reselections_and_notes(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(library, "RESELECT_SHARE", 1.0)
        monkeypatch.setattr(library, "NOTE_SHARE", 1.0)
        built = _many_languages(_shared(tmp_path))
        clippings = parse_clippings(library.clippings_file(built, seed=2)).clippings
        notes = [c for c in clippings if c.kind == "note"]
        assert len(notes) == len(built.passages)
        highlights = [c.text for c in clippings if c.kind == "highlight"]
        for passage in built.passages:
            versions = [i for i, t in enumerate(highlights) if passage.text.startswith(t)]
            if len(passage.text.split()) >= 8:
                # Selected in part first, then whole: the whole text written last.
                assert len(versions) >= 2
                assert highlights[versions[-1]] == passage.text

    def test_the_shared_kindle_shelf_is_its_files_one_after_another(self, tmp_path: Path) -> None:
        def entry(title: str, text: str, end: str) -> str:
            return (
                f"{title}{end}- Your Highlight on Location 10-12 | Added on Monday, 5 May 2014 "
                f"10:00:00{end}{end}{text}{end}=========="
            )

        # Windows files with a byte-order mark each, the first one's last line without an end.
        (tmp_path / "a.txt").write_bytes(
            ("\ufeff" + entry("Essays (Seneca)", "On anger.", "\r\n")).encode()
        )
        (tmp_path / "b.txt").write_bytes(
            ("\ufeff" + entry("Ensayos (Montaigne)", "Sobre la ira.", "\r\n") + "\r\n").encode()
        )
        found = parse_clippings(library.shared_kindle_file(tmp_path, ["a.txt", "b.txt"]))
        assert [(c.title, c.text) for c in found.clippings] == [
            ("Essays", "On anger."),
            ("Ensayos", "Sobre la ira."),
        ]
        assert not found.problems
        assert found.entries == 2
        with pytest.raises(LabelError, match=r"no c\.txt under"):
            library.shared_kindle_file(tmp_path, ["a.txt", "c.txt"])


@pytest.mark.django_db
class EvaluateLibraryTests:
    def test_it_imports_connects_and_reports(
        self, tmp_path: Path, django_capture_on_commit_callbacks: Any
    ) -> None:
        out = StringIO()
        # The import sends its embedding tasks on commit; the test's transaction never
        # commits, so they run as the block ends, then the report is read again.
        with django_capture_on_commit_callbacks(execute=True):
            call_command(
                "evaluate_library", "--data", str(_folder(tmp_path)), "--spanish", "0",
                stdout=StringIO(), stderr=StringIO(),
            )  # fmt: skip
        call_command("evaluate_library", "--reuse", "--json", stdout=out, stderr=StringIO())
        report = json.loads(out.getvalue())
        reader = User.objects.get(username="eval-library")
        assert report["highlights"] == Highlight.objects.filter(reader=reader).count() == 10
        assert report["words"] == 2
        assert report["passages"] == 8
        # Connections are the stored pairs the judge rates related or more (the nearby ones
        # are kept for the highlight page, not counted).
        stored = Connection.objects.filter(reader=reader, strength__gte=Connection.Strength.RELATED)
        assert report["connections"] == stored.count() > 0
        assert report["short_side_share"] == 0.0
        assert 0 < report["passages_connected_share"] <= 1
        assert report["across_authors_share"] == 1.0  # every anthology has its own editor
        assert report["by_language"]["en"]["passages"] == 8
        assert report["connections_by_languages"] == {"en-en": report["connections"]}

    @pytest.mark.parametrize("shared", ["as found", "absent"])
    def test_it_samples_blind_and_scores_the_verdicts(
        self,
        shared: str,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        django_capture_on_commit_callbacks: Any,
    ) -> None:
        if shared == "absent":  # a clone without ../shared: the sample is not traced
            monkeypatch.setattr(
                "books.management.commands.evaluate_library.SHARED_DATA", tmp_path / "none"
            )
        reselect = pytest.MonkeyPatch()
        reselect.setattr(library, "RESELECT_SHARE", 1.0)
        data = library.clippings_file(_many_languages(_shared(tmp_path / "shared")), seed=2)
        reselect.undo()
        (tmp_path / "My Clippings.txt").write_bytes(data)
        with django_capture_on_commit_callbacks(execute=True):
            call_command(
                "evaluate_library", "--clippings", str(tmp_path / "My Clippings.txt"),
                "--username", "many", stdout=StringIO(), stderr=StringIO(),
            )  # fmt: skip
        out = StringIO()
        sample = tmp_path / "judge" / "sample.txt"
        said = StringIO()
        call_command(
            "evaluate_library", "--reuse", "--username", "many", "--sample", str(sample),
            "--pages", "4", "--json", stdout=out, stderr=said,
        )  # fmt: skip
        untraced = shared == "absent" or not SHARED_DATA.is_dir()
        assert ("the sample is not traced to it" in said.getvalue()) == untraced
        report = json.loads(out.getvalue())
        # The re-selections became one highlight each: 14 passages, 4 words.
        assert (report["passages"], report["words"]) == (14, 4)
        assert {"en", "es", "de"} <= set(report["by_language"])
        key = read_key(sample.with_name("sample.key.json"))
        assert report["sample"]["pairs"] == len(key)
        groups = {item["group"] for item in key}
        assert {"page", "control"} <= groups
        # A judge who calls every pair the app shows related and every control unrelated.
        verdicts = [
            f"{item['number']} {'u' if item['group'] == 'control' else 'r'}" for item in key
        ]
        sample.with_name("sample.verdicts.txt").write_text("\n".join(verdicts))
        scored = StringIO()
        call_command("evaluate_library", "--score", str(sample), "--json", stdout=scored)
        figures = json.loads(scored.getvalue())
        # A page that shows no neighbour at all has no good first one: with one English
        # book, an English passage's page shows nothing (the English model's nearest are
        # English passages of other books).
        empty = len(read_key_notes(sample.with_name("sample.key.json"))["empty_pages"])
        assert figures["pages"]["pages"] == 4
        assert figures["pages"]["first_good_share"] == (4 - empty) / 4
        assert figures["groups"]["control/all"]["related_share"] == 0.0
        text = StringIO()
        call_command("evaluate_library", "--score", str(sample), stdout=text)
        assert f"first neighbour on theme {(4 - empty) / 4:.0%}" in text.getvalue()

    def test_it_refuses_to_overwrite_a_reader_without_reset(
        self, tmp_path: Path, alice: User
    ) -> None:
        with pytest.raises(CommandError, match="--reset"):
            call_command(
                "evaluate_library", "--data", str(_folder(tmp_path)), "--username", "alice",
                stdout=StringIO(), stderr=StringIO(),
            )  # fmt: skip

    def test_it_writes_the_library_without_importing_it(self, tmp_path: Path) -> None:
        out = StringIO()
        target = tmp_path / "out" / "My Clippings.txt"
        call_command(
            "evaluate_library", "--data", str(_folder(tmp_path)), "--spanish", "0",
            "--write", str(target), stdout=out,
        )  # fmt: skip
        assert len(parse_clippings(target.read_bytes()).clippings) == 10
        assert not User.objects.filter(username="eval-library").exists()

    def test_it_scores_verdicts_written_under_another_name(self, tmp_path: Path) -> None:
        # A judge who keeps verdicts elsewhere (v1-verdicts.txt beside v1-sample.txt).
        pairs = [
            BlindPair("Anger passes.", "Let anger go.", "connection", "en-en",
                      {"strength": "related"}),
            BlindPair("Friends are rare.", "Rain tomorrow.", "control", "en-en"),
        ]  # fmt: skip
        sample = tmp_path / "v1-sample.txt"
        write_sample(pairs, sample, seed=3)
        key = read_key(sample.with_name("v1-sample.key.json"))
        verdicts = tmp_path / "v1-verdicts.txt"
        verdicts.write_text(
            "\n".join(
                f"{item['number']} {'u' if item['group'] == 'control' else 's'}" for item in key
            )
        )
        out = StringIO()
        call_command(
            "evaluate_library", "--score", str(sample), "--verdicts", str(verdicts), "--json",
            stdout=out,
        )  # fmt: skip
        figures = json.loads(out.getvalue())
        assert figures["groups"]["connection/en-en"]["same"] == 1
        assert figures["groups"]["control/all"]["unrelated"] == 1
        with pytest.raises(CommandError, match="no verdicts at"):
            call_command("evaluate_library", "--score", str(sample))

    def test_it_says_when_verdicts_are_missing(self, tmp_path: Path) -> None:
        (tmp_path / "sample.key.json").write_text('{"pairs": [], "notes": {}}')
        with pytest.raises(CommandError, match="no verdicts at"):
            call_command("evaluate_library", "--score", str(tmp_path / "sample.txt"))


@pytest.mark.django_db
class BlindPairsTests:
    def test_it_samples_traces_and_keeps_labels(
        self, tmp_path: Path, django_capture_on_commit_callbacks: Any
    ) -> None:
        shared = _shared(tmp_path / "shared")
        (tmp_path / "My Clippings.txt").write_bytes(
            library.clippings_file(_many_languages(shared), seed=3)
        )
        with django_capture_on_commit_callbacks(execute=True):
            call_command(
                "evaluate_library", "--clippings", str(tmp_path / "My Clippings.txt"),
                "--username", "many", stdout=StringIO(), stderr=StringIO(),
            )  # fmt: skip
        sample = tmp_path / "blind.txt"
        sources = ["eval/quotable/quotes.json", "eval/fortunes_es/es/amistad.fortunes"]
        sources.append("eval/fortunes_de/zitate")
        out = StringIO()
        call_command(
            "blind_pairs", "--user", "many", "--sample", str(sample), "--languages", "es,de",
            "--shared", str(shared), *[f"--source={s}" for s in sources], stdout=out,
        )  # fmt: skip
        assert "many:" in out.getvalue()
        key = read_key(tmp_path / "blind.key.json")
        assert {item["group"] for item in key} == {"candidate", "control"}
        assert {item["kind"] for item in key} & {"de-de", "es-es", "de-en", "en-es"}
        verdicts = [f"{item['number']} related" for item in key]
        (tmp_path / "blind.verdicts.txt").write_text("\n".join(verdicts))
        labels = tmp_path / "labels" / "blind.tsv"
        scored = StringIO()
        call_command(
            "blind_pairs", "--score", str(sample), "--origin", "blind-test-20261204",
            "--labels", str(labels), stdout=scored,
        )  # fmt: skip
        assert "candidate" in scored.getvalue()
        rows = read_labels(labels)
        assert len(rows) == len(key)  # every passage traced to the folder
        assert {row.origin for row in rows} == {
            "blind-test-20261204",
            "blind-test-20261204-control",
        }
        resolved = labelled_texts(rows, shared)
        assert all(r.a_text and r.b_text for r in resolved)
