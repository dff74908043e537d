from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.commands import reader_named
from evaluation.blind import BlindError, read_key, read_verdicts, scored, write_sample
from evaluation.candidates import (
    SourceIndex,
    blind_pairs,
    control_pairs,
    label_rows,
    library_sources,
    nearest_candidates,
)
from evaluation.labels import SHARED_DATA, LabelError, read_labels, write_labels


class Command(BaseCommand):
    help = (
        "Blind judgement of pairs in the thin kinds (--sample): each passage's nearest in "
        "another book, by language pair, mixed with random control pairs, shuffled, texts "
        "only; the key goes beside it. --score reads the judge's verdicts back, prints how "
        "candidates and controls were judged and appends them as label rows (--labels)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--user",
            action="append",
            default=[],
            help="a reader to draw from, NAME or NAME:LANG,LANG (its own --languages)",
        )
        parser.add_argument("--sample", type=Path, help="write the pairs to judge here")
        parser.add_argument("--score", type=Path, help="the sample whose verdicts to read")
        parser.add_argument("--languages", default="es,de,pt,fr", help="passages' languages")
        parser.add_argument("--per-kind", type=int, default=14, help="candidates a kind")
        parser.add_argument("--controls", type=float, default=0.3, help="controls per candidate")
        parser.add_argument("--source", action="append", default=[], help="shared files to trace")
        parser.add_argument("--origin", help="the label rows' origin (blind-<judge>-<date>)")
        parser.add_argument("--labels", type=Path, help="the label file to append rows to")
        parser.add_argument("--shared", type=Path, default=SHARED_DATA, help="the shared data")
        parser.add_argument("--seed", type=int, default=28)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["sample"]:
                self._sample(options)
            elif options["score"]:
                self._score(options)
            else:
                raise CommandError("Pass --sample FILE or --score FILE.")
        except (BlindError, LabelError) as error:
            raise CommandError(str(error)) from None

    def _sample(self, options: dict[str, Any]) -> None:
        if not options["user"]:
            raise CommandError("Pass --user (one or more readers).")
        index = SourceIndex(options["shared"])
        sources = options["source"] or library_sources(options["shared"])
        index.add_sources(sources)
        languages = [part.strip() for part in options["languages"].split(",") if part.strip()]
        pairs = []
        for number, user in enumerate(options["user"]):
            username, _, own = user.partition(":")
            reader = reader_named(username)
            seed = options["seed"] + number
            wanted_languages = [part for part in own.split(",") if part] or languages
            picked = nearest_candidates(
                reader, languages=wanted_languages, per_kind=options["per_kind"], seed=seed
            )
            kinds: dict[str, int] = {}
            for pair in picked:
                kinds[pair.kind] = kinds.get(pair.kind, 0) + 1
            wanted = {k: max(1, round(n * options["controls"])) for k, n in kinds.items()}
            controls = control_pairs(reader, kinds=wanted, seed=seed)
            pairs += blind_pairs(picked, group="candidate", index=index, reader=username)
            pairs += blind_pairs(controls, group="control", index=index, reader=username)
            self.stdout.write(
                f"{username}: {len(picked)} candidates ("
                + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
                + f"), {len(controls)} controls"
            )
        key, verdicts = write_sample(pairs, options["sample"], seed=options["seed"])
        traced = sum(1 for p in pairs if "a" in p.meta and "b" in p.meta)
        self.stdout.write(
            f"{len(pairs)} pairs to judge in {options['sample']} ({traced} traced to the shared "
            f"data); the key is {key.name}; the verdicts go in {verdicts.name}."
        )

    def _score(self, options: dict[str, Any]) -> None:
        sample: Path = options["score"]
        key = read_key(sample.with_name(sample.stem + ".key.json"))
        verdicts = read_verdicts(sample.with_name(sample.stem + ".verdicts.txt"), expected=len(key))
        for (group, kind), tally in scored(key, verdicts).items():
            self.stdout.write(f"{group:>10} {kind:>8}: {tally}")
        if options["labels"]:
            if not options["origin"]:
                raise CommandError("Pass --origin with --labels (blind-<judge>-<date>).")
            rows = label_rows(key, verdicts, origin=options["origin"])
            path: Path = options["labels"]
            kept = read_labels(path) if path.exists() else []
            written = write_labels(path, [*kept, *rows])
            self.stdout.write(f"{len(rows)} label rows added to {path} ({written} in all)")
