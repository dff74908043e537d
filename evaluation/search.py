"""How well search finds what a reader looks for, on three tasks, among distractors.

1. **paraphrase**: each sentence of an STS-B pair scored >= 4 is a query; its partner, in
   another book, is the answer (the query's own highlight is left out before ranking).
2. **words**: what a reader remembers of a highlight: 2-4 of its rarer words, shuffled, a
   typo in a third of the queries; the answer is that highlight.
3. **names**: an author's name and a topic ("what did Confucius say about friendship"); the
   answers are that author's quotes with that tag.
4. **es-en** and **en-es**: the paraphrase task across languages, when the Spanish STS-B
   file beside --file is there (its rows are translations of the English ones): the
   library also holds each sentence's Spanish translation; a Spanish sentence is the query
   and its partner's English sentence the answer (es-en), or the other way round (en-es).
   The query's own sentence in both languages and its partners in the query's language are
   left out before ranking: the answer is there only in the other language.

Everything goes into one throw-away library through the app's own path: a clippings file
built here, imported by books.importing.services.clippings_import, embedded by
books.embedding.pipeline.highlights_embed, with every distractor (STS-B train sentences by
default, any sentence list through --distractors). It all runs in one transaction that is
rolled back at the end, the temporary reader included, so nothing is left behind and no
embedding task is ever queued (on_commit never fires).
"""

import csv
import json
import random
import re
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction
from django.test.utils import override_settings

from accounts.models import User
from books.embedding.encoder import EncoderUnavailable, get_encoder
from books.embedding.pipeline import highlights_embed
from books.embedding.profiles import MODEL_CHOICES
from books.importing.services import clippings_import
from books.models import Highlight
from books.search.search import forget_word_shares, search
from books.text import fold
from evaluation.sts_data import read_stsb

DEFAULT_FILE = "stsb-en-dev.csv"
DEFAULT_DISTRACTORS = "stsb-en-train.csv"
DEFAULT_QUOTES = "quotable/quotes.json"
TASKS = ("paraphrase", "words", "names", "es-en", "en-es")
LANGUAGE_TASKS = ("es-en", "en-es")
BOOKS = 20
CUTOFFS = (1, 5, 10)
MODES = (("keyword", "keyword"), ("meaning", "meaning"), ("hybrid", "auto"))
# Made-up words for titles and authors, found in no sentence. Titles and authors are
# fields, never text, so they must not match topic queries anyway.
TITLE = "Stsbdev{:02d}"
AUTHOR = "Stsbeval"
QUOTES_TITLE = "Quotations of {}"
DISTRACTOR_TITLE = "Distractors {:02d}"
SPANISH_TITLE = "Stsbdev{:02d} traducido"
DISTRACTOR_AUTHOR = "Various"
ADDED = "Monday, 3 March 2025 10:00:00"
WORDS_QUERIES = 600
TYPO_SHARE = 1 / 3
SEED = 16
# Tags that say nothing of a quote's topic.
GENERIC_TAGS = frozenset({"Famous Quotes", "Inspirational", "Motivational", "Wisdom"})


@dataclass(frozen=True)
class LabelledSet:
    sentences: list[str]  # unique, in file order
    answers: dict[int, set[int]]  # query sentence -> its partners (indexes into sentences)


def read_labelled_set(path: Path, min_score: float) -> LabelledSet:
    index: dict[str, int] = {}
    answers: dict[int, set[int]] = defaultdict(set)
    with path.open(newline="", encoding="utf-8") as file:
        for row in csv.reader(file):
            if len(row) != 3:
                continue
            first, second = row[0].strip(), row[1].strip()
            for sentence in (first, second):
                index.setdefault(sentence, len(index))
            if float(row[2]) >= min_score and first != second:
                answers[index[first]].add(index[second])
                answers[index[second]].add(index[first])
    return LabelledSet(list(index), dict(answers))


def assign_books(labelled: LabelledSet, books: int) -> list[int]:
    """Round-robin, moved along where a sentence would share a book with a partner."""
    shelf: list[int] = []
    for number in range(len(labelled.sentences)):
        taken = {shelf[p] for p in labelled.answers.get(number, ()) if p < number}
        book = number % books
        while book in taken:
            book = (book + 1) % books
        shelf.append(book)
    return shelf


