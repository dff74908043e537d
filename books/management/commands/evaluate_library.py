"""How connections read on a library imported, embedded and connected by the app itself.

The library is one of: `--realistic` (evaluation.library: English, Spanish, German,
Portuguese and French passages from the shared data, a fifth looked-up words,
re-selections and notes, as a Kindle writes them), `--shared-kindle` (eleven real readers'
Kindle files of the shared data as one library, evaluation.library.KINDLE_SHELF),
`--data DIR` (evaluation.quote_library: the English quotes and Spanish sayings of the
evaluation data folder), `--clippings FILE` (any `My Clippings.txt`), or `--reuse` (a
reader imported before). It prints coverage (passages, not words, with a connection) by
language; `--sample FILE` also writes a fresh blind sample for a judge (connections, the
first three neighbours of random highlight pages, controls) and `--score FILE` reads the
judge's verdicts back (evaluation.blind), from `<sample>.verdicts.txt` beside it or from
`--verdicts FILE`.
"""

import json
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.blind import BlindError, read_key, read_key_notes, read_verdicts, write_sample
from evaluation.candidates import SourceIndex, library_sources
from evaluation.kindle_books import WORD_SHARE
from evaluation.labels import SHARED_DATA, LabelError
from evaluation.quote_library import LibraryDataMissing

CONNECTIONS_SAMPLE = 40
PAGES_SAMPLE = 20
CONTROLS = 0.2


