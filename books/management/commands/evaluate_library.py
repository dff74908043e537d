"""How connections read on a realistic library, built, imported and connected by the app itself.

The library is one reader's: the English quotes of `quotable/` and Spanish sayings of
`fortunes_es/` as passages, one book per author with a few of them and anthologies of the
rest, and about a fifth of the highlights single words or short phrases looked up in the
same books (as on a real Kindle: 22 % on the library the issue measured). It goes through
the real path: a `My Clippings.txt` written here, `clippings_import`, the embedding and
connection tasks run here as a worker would run them. Then it prints what a reader would
meet: how many connections touch a word, how many passages find a connection, how many
pairs cross authors, and a fixed sample of pairs side by side for a person to judge.
"""

import json
import logging
import random
import re
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.db.models import Count

from books.vocabulary import words_of

ENGLISH_TAGS_GENERIC = frozenset({"Famous Quotes"})
# An author with this many passages gets a book of their own; the others go to anthologies.
AUTHOR_BOOK_MIN = 4
ANTHOLOGY_SIZE = 25
WORD_SHARE = 0.2
# Of the looked-up highlights: mostly single words, some short phrases ("sine qua non").
PHRASE_SHARE = 0.15
SAMPLE = 30
# A looked-up word is long or rare: short words are rarely looked up.
LOOKUP_MIN_LETTERS = 7
_LETTERS = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")


@dataclass(frozen=True)
class Passage:
    text: str
    author: str
    language: str
    topic: str


@dataclass
class EvalBook:
    title: str
    # An anthology names its editor, one per anthology: the quotes in it are by many
    # authors, so two anthologies are not one author's books.
    author: str
    entries: list[str]  # highlight texts in reading order


def read_passages(data_dir: Path, *, spanish: int, seed: int) -> list[Passage]:
    """Every English quote, and `spanish` Spanish sayings drawn with the seed."""
    from affinity.demo_library import DemoDataMissing, read_fortunes

    path = data_dir / "quotable" / "quotes.json"
    if not path.is_file():
        raise CommandError(f"No quotable/quotes.json in {data_dir}. Pass --data.")
    passages = []
    seen: set[str] = set()
    for row in json.loads(path.read_text(encoding="utf-8")):
        text = " ".join(row["content"].split())
        tags = [t for t in row["tags"] if t not in ENGLISH_TAGS_GENERIC] or row["tags"] or [""]
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            passages.append(Passage(text, row["author"].strip() or "Anonymous", "en", tags[0]))
    if spanish:
        try:
            fortunes = read_fortunes(data_dir / "fortunes_es")
        except DemoDataMissing as error:
            raise CommandError(f"{error}. Pass --data, or --spanish 0.") from None
        fortunes = [f for f in fortunes if f.text.casefold() not in seen]
        rng = random.Random(seed)
        for quote in rng.sample(fortunes, min(spanish, len(fortunes))):
            passages.append(Passage(quote.text, quote.author, "es", quote.topic))
    return passages


def make_books(passages: list[Passage], *, seed: int) -> list[EvalBook]:
    """One book per author with AUTHOR_BOOK_MIN passages or more, anthologies by topic.
    Anonymous Spanish proverbs are one author's: the Refranero."""
    rng = random.Random(seed)
    by_author: dict[str, list[Passage]] = defaultdict(list)
    for passage in passages:
        by_author[passage.author].append(passage)
    books: list[EvalBook] = []
    rest: dict[tuple[str, str], list[Passage]] = defaultdict(list)
    for author, own in sorted(by_author.items()):
        if author == "Anónimo":
            for start in range(0, len(own), 100):
                volume = start // 100 + 1
                chunk = [p.text for p in own[start : start + 100]]
                books.append(EvalBook(f"Refranero, tomo {volume}", "Refranero popular", chunk))
        elif len(own) >= AUTHOR_BOOK_MIN and author != "Anonymous":
            title = f"Collected Sayings of {author}"
            if own[0].language == "es":
                title = f"Dichos y sentencias de {author}"
            books.append(EvalBook(title, author, [p.text for p in own]))
        else:
            for passage in own:
                rest[(passage.language, passage.topic)].append(passage)
    for (language, topic), pool in sorted(rest.items()):
        rng.shuffle(pool)
        for volume, start in enumerate(range(0, len(pool), ANTHOLOGY_SIZE), start=1):
            name = f"An Anthology of {topic or 'Sayings'}"
            if language == "es":
                name = f"Antología de {topic}"
            chunk = [p.text for p in pool[start : start + ANTHOLOGY_SIZE]]
            editor = f"Editor {len(books) + 1}"
            books.append(EvalBook(f"{name}, vol. {volume}", editor, chunk))
    return books