def clippings_bytes(labelled: LabelledSet, shelf: list[int]) -> bytes:
    entries = []
    for number, (sentence, book) in enumerate(zip(labelled.sentences, shelf, strict=True)):
        # Locations far apart: neighbouring ranges would be merged as an extended highlight.
        start = 10 * number + 1
        entries.append(
            f"{TITLE.format(book)} ({AUTHOR})\r\n"
            f"- Your Highlight on Location {start}-{start + 1} | Added on {ADDED}\r\n"
            f"\r\n{sentence}\r\n==========\r\n"
        )
    return ("\ufeff" + "".join(entries)).encode("utf-8")


# --- distractors and quotes ----------------------------------------------------------------


def read_sentences(path: Path) -> list[str]:
    """Any sentence list: a text file (one a line), JSON (strings, or objects with
    "content" or "text"), or CSV (every cell that is not a number, as STS-B's files)."""
    if not path.is_file():
        raise CommandError(f"No sentence list at {path}.")
    raw = path.read_text(encoding="utf-8-sig")
    found: list[str] = []
    if path.suffix == ".json":
        try:
            items = json.loads(raw)
        except json.JSONDecodeError as error:
            raise CommandError(f"{path} is not JSON: {error}") from None
        if not isinstance(items, list):
            raise CommandError(f"{path} must hold a list of sentences.")
        for item in items:
            if isinstance(item, dict):
                item = item.get("content") or item.get("text") or ""
            if isinstance(item, str):
                found.append(item)
    elif path.suffix == ".csv":
        for row in csv.reader(raw.splitlines()):
            for cell in row:
                try:
                    float(cell)
                except ValueError:
                    found.append(cell)
    else:
        found = raw.splitlines()
    sentences = list(dict.fromkeys(s.strip() for s in found if s.strip()))
    if not sentences:
        raise CommandError(f"{path} has no sentences.")
    return sentences


@dataclass(frozen=True)
class Quote:
    text: str
    author: str
    tags: tuple[str, ...]


def read_quotes(path: Path) -> list[Quote]:
    """quotable's quotes.json: content, author, tags. Authors lose a parenthesis
    ("Mike Singletary (basketball)"), which a Kindle title line cannot hold."""
    if not path.is_file():
        raise CommandError(f"No quotes at {path} (the names task needs quotes with authors).")
    quotes = []
    for item in json.loads(path.read_text(encoding="utf-8")):
        author = re.sub(r"\s*\(.*?\)\s*", " ", str(item.get("author", ""))).strip()
        text = str(item.get("content", "")).strip()
        if text and author:
            quotes.append(Quote(text, author, tuple(item.get("tags") or ())))
    return quotes


# --- the library: every task's highlights in one reader's library --------------------------


@dataclass
class EvaluationLibrary:
    texts: list[str] = field(default_factory=list)
    places: list[tuple[str, str]] = field(default_factory=list)  # (title, author) of each
    ids: list[int] = field(default_factory=list)  # highlight id of each text, once imported
    # Where each source's texts start in `texts`.
    paraphrase_start: int = 0
    quotes_start: int = 0
    quotes: list[Quote] = field(default_factory=list)
    # A paraphrase sentence's number -> its Spanish translation's (the language tasks).
    spanish: dict[int, int] = field(default_factory=dict)

    def add(self, text: str, title: str, author: str) -> int:
        self.texts.append(text)
        self.places.append((title, author))
        return len(self.texts) - 1


def read_translations(english_path: Path, spanish_path: Path) -> dict[str, str]:
    """Each English sentence of the aligned STS-B files -> its Spanish translation (the
    first, where a sentence is in several rows)."""
    english, spanish = read_stsb(english_path), read_stsb(spanish_path)
    if len(english) != len(spanish) or any(
        e.score != s.score for e, s in zip(english, spanish, strict=True)
    ):
        raise CommandError(f"{english_path} and {spanish_path} are not aligned.")
    found: dict[str, str] = {}
    for e, s in zip(english, spanish, strict=True):
        found.setdefault(e.first.strip(), s.first.strip())
        found.setdefault(e.second.strip(), s.second.strip())
    return found