class Command(BaseCommand):
    help = (
        "Import, embed and connect a library through the app (--realistic, --data DIR, "
        "--clippings FILE, or --reuse), print its coverage by language; --sample FILE writes "
        "a blind sample to judge, --score FILE reads the verdicts back."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group()
        source.add_argument("--realistic", action="store_true", help="the many-language library")
        source.add_argument(
            "--shared-kindle", action="store_true", help="eleven real Kindle files as one library"
        )
        source.add_argument("--data", type=Path, help="the evaluation data folder (quotable/, …)")
        source.add_argument("--clippings", type=Path, help="a My Clippings.txt to import")
        source.add_argument("--reuse", action="store_true", help="measure an existing reader")
        parser.add_argument("--username", default="eval-library", help="the reader")
        parser.add_argument("--reset", action="store_true", help="replace an existing reader")
        parser.add_argument("--spanish", type=int, default=2000, help="with --data: sayings")
        parser.add_argument("--words", type=float, default=WORD_SHARE, help="with --data")
        parser.add_argument("--seed", type=int, default=15)
        parser.add_argument("--sample", type=Path, help="write a blind sample to judge here")
        parser.add_argument("--connections", type=int, default=CONNECTIONS_SAMPLE)
        parser.add_argument("--pages", type=int, default=PAGES_SAMPLE)
        parser.add_argument("--score", type=Path, help="score the verdicts of this sample")
        parser.add_argument(
            "--verdicts",
            type=Path,
            help="with --score: the verdicts' file (default: <sample>.verdicts.txt beside it)",
        )
        parser.add_argument(
            "--write", type=Path, help="only write the library's My Clippings.txt here"
        )
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        from evaluation.library_report import blind_sample, measure, score

        try:
            if options["score"]:
                sample: Path = options["score"]
                key_path = sample.with_name(sample.stem + ".key.json")
                key = read_key(key_path)
                verdicts_path = options["verdicts"] or sample.with_name(
                    sample.stem + ".verdicts.txt"
                )
                verdicts = read_verdicts(verdicts_path, expected=len(key))
                report = score(key, verdicts, read_key_notes(key_path))
                self._print(report, options, self._write_score)
                return
            if options["write"]:
                data = self._library(options)
                options["write"].parent.mkdir(parents=True, exist_ok=True)
                options["write"].write_bytes(data)
                self.stdout.write(f"{len(data) // 1024} kB of clippings in {options['write']}")
                return
            reader = self._reader(options)
            report = measure(reader)
            if options["sample"]:
                # Traced to the shared data where they come from it (the realistic
                # library does), so that verdicts can be kept as label rows.
                index = None
                if SHARED_DATA.is_dir():
                    index = SourceIndex(SHARED_DATA)
                    index.add_sources(library_sources())
                else:
                    self.stderr.write(
                        f"No shared data at {SHARED_DATA}: the sample is not traced to it, "
                        "so its verdicts cannot become label rows."
                    )
                pairs, notes = blind_sample(
                    reader,
                    connections=options["connections"],
                    pages=options["pages"],
                    controls=CONTROLS,
                    seed=options["seed"],
                    index=index,
                )
                _, verdicts_at = write_sample(
                    pairs, options["sample"], seed=options["seed"], notes=notes
                )
                report["sample"] = {"pairs": len(pairs), "verdicts": str(verdicts_at)}
        except (BlindError, LabelError, LibraryDataMissing) as error:
            raise CommandError(str(error)) from None
        self._print(report, options, self._write_measure)

    def _print(self, report: dict[str, Any], options: dict[str, Any], write: Any) -> None:
        if options["json"]:
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2))
        else:
            write(report)

    def _reader(self, options: dict[str, Any]) -> Any:
        from accounts.models import User
        from evaluation.pipeline import reader_with_library

        username = options["username"]
        existing = User.objects.filter(username=username).first()
        if options["reuse"]:
            if existing is None:
                raise CommandError(f"No reader {username} to measure; run without --reuse.")
            return existing
        if existing is not None and not options["reset"]:
            raise CommandError(f"{username} exists; pass --reset to rebuild it, or --reuse.")
        data = self._library(options)
        started = time.monotonic()
        reader = reader_with_library(username=username, data=data, replace=options["reset"])
        if options["verbosity"] >= 1:
            took = time.monotonic() - started
            self.stderr.write(f"imported, embedded and connected in {took:.0f} s")
        return reader

    def _library(self, options: dict[str, Any]) -> bytes:
        from evaluation import library, quote_library
        from evaluation.kindle_books import add_lookups

        if options["clippings"]:
            path: Path = options["clippings"]
            if not path.is_file():
                raise CommandError(f"No file {path}.")
            return path.read_bytes()
        if options["realistic"]:
            return library.clippings_file(library.build_library(SHARED_DATA))
        if options["shared_kindle"]:
            return library.shared_kindle_file(SHARED_DATA)
        if options["data"] is None:
            raise CommandError(
                "Pass --realistic, --shared-kindle, --data DIR, --clippings FILE or --reuse."
            )
        if not 0 <= options["words"] < 1:
            raise CommandError("--words is a share in [0, 1).")
        seed = options["seed"]
        passages = quote_library.read_passages(
            options["data"], spanish=options["spanish"], seed=seed
        )
        books = quote_library.make_books(passages, seed=seed)
        add_lookups(books, share=options["words"], seed=seed)
        return quote_library.clippings_file(books, seed=seed)

    def _write_measure(self, report: dict[str, Any]) -> None:
        write = self.stdout.write
        write(
            f"{report['highlights']} highlights in {report['books']} books: {report['words']} "
            f"words ({report['words_share']:.0%}), {report['passages']} embedded passages"
        )
        write(
            f"{report['connections']} connections: {report['same_idea']} same idea, "
            f"{report['related']} related; {report['across_authors_share']:.1%} across "
            f"authors; {report['short_side_share']:.1%} with a side of ≤ 3 words"
        )
        write(
            f"passages with ≥ 1 connection {report['passages_connected_share']:.1%} "
            f"(across authors {report['passages_connected_across_authors_share']:.1%}; aim ≥ 25 %)"
        )
        for language, figures in report["by_language"].items():
            write(
                f"  {language:>8}: {figures['passages']:>5} passages, "
                f"{figures['connected_share']:6.1%} connected "
                f"({figures['connected_across_authors_share']:.1%} across authors)"
            )
        kinds = ", ".join(f"{k} {n}" for k, n in report["connections_by_languages"].items())
        write(f"connections by languages: {kinds or 'none'}")
        if "sample" in report:
            write(
                f"{report['sample']['pairs']} pairs to judge blind; verdicts go in "
                f"{report['sample']['verdicts']}, then run again with --score."
            )

    def _write_score(self, report: dict[str, Any]) -> None:
        write = self.stdout.write

        def tallied(figures: dict[str, Any]) -> str:
            return (
                f"{figures['same'] + figures['related']}/{figures['judged']} related "
                f"({figures['related_share']:.0%}: {figures['same']} same, "
                f"{figures['related']} related, {figures['unrelated']} unrelated)"
            )

        write("judged blind:")
        for group, figures in report["groups"].items():
            write(f"  {group:<22} {tallied(figures)}")
        for strength, figures in report["connections_by_strength"].items():
            write(f"  stored as {strength:<12} {tallied(figures)}")
        write(f"  same idea judged same: {report['same_idea_judged_same_share']:.0%}")
        pages = report["pages"]
        write(
            f"pages: {pages['pages']}, first neighbour on theme {pages['first_good_share']:.0%}, "
            f"one of the first three {pages['any_of_three_good_share']:.0%} (aim ≥ 60 %)"
        )
        for title, part in (
            ("by language", report["pages_by_language"]),
            ("by what comes first", report["pages_by_first_shown"]),
        ):
            for name, figures in part.items():
                write(
                    f"  {title} {name:>9}: {figures['pages']:>3} pages, first "
                    f"{figures['first_good_share']:.0%}, "
                    f"any of three {figures['any_of_three_good_share']:.0%}"
                )
