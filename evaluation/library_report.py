"""What a reader of an imported library meets, measured: coverage by language, and a fresh
blind sample (stored connections, the first three neighbours of random highlight pages,
random control pairs) written for a judge and scored from the verdicts. Django; never
imported by the app (evaluate_library runs it).

The app's reads are used as the pages use them: `library_connections` for the stored
pairs (strength and same author as its annotations say), `highlight_connections` for what
a highlight page shows first (connections by other authors, or the nearest passages when
there are none).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evaluation.blind import BlindPair, Tally, scored, tally
from evaluation.candidates import SourceIndex, kind_of, language_of, traced

if TYPE_CHECKING:
    from accounts.models import User
    from books.models import Highlight

PAGE_NEIGHBOURS = 3
SHORT_WORDS = 3


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _connections(reader: User) -> list[Any]:
    from books.connections.selectors import library_connections

    return list(library_connections(reader).order_by("pk"))


def measure(reader: User) -> dict[str, Any]:
    """Counts and coverage: passages (not words) with at least one connection, overall,
    across authors and by language (evaluation.languages: German, Portuguese and French
    too)."""
    from books.models import Highlight
    from books.vocabulary import words_of

    highlights = Highlight.objects.alive().filter(reader=reader)
    total = highlights.count()
    words = highlights.filter(is_word=True).count()
    passages = list(highlights.passages().filter(embedding_status=Highlight.EmbeddingStatus.DONE))
    language = {p.pk: language_of(p) for p in passages}
    pairs = _connections(reader)
    connected: set[int] = set()
    connected_across: set[int] = set()
    by_kind: Counter[str] = Counter()
    for pair in pairs:
        connected.update((pair.highlight_a_id, pair.highlight_b_id))
        if not pair.same_author:
            connected_across.update((pair.highlight_a_id, pair.highlight_b_id))
        first = language.get(pair.highlight_a_id, "unknown")
        by_kind[kind_of(first, language.get(pair.highlight_b_id, "unknown"))] += 1
    per_language: dict[str, dict[str, float]] = {}
    for name, count in Counter(language.values()).most_common():
        ids = {pk for pk, lang in language.items() if lang == name}
        per_language[name] = {
            "passages": count,
            "connected_share": _share(len(ids & connected), count),
            "connected_across_authors_share": _share(len(ids & connected_across), count),
        }
    short = sum(
        1
        for pair in pairs
        if min(len(words_of(pair.highlight_a.text)), len(words_of(pair.highlight_b.text)))
        <= SHORT_WORDS
    )
    same_idea = sum(1 for pair in pairs if pair.same_idea)
    return {
        "highlights": total,
        "words": words,
        "words_share": _share(words, total),
        "passages": len(passages),
        "books": reader.books.count(),
        "connections": len(pairs),
        "same_idea": same_idea,
        "related": len(pairs) - same_idea,
        "short_side_share": _share(short, len(pairs)),
        "across_authors_share": _share(sum(1 for p in pairs if not p.same_author), len(pairs)),
        "passages_connected_share": _share(len(connected), len(passages)),
        "passages_connected_across_authors_share": _share(len(connected_across), len(passages)),
        "connections_by_languages": dict(by_kind.most_common()),
        "by_language": per_language,
    }


def page_neighbours(highlight: Highlight, *, limit: int = PAGE_NEIGHBOURS) -> list[tuple[Any, str]]:
    """What the highlight's page shows first, in order, with how it is shown ("same idea",
    "related" or "nearest"): connections by other authors, or the nearest passages."""
    from books.connections.selectors import highlight_connections

    shown = highlight_connections(highlight)
    found: list[tuple[Any, str]] = [(c.highlight, "same idea") for c in shown.same_idea]
    found += [(c.highlight, "related") for c in shown.related]
    if not found:
        found = [(c.highlight, "nearest") for c in shown.nearest]
    return found[:limit]


def blind_sample(
    reader: User,
    *,
    connections: int,
    pages: int,
    controls: float,
    seed: int,
    index: SourceIndex | None = None,
) -> tuple[list[BlindPair], dict[str, Any]]:
    """Stored connections drawn at random, the first neighbours of random highlight pages,
    and random pairs of passages from two books as controls (`controls` per judged pair of
    the other two groups). With them, notes for the scoring: the pages that showed no
    neighbour at all (they count as pages without a good first neighbour). With an `index`,
    each pair's sides are traced to the shared data, so its verdict can become a label row
    (blind_pairs --score --labels)."""
    from books.models import Highlight

    rng = random.Random(seed)
    pairs = _connections(reader)
    sample: list[BlindPair] = []
    for pair in rng.sample(pairs, min(connections, len(pairs))):
        first, second = pair.highlight_a, pair.highlight_b
        strength = "same idea" if pair.same_idea else "related"
        meta = {"a_id": first.pk, "b_id": second.pk, "strength": strength}
        meta |= {"same_author": bool(pair.same_author)} | traced(index, first, second)
        kind = kind_of(language_of(first), language_of(second))
        sample.append(BlindPair(first.text, second.text, "connection", kind, meta))
    passages = list(
        Highlight.objects.alive()
        .passages()
        .filter(reader=reader, embedding_status=Highlight.EmbeddingStatus.DONE)
        .select_related("book")
    )
    empty_pages: list[dict[str, Any]] = []
    for page in rng.sample(passages, min(pages, len(passages))):
        shown_here = page_neighbours(page)
        if not shown_here:
            empty_pages.append({"page": page.pk, "kind": language_of(page)})
        for rank, (other, shown) in enumerate(shown_here, start=1):
            meta = {"a_id": page.pk, "b_id": other.pk, "page": page.pk, "rank": rank}
            meta |= {"shown": shown} | traced(index, page, other)
            sample.append(BlindPair(page.text, other.text, "page", language_of(page), meta))
    wanted = round(controls * len(sample))
    tries = 0
    while wanted > 0 and len(passages) > 1 and tries < 100 * wanted:
        tries += 1
        first, second = rng.sample(passages, 2)
        if first.book_id == second.book_id:
            continue
        meta = {"a_id": first.pk, "b_id": second.pk} | traced(index, first, second)
        kind = kind_of(language_of(first), language_of(second))
        sample.append(BlindPair(first.text, second.text, "control", kind, meta))
        wanted -= 1
    return sample, {"empty_pages": empty_pages}


def score(
    key: Sequence[dict[str, Any]], verdicts: dict[int, str], notes: dict[str, Any]
) -> dict[str, Any]:
    """Judged precision of the connections (by strength and by languages), the controls,
    and the pages: the first neighbour judged related or same, and any of the first three
    (a page that showed nothing has neither)."""
    by_group = scored(key, verdicts)
    connections = [item for item in key if item["group"] == "connection"]
    strengths: dict[str, list[str]] = defaultdict(list)
    for item in connections:
        strengths[item["meta"]["strength"]].append(verdicts[int(item["number"])])
    same_idea = strengths.get("same idea", [])
    pages: dict[int, dict[int, str]] = defaultdict(dict)
    page_language: dict[int, str] = {}
    first_shown: dict[int, str] = {}
    for item in key:
        if item["group"] == "page":
            meta = item["meta"]
            pages[meta["page"]][meta["rank"]] = verdicts[int(item["number"])]
            page_language[meta["page"]] = item["kind"]
            if meta["rank"] == 1:
                first_shown[meta["page"]] = meta["shown"]
    for empty in notes.get("empty_pages", []):
        pages[empty["page"]] = {}
        page_language[empty["page"]] = empty["kind"]
        first_shown[empty["page"]] = "nothing"

    def good(verdict: str) -> bool:
        return verdict in ("same", "related")

    def page_figures(ids: Sequence[int]) -> dict[str, Any]:
        first = sum(1 for p in ids if good(pages[p].get(1, "unrelated")))
        any_three = sum(1 for p in ids if any(good(v) for v in pages[p].values()))
        return {
            "pages": len(ids),
            "first_good_share": _share(first, len(ids)),
            "any_of_three_good_share": _share(any_three, len(ids)),
        }

    page_ids = sorted(pages)
    languages = sorted({page_language[p] for p in page_ids})
    shown_as = sorted(set(first_shown.values()))
    return {
        "groups": {f"{g}/{k}": _tally_dict(t) for (g, k), t in by_group.items()},
        "connections_by_strength": {s: _tally_dict(tally(v)) for s, v in sorted(strengths.items())},
        "same_idea_judged_same_share": _share(sum(v == "same" for v in same_idea), len(same_idea)),
        "pages": page_figures(page_ids),
        "pages_by_language": {
            lang: page_figures([p for p in page_ids if page_language[p] == lang])
            for lang in languages
        },
        "pages_by_first_shown": {
            shown: page_figures([p for p in page_ids if first_shown.get(p) == shown])
            for shown in shown_as
        },
    }


def _tally_dict(found: Tally) -> dict[str, Any]:
    return {
        "judged": found.total,
        "related_share": round(found.related_share, 4),
        "same": found.same,
        "related": found.related,
        "unrelated": found.unrelated,
    }