def add_lookups(books: list[EvalBook], *, share: float, seed: int) -> int:
    """Mix in words and short phrases looked up in each book's own passages, so that they
    make `share` of all highlights. Returns how many were added."""
    rng = random.Random(seed)
    passages = sum(len(book.entries) for book in books)
    wanted = round(passages * share / (1 - share))
    candidates: list[tuple[int, str]] = []
    for index, book in enumerate(books):
        for text in book.entries:
            tokens = _LETTERS.findall(text)
            for position, token in enumerate(tokens):
                if len(token) >= LOOKUP_MIN_LETTERS:
                    if rng.random() < PHRASE_SHARE and position + 2 < len(tokens):
                        candidates.append((index, " ".join(tokens[position : position + 3])))
                    else:
                        candidates.append((index, token.lower()))
    added = 0
    for index, lookup in rng.sample(candidates, min(wanted, len(candidates))):
        book = books[index]
        book.entries.insert(rng.randint(0, len(book.entries)), lookup)
        added += 1
    return added


def clippings_file(books: list[EvalBook], *, seed: int) -> bytes:
    """A Kindle `My Clippings.txt` (English UI, CRLF, BOM) with every book's highlights."""
    from affinity.demo_library import _kindle_date

    rng = random.Random(seed)
    moment = datetime(2023, 3, 1, 8, 0, 0)
    entries = []
    for book in books:
        title = f"{book.title} ({book.author})" if book.author else book.title
        for position, text in enumerate(book.entries):
            # Far apart, so that no two highlights read as versions of one passage.
            start = 100 + 40 * position
            moment += timedelta(minutes=rng.randint(3, 300))
            added = _kindle_date(moment)
            meta = f"- Your Highlight on Location {start}-{start + 3} | Added on {added}"
            entries.append("\r\n".join([title, meta, "", text, "=========="]) + "\r\n")
    return ("\ufeff" + "".join(entries)).encode("utf-8")


def _kind_of(first: str, second: str) -> str:
    if first != second:
        return "across languages"
    return "two English" if first == "en" else f"two {first}"


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


