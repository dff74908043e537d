"""The rule for data migrations (docs/operations.md, "Upgrades"): `migrate` never rewrites
many rows for minutes. Work per row that costs (re-embedding, re-judging connections) runs
in the background with progress — the worker's sweep re-embeds after a model change;
`manage.py reconnect` finds connections again — and a migration only marks what is due.

A migration that runs code (RunPython) must be listed here with why it stays short, so a
new one is a decision and not an accident."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (app, migration) -> why it stays short on a library of 100,000 highlights.
REVIEWED = {
    ("books", "0006_highlight_is_word"): "a string test per highlight, batched updates",
    ("books", "0008_search_text_without_title"): "text folding per highlight, batched",
    ("books", "0014_library_map_regions"): "one DELETE of stored maps",
    ("books", "0015_highlight_language"): "a character count per highlight, batched",
    ("books", "0016_short_notes_and_clipping_limits"): "a few set-based updates",
    ("books", "0019_connection_main_distance"): "one UPDATE; both vectors are in the rows",
    ("books", "0021_short_sentences_are_passages"): (
        "a string test per stored word (is_word rows only), batched updates; the rows it "
        "turns into passages are marked pending for the worker's sweep, never embedded here"
    ),
    ("books", "0024_highlight_language_six"): (
        "a word count per highlight, batched; only changed languages are written; the "
        "judge's new version re-judges stored pairs in the background"
    ),
    ("books", "0028_book_title_sort"): "a sort key per book (not per highlight), batched",
    ("books", "0029_long_headings_are_words"): (
        "a string test per passage, batched; set-based updates and deletes of the few "
        "headings found (96 of 12,570 highlights on the shared corpus)"
    ),
    ("books", "0030_highlight_reading_key"): (
        "a key per highlight without Kindle locations (a JSON decode or a page number), "
        "batched; Kindle highlights are not read"
    ),
    ("books", "0031_merge_contained"): (
        "a string test per merge record, grouped by highlight in memory; one batched UPDATE "
        "of the few relabelled (3 of 81 page-turn rows on the development database)"
    ),
    ("books", "0032_cjk_search_pairs"): (
        "one regular-expression scan picks the highlights with Chinese or Japanese; only "
        "those are folded again, batched"
    ),
    ("books", "0033_more_headings_are_words"): (
        "a string test per highlight (passages for headings, words for passages), batched; "
        "set-based updates and deletes of the few found (24 of 12,570 highlights on the "
        "shared corpus); the rows it turns into passages are marked pending for the sweep"
    ),
    ("books", "0037_title_sort_from_first_letter"): (
        "a sort key per book (not per highlight), batched; only the changed keys are written "
        "(the titles that start with a quote or a mark)"
    ),
    ("books", "0043_note_hashtags_tagged"): (
        "a regular expression per note that holds a '#' (picked by the database), batched; "
        "tags and taggings bulk-created, conflicts ignored"
    ),
    ("books", "0044_highlight_file_tags"): (
        "a regular expression per note that holds a full-width '#' (U+FF03, picked by the "
        "database: the few Chinese and Japanese notes), batched; tags and taggings "
        "bulk-created, conflicts ignored; the column it adds is nullable, no row rewritten"
    ),
    ("books", "0045_sentences_are_not_headings"): (
        "a string test per stored word (is_word rows only), batched; set-based updates of the "
        "few found (8 of 12,570 highlights on the shared corpus); the rows it turns into "
        "passages are marked pending for the worker's sweep, never embedded here"
    ),
    ("books", "0046_highlight_texts_without_controls"): (
        "the database's regular expression picks the books and highlights holding a control "
        "character (none in the shared corpus's Kindle files); each is cleaned in Python and "
        "updated alone, a highlight's new key checked free by one indexed lookup"
    ),
    ("review", "0003_elided_words_one_key"): (
        "a string test per word schedule (a few hundred a reader); for the readers with one "
        "opening on an elision, their words with an apostrophe and those books' languages "
        "(one aggregate); the few schedules and cards found rewritten row by row"
    ),
}
# Re-embedding and re-judging are never done inside a migration.
FORBIDDEN = ("highlights_embed", "get_encoder", "connections_rebuild", "connections_write")


def _migrations_running_code() -> dict[tuple[str, str], str]:
    found = {}
    for path in sorted(ROOT.glob("*/migrations/[0-9]*.py")):
        text = path.read_text()
        if re.search(r"migrations\.RunPython\((?!\s*migrations\.RunPython\.noop)", text):
            found[(path.parent.parent.name, path.stem)] = text
    return found


class DataMigrationTests:
    def test_every_migration_that_runs_code_was_reviewed(self) -> None:
        found = _migrations_running_code()
        unreviewed = sorted(set(found) - set(REVIEWED))
        assert not unreviewed, (
            f"{unreviewed} run code inside `migrate`: keep it short (set-based SQL, or a "
            "cheap batched pass) and add it to REVIEWED with why, or move the work to a "
            "background task with progress (docs/operations.md, Upgrades)"
        )
        assert set(REVIEWED) <= set(found), "a reviewed migration is gone: drop it from REVIEWED"

    def test_no_migration_embeds_or_judges_connections(self) -> None:
        for path in ROOT.glob("*/migrations/[0-9]*.py"):
            text = path.read_text()
            for name in FORBIDDEN:
                assert name not in text, f"{path.relative_to(ROOT)} calls {name}"