def build_library(
    labelled: LabelledSet,
    quotes: Sequence[Quote],
    distractors: Sequence[str],
    translations: dict[str, str] | None = None,
) -> EvaluationLibrary:
    """Paraphrases in 20 made-up books, quotes in one book per author, distractors in 20
    more, and the paraphrases' Spanish translations (when given) in 20 more; a text in two
    sources is kept once, with the first."""
    library = EvaluationLibrary()
    seen: set[str] = set()
    books = min(BOOKS, max(2, len(labelled.sentences)))
    shelf = assign_books(labelled, books)
    for sentence, book in zip(labelled.sentences, shelf, strict=True):
        library.add(sentence, TITLE.format(book), AUTHOR)
        seen.add(sentence)
    library.quotes_start = len(library.texts)
    for quote in quotes:
        if quote.text not in seen:
            seen.add(quote.text)
            library.quotes.append(quote)
            library.add(quote.text, QUOTES_TITLE.format(quote.author), quote.author)
    for number, sentence in enumerate(s for s in distractors if s not in seen):
        seen.add(sentence)
        library.add(sentence, DISTRACTOR_TITLE.format(number % BOOKS), DISTRACTOR_AUTHOR)
    for number, (sentence, book) in enumerate(zip(labelled.sentences, shelf, strict=True)):
        spanish = (translations or {}).get(sentence)
        if spanish and spanish not in seen:
            seen.add(spanish)
            library.spanish[number] = library.add(spanish, SPANISH_TITLE.format(book), AUTHOR)
    return library


def library_clippings(library: EvaluationLibrary) -> bytes:
    entries = []
    for number, (text, (title, author)) in enumerate(
        zip(library.texts, library.places, strict=True)
    ):
        start = 10 * number + 1  # far apart: neighbouring ranges merge as an extended highlight
        entries.append(
            f"{title} ({author})\r\n"
            f"- Your Highlight on Location {start}-{start + 1} | Added on {ADDED}\r\n"
            f"\r\n{text}\r\n==========\r\n"
        )
    return ("\ufeff" + "".join(entries)).encode("utf-8")


# --- the three tasks -----------------------------------------------------------------------


@dataclass(frozen=True)
class Probe:
    query: str
    wanted: frozenset[int]  # highlight ids, any of which is a hit
    exclude: tuple[int, ...] = ()


def _spanish_ids(library: EvaluationLibrary, numbers: Iterable[int]) -> tuple[int, ...]:
    return tuple(library.ids[library.spanish[n]] for n in numbers if n in library.spanish)


def paraphrase_probes(library: EvaluationLibrary, labelled: LabelledSet) -> list[Probe]:
    """Each sentence of a pair scored >= min-score; its partner is the answer, its own
    highlight is left out (and, with the Spanish translations in the library, its own
    and its partners' translations: the task asks what it asked without them)."""
    return [
        Probe(
            labelled.sentences[query],
            frozenset(library.ids[p] for p in partners),
            (library.ids[query], *_spanish_ids(library, (query, *partners))),
        )
        for query, partners in labelled.answers.items()
    ]


def language_probes(
    library: EvaluationLibrary, labelled: LabelledSet, direction: str
) -> list[Probe]:
    """The paraphrase task across languages: "es-en", a Spanish sentence asks for its
    partners' English sentences; "en-es", an English sentence for its partners' Spanish
    ones. Left out: the query's sentence in both languages and its partners in the query's
    language, so the answer is there only in the other language."""
    probes = []
    for query, partners in labelled.answers.items():
        if query not in library.spanish:
            continue
        english = frozenset(library.ids[p] for p in partners)
        spanish = frozenset(_spanish_ids(library, partners))
        own = (library.ids[query], *_spanish_ids(library, (query,)))
        if direction == "es-en":
            text, wanted, same = library.texts[library.spanish[query]], english, spanish
        else:
            text, wanted, same = labelled.sentences[query], spanish, english
        if wanted:
            probes.append(Probe(text, wanted, (*own, *sorted(same))))
    return probes


_EVAL_WORD = re.compile(r"[^\W\d_]{4,}")