class Command(BaseCommand):
    help = (
        "Build a realistic library (quotes, sayings, ~20% looked-up words), import, embed "
        "and connect it through the app, and print how its connections read."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--data", type=Path, required=True, help="the evaluation data folder (quotable/, …)"
        )
        parser.add_argument("--username", default="eval-library", help="the reader to create")
        parser.add_argument(
            "--spanish", type=int, default=2000, help="Spanish sayings to add (default 2000)"
        )
        parser.add_argument("--words", type=float, default=WORD_SHARE, help="share of words")
        parser.add_argument("--seed", type=int, default=15)
        parser.add_argument("--sample", type=int, default=SAMPLE, help="pairs to print")
        parser.add_argument("--reset", action="store_true", help="replace an existing reader")
        parser.add_argument(
            "--reuse", action="store_true", help="measure an existing reader without rebuilding"
        )
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        from accounts.models import User

        if not 0 <= options["words"] < 1:
            raise CommandError("--words is a share in [0, 1).")
        username = options["username"]
        reader = User.objects.filter(username=username).first()
        if options["reuse"]:
            if reader is None:
                raise CommandError(f"No reader {username} to measure; run without --reuse.")
        else:
            if reader is not None and not options["reset"]:
                raise CommandError(f"{username} exists; pass --reset to rebuild it, or --reuse.")
            reader = self._build(options, existing=reader)
        report = self._measure(reader, options)
        if options["json"]:
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2))
        else:
            self._write(report)

    def _progress(self, options: dict[str, Any], message: str) -> None:
        if options["verbosity"] >= 1:
            self.stderr.write(message, style_func=None)

    def _build(self, options: dict[str, Any], *, existing: Any) -> Any:
        from accounts.models import User
        from accounts.services import reader_delete
        from books.importing.services import clippings_import
        from exogram.celery import app

        seed = options["seed"]
        passages = read_passages(options["data"], spanish=options["spanish"], seed=seed)
        books = make_books(passages, seed=seed)
        lookups = add_lookups(books, share=options["words"], seed=seed)
        data = clippings_file(books, seed=seed)
        self._progress(
            options,
            f"{len(passages)} passages and {lookups} looked-up words in {len(books)} books "
            f"({len(data) // 1024} kB of clippings)",
        )
        if existing is not None:
            reader_delete(reader_id=existing.pk)
        with transaction.atomic():
            reader = User.objects.create_user(options["username"], password=None)
        started = time.monotonic()
        # The pipeline's tasks run here, as a worker would run them (see seed_demo_library).
        saved = (app.conf.task_always_eager, app.conf.task_eager_propagates)
        app.conf.task_always_eager = True
        app.conf.task_eager_propagates = True
        trace_logger = logging.getLogger("celery.app.trace")
        trace_level = trace_logger.level
        trace_logger.setLevel(logging.WARNING)
        try:
            clippings_import(reader=reader, data=data, file_name="My Clippings.txt")
        finally:
            app.conf.task_always_eager, app.conf.task_eager_propagates = saved
            trace_logger.setLevel(trace_level)
        self._progress(
            options, f"imported, embedded and connected in {time.monotonic() - started:.0f} s"
        )
        return reader

    def _measure(self, reader: Any, options: dict[str, Any]) -> dict[str, Any]:
        from books.connections.judge import judge_version
        from books.connections.selectors import Strength, library_connections
        from books.models import Highlight

        highlights = Highlight.objects.alive().filter(reader=reader)
        total = highlights.count()
        words = highlights.filter(is_word=True).count()
        passages = highlights.passages().filter(embedding_status=Highlight.EmbeddingStatus.DONE)
        passage_count = passages.count()
        # Graded and told apart by author as the pages do: the annotations of
        # library_connections (same_idea, same_author).
        pairs = list(library_connections(reader).order_by("pk"))
        short_side = sum(
            1
            for pair in pairs
            if min(len(words_of(pair.highlight_a.text)), len(words_of(pair.highlight_b.text))) <= 3
        )
        cross = [pair for pair in pairs if not pair.same_author]
        connected: set[int] = set()
        connected_cross: set[int] = set()
        for pair in pairs:
            connected.update((pair.highlight_a_id, pair.highlight_b_id))
            if not pair.same_author:
                connected_cross.update((pair.highlight_a_id, pair.highlight_b_id))
        same_idea = sum(1 for pair in pairs if pair.same_idea)
        # The two languages of each pair.
        kinds: dict[str, int] = {}
        connected_by_language: dict[str, set[int]] = {}
        for pair in pairs:
            first, second = pair.highlight_a.language, pair.highlight_b.language
            kind = _kind_of(first, second)
            kinds[kind] = kinds.get(kind, 0) + 1
            connected_by_language.setdefault(first, set()).add(pair.highlight_a_id)
            connected_by_language.setdefault(second, set()).add(pair.highlight_b_id)
        by_language = {
            row["language"]: row["n"]
            for row in passages.values("language").annotate(n=Count("id")).order_by()
        }
        rng = random.Random(options["seed"])
        sample = rng.sample(pairs, min(options["sample"], len(pairs)))
        return {
            "model": passages.values_list("embedding_model", flat=True).first(),
            "judge_version": judge_version(),
            "languages": by_language,
            "connections_by_kind": kinds,
            "passages_connected_share_by_language": {
                language: _share(len(connected_by_language.get(language, ())), n)
                for language, n in by_language.items()
            },
            "highlights": total,
            "words": words,
            "words_share": _share(words, total),
            "passages": passage_count,
            "books": reader.books.count(),
            "connections": len(pairs),
            "same_idea": same_idea,
            "related": len(pairs) - same_idea,
            "short_side_share": _share(short_side, len(pairs)),
            "passages_connected_share": _share(len(connected), passage_count),
            "passages_connected_across_authors_share": _share(len(connected_cross), passage_count),
            "across_authors_share": _share(len(cross), len(pairs)),
            "sample": [
                {
                    "strength": str(Strength.SAME_IDEA if pair.same_idea else Strength.RELATED),
                    "distance": round(pair.distance, 3),
                    "probability": round(pair.probability, 3),
                    "same_author": pair.same_author,
                    "a": {
                        "book": str(pair.highlight_a.book),
                        "text": pair.highlight_a.text,
                    },
                    "b": {
                        "book": str(pair.highlight_b.book),
                        "text": pair.highlight_b.text,
                    },
                }
                for pair in sample
            ],
            "strengths": [str(s) for s in Strength],
        }

    def _write(self, report: dict[str, Any]) -> None:
        write = self.stdout.write
        write(f"model {report['model']}, pair judge v{report['judge_version']}")
        write(
            f"{report['highlights']} highlights in {report['books']} books: "
            f"{report['words']} words ({report['words_share']:.0%}), "
            f"{report['passages']} embedded passages"
        )
        write(
            f"{report['connections']} connections: {report['same_idea']} same idea, "
            f"{report['related']} related"
        )
        write("")
        write(
            f"  connections with a side of ≤ 3 words     {report['short_side_share']:7.1%}  (aim 0)"
        )
        write(
            f"  passages with ≥ 1 connection             {report['passages_connected_share']:7.1%}"
            "  (aim ≥ 25 %)"
        )
        write(
            "  passages with ≥ 1 across authors         "
            f"{report['passages_connected_across_authors_share']:7.1%}"
        )
        write(
            f"  connections across authors               {report['across_authors_share']:7.1%}"
            "  (aim ≥ 60 %)"
        )
        kinds = ", ".join(f"{kind} {n}" for kind, n in report["connections_by_kind"].items())
        write(f"  connections by kind                      {kinds}")
        shares = ", ".join(
            f"{language} {share:.0%}"
            for language, share in report["passages_connected_share_by_language"].items()
        )
        write(f"  passages connected by language           {shares}")
        languages = ", ".join(f"{n} {language}" for language, n in report["languages"].items())
        write(f"  passages by language                     {languages}")
        write("")
        write(f"A fixed sample of {len(report['sample'])} connections, to judge by reading:")
        for number, pair in enumerate(report["sample"], start=1):
            author = ", same author" if pair["same_author"] else ""
            write("")
            write(f"{number:>2}. {pair['strength']} ({pair['distance']:.3f}{author})")
            for side in ("a", "b"):
                write(f"    [{pair[side]['book']}]")
                write(f"      {pair[side]['text'][:300]}")