def typo(word: str, rng: random.Random) -> str:
    """One slip of the fingers: two letters swapped, one dropped, doubled or replaced."""
    at = rng.randrange(1, len(word) - 1)
    kind = rng.randrange(4)
    if kind == 0:
        return word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    if kind == 1:
        return word[:at] + word[at + 1 :]
    if kind == 2:
        return word[:at] + word[at] + word[at:]
    letters = [c for c in "aeioulnrst" if c != word[at]]
    return word[:at] + rng.choice(letters) + word[at + 1 :]


def words_probes(
    library: EvaluationLibrary, rng: random.Random, count: int, typo_share: float = TYPO_SHARE
) -> list[Probe]:
    """What a reader recalls of a highlight: 2-4 of its rarer words, shuffled, a typo in
    some. Targets are drawn from the paraphrase sentences and the quotes, never the
    distractors; the answer is that highlight."""
    words_of = [sorted(set(_EVAL_WORD.findall(fold(text)))) for text in library.texts]
    frequency = Counter(word for words in words_of for word in words)
    pool = list(range(library.quotes_start + len(library.quotes)))
    rng.shuffle(pool)
    probes = []
    for number in pool:
        words = sorted(words_of[number], key=lambda w: (frequency[w], w))
        if len(words) < 3:
            continue
        size = rng.randint(2, min(4, len(words) - 1))
        # From the rarer half (at least one more than asked): remembered, not the rarest.
        chosen = rng.sample(words[: max(size + 1, len(words) // 2)], size)
        rng.shuffle(chosen)
        if rng.random() < typo_share:
            long = [i for i, w in enumerate(chosen) if len(w) >= 5]
            if long:
                at = rng.choice(long)
                chosen[at] = typo(chosen[at], rng)
        probes.append(Probe(" ".join(chosen), frozenset([library.ids[number]])))
        if len(probes) == count:
            break
    return probes


NAME_TEMPLATES = (
    "what did {name} say about {topic}",
    "{name} on {topic}",
    "{topic} {name}",
    "{name} {topic}",
)


def names_probes(library: EvaluationLibrary, rng: random.Random, count: int) -> list[Probe]:
    """An author's name (whole, or the last name) and a topic (a tag): the answers are that
    author's quotes with the tag. Only authors with quotes on other topics too, so that the
    name alone is not enough."""
    by_author: dict[str, list[int]] = defaultdict(list)
    for offset, quote in enumerate(library.quotes):
        by_author[quote.author].append(library.quotes_start + offset)
    pairs: dict[tuple[str, str], set[int]] = defaultdict(set)
    for offset, quote in enumerate(library.quotes):
        for tag in quote.tags:
            if tag not in GENERIC_TAGS:
                pairs[quote.author, tag].add(library.quotes_start + offset)
    eligible = sorted(
        (author, tag, numbers)
        for (author, tag), numbers in pairs.items()
        if len(by_author[author]) > len(numbers)
    )
    rng.shuffle(eligible)
    probes = []
    for n, (author, tag, numbers) in enumerate(eligible[:count]):
        names = [w for w in author.split() if w.rstrip(".").casefold() not in ("jr", "sr")]
        name = author if n % 2 == 0 or len(names) < 2 else names[-1]
        template = NAME_TEMPLATES[n % len(NAME_TEMPLATES)]
        query = template.format(name=name, topic=tag.casefold())
        probes.append(Probe(query, frozenset(library.ids[i] for i in numbers)))
    return probes


# --- measuring -----------------------------------------------------------------------------


def _metrics(ranks: list[int | None]) -> dict[str, float]:
    total = max(1, len(ranks))
    found = {
        f"recall@{k}": sum(1 for r in ranks if r is not None and r <= k) / total for k in CUTOFFS
    }
    found["mrr@10"] = sum(1 / r for r in ranks if r is not None and r <= 10) / total
    return {key: round(value, 4) for key, value in found.items()}


def measure(reader: User, probes: Sequence[Probe]) -> dict[str, dict[str, float]]:
    """Each mode's Recall@k and MRR@10 over the probes: the rank of the first answer; and
    loose@10, the share of probes whose first answer in the first ten is shown as loosely
    related (books.search.search._loosely_related)."""
    ranks: dict[str, list[int | None]] = {name: [] for name, _ in MODES}
    loose: dict[str, int] = {name: 0 for name, _ in MODES}
    timings: dict[str, float] = {name: 0.0 for name, _ in MODES}
    for probe in probes:
        for name, mode in MODES:
            began = time.perf_counter()
            found = search(
                reader, probe.query, mode=mode, limit=max(CUTOFFS), exclude_ids=probe.exclude
            )
            timings[name] += time.perf_counter() - began
            top = found.ids[: max(CUTOFFS)]
            rank = next((n for n, pk in enumerate(top, 1) if pk in probe.wanted), None)
            ranks[name].append(rank)
            # The last `loose` of all results are the loosely related ones.
            loose[name] += rank is not None and rank > found.total - found.loose
    return {
        name: {
            **_metrics(ranks[name]),
            "loose@10": round(loose[name] / max(1, len(probes)), 4),
            "ms_per_query": round(1000 * timings[name] / max(1, len(probes)), 1),
        }
        for name, _ in MODES
    }


class EvaluateSearch(BaseCommand):
    help = (
        "Measure keyword, meaning and hybrid search on three tasks: paraphrases, remembered "
        "words, and names with a topic, among thousands of distractors."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--data", required=True, type=Path, help="the STS-B folder")
        parser.add_argument("--file", default=DEFAULT_FILE, help=f"the CSV in it ({DEFAULT_FILE})")
        parser.add_argument("--min-score", type=float, default=4.0, help="a pair's least score")
        parser.add_argument(
            "--distractors",
            type=Path,
            action="append",
            help="a sentence list (.txt a line each, .json, .csv), repeatable; default: "
            f"{DEFAULT_DISTRACTORS} in --data",
        )
        parser.add_argument(
            "--quotes",
            type=Path,
            help=f"quotes with authors and tags (default: {DEFAULT_QUOTES} beside --data)",
        )
        parser.add_argument(
            "--task",
            choices=[*TASKS, "all"],
            action="append",
            help="a task to run, repeatable (default: all, those whose data is there)",
        )
        parser.add_argument(
            "--queries", type=int, default=WORDS_QUERIES, help="queries per generated task"
        )
        parser.add_argument("--seed", type=int, default=SEED, help="for the generated queries")
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.add_argument(
            "--model",
            choices=MODEL_CHOICES,
            help="evaluate this built-in model (default: the configured one)",
        )

    def execute(self, *args: Any, **options: Any) -> str | None:
        if not options.get("model"):
            return super().execute(*args, **options)
        # The whole command, search included, runs with that model as the configured one.
        with override_settings(
            EXOGRAM_EMBEDDING_MODEL=options["model"], EXOGRAM_EMBEDDING_MODEL_DIR=None
        ):
            return super().execute(*args, **options)

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["data"] / options["file"]
        if not path.is_file():
            raise CommandError(f"No labelled set at {path}.")
        asked = options["task"] or ["all"]
        tasks = list(TASKS) if "all" in asked else list(dict.fromkeys(asked))
        try:
            get_encoder()
        except EncoderUnavailable as error:
            raise CommandError(f"Search by meaning needs the model: {error}") from None
        labelled = read_labelled_set(path, options["min_score"])
        if not labelled.answers:
            raise CommandError(f"{path} has no pair scored {options['min_score']} or more.")
        distractors = self._distractors(options["data"], options["distractors"])
        quotes_path = options["quotes"] or options["data"].parent / DEFAULT_QUOTES
        quotes: list[Quote] = []
        if options["quotes"] or quotes_path.is_file() or "names" in asked:
            quotes = read_quotes(quotes_path)
        elif "names" in tasks:
            # "all" without quotes: the two tasks that need none.
            self.stderr.write(f"No quotes at {quotes_path}: the names task is left out.")
            tasks.remove("names")
        # The language tasks need the Spanish file beside the English one (stsb-es-dev.csv).
        spanish_path = options["data"] / options["file"].replace("-en-", "-es-")
        if spanish_path == path or not spanish_path.is_file():
            if any(task in asked for task in LANGUAGE_TASKS):
                raise CommandError(f"No Spanish translations of {path} at {spanish_path}.")
            if any(task in tasks for task in LANGUAGE_TASKS):
                self.stderr.write(f"No {spanish_path}: the es-en and en-es tasks are left out.")
                tasks = [task for task in tasks if task not in LANGUAGE_TASKS]
        translations = None
        if any(task in tasks for task in LANGUAGE_TASKS):
            translations = read_translations(path, spanish_path)
        library = build_library(labelled, quotes, distractors, translations)
        with transaction.atomic():
            report = self._evaluate(library, labelled, tasks, options)
            report["data"] = str(path)
            report["min_score"] = options["min_score"]
            # The library, its reader and their vectors exist only for this measurement.
            transaction.set_rollback(True)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self._print(report)

    def _distractors(self, data: Path, given: list[Path] | None) -> list[str]:
        if given:
            return [s for path in given for s in read_sentences(path)]
        default = data / DEFAULT_DISTRACTORS
        return read_sentences(default) if default.is_file() else []

    def _evaluate(
        self,
        library: EvaluationLibrary,
        labelled: LabelledSet,
        tasks: list[str],
        options: dict[str, Any],
    ) -> dict[str, Any]:
        started = time.perf_counter()
        reader = User.objects.create_user(f"evaluation-{uuid.uuid4().hex[:12]}")
        clippings_import(reader=reader, data=library_clippings(library), file_name="evaluation")
        ids = dict(Highlight.objects.filter(reader=reader).values_list("location_start", "pk"))
        if len(ids) != len(library.texts):
            raise CommandError(
                f"The import made {len(ids)} highlights of {len(library.texts)} texts."
            )
        library.ids = [ids[10 * number + 1] for number in range(len(library.texts))]
        self.stderr.write(f"Embedding {len(library.ids)} highlights…")
        embedded = highlights_embed(ids=library.ids).embedded
        with connection.cursor() as cursor:
            # Fresh planner statistics for the fresh rows (rolled back with the rest).
            cursor.execute("ANALYZE books_highlight")
        forget_word_shares()
        loaded = time.perf_counter() - started
        rng = random.Random(options["seed"])
        makers = {
            "paraphrase": lambda: paraphrase_probes(library, labelled),
            "words": lambda: words_probes(library, rng, options["queries"]),
            "names": lambda: names_probes(library, rng, options["queries"]),
            "es-en": lambda: language_probes(library, labelled, "es-en"),
            "en-es": lambda: language_probes(library, labelled, "en-es"),
        }
        results: dict[str, Any] = {}
        for task in tasks:
            probes = makers[task]()
            self.stderr.write(f"{task}: {len(probes)} queries in 3 modes…")
            results[task] = {
                "queries": len(probes),
                "example": probes[0].query if probes else "",
                "modes": measure(reader, probes),
            }
        return {
            "highlights": len(library.ids),
            "embedded": embedded,
            "paraphrase_sentences": len(labelled.sentences),
            "quotes": len(library.quotes),
            "distractors": len(library.texts)
            - library.quotes_start
            - len(library.quotes)
            - len(library.spanish),
            "spanish_sentences": len(library.spanish),
            "load_seconds": round(loaded, 1),
            "tasks": results,
            "finished": datetime.now().isoformat(timespec="seconds"),
        }

    def _print(self, report: dict[str, Any]) -> None:
        self.stdout.write(
            f"{report['data']}: {report['highlights']} highlights "
            f"({report['paraphrase_sentences']} paraphrase sentences, {report['quotes']} "
            f"quotes, {report['distractors']} distractors"
            + (
                f", {report['spanish_sentences']} Spanish translations)"
                if report["spanish_sentences"]
                else ")"
            )
        )
        header = f"{'task':<11}{'mode':<9}" + "".join(
            f"{k:>11}"
            for k in ("Recall@1", "Recall@5", "Recall@10", "MRR@10", "Loose@10", "ms/query")
        )
        self.stdout.write(header)
        for task, result in report["tasks"].items():
            for name, row in result["modes"].items():
                values = [
                    row["recall@1"], row["recall@5"], row["recall@10"], row["mrr@10"],
                    row["loose@10"],
                ]  # fmt: skip
                line = f"{task:<11}{name:<9}" + "".join(f"{v:>11.3f}" for v in values)
                self.stdout.write(line + f"{row['ms_per_query']:>11.1f}")
        for task, result in report["tasks"].items():
            self.stdout.write(f"{task}: {result['queries']} queries, e.g. “{result['example']}”")
