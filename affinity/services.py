"""Kindred readers' workflows: reader centroids, passage echoes, sharing settings.

`centroids_mark_stale` is the hook the embedding pipeline calls when a reader's vectors
change; it queues one debounced `centroid_refresh` per reader. A refresh probes the
reader's new highlights for passage echoes (famous passages weigh less) and sums the shared
vectors in one scan (affinity.reading says what the centroid is, and why).
"""

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

import numpy as np
import numpy.typing as npt
from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from accounts.models import User
from affinity.models import PassageEcho, ReaderCentroid, SharingProfile
from affinity.reading import ECHO_CAP, echo_weight, unit_or_none
from books.connections.neighbours import iterative_scan
from books.models import EMBEDDING_DIMENSIONS, Book, Highlight

logger = logging.getLogger(__name__)

# A refresh queued longer ago than this was lost with its worker: the next change queues
# another instead of waiting forever on the flag.
LOST_REFRESH = timedelta(minutes=15)
# A reader needs this many embedded, shared highlights before their centroid says
# anything (below it, one odd highlight moves it anywhere).
MIN_HIGHLIGHTS = 20

# Two highlights this close (cosine distance) are the same passage: ECHO_SHARE of the
# model's same-idea cut, at most ECHO_DISTANCE. Measured on multilingual-e5-small (same idea
# under 0.07), 150 quotes of the evaluation data: against itself lower-cased, 0.005 median,
# 0.045 at p99; cut to its first three quarters, 0.027 median, 0.045 at p90; the nearest
# *other* passage of 11,877, 0.064 at p5, 0.099 median. 0.049 takes the first two for echoes
# and almost never the third; the 0.12 measured on MiniLM (same idea under 0.27) took 132
# other passages for echoes of each one under e5, and weighed down whole topics.
ECHO_DISTANCE = 0.12
ECHO_SHARE = 0.7
# Highlights probed per statement: each batch commits, so a long probe run makes progress
# that a killed worker does not lose.
ECHO_BATCH = 256
# A refresh stops probing after this long and queues another refresh to go on, behind the
# embedding turns, so one huge import never holds a worker past the task time limit, nor
# the refresh queue, which the maps' layouts share (exogram/queues.py). Measured: a
# turn of 256 probes took 0.9-2.8 s on 8,208 vectors (load average 6-8), so a 5,517-
# highlight library is probed in a few turns.
ECHO_BUDGET_SECONDS = 20.0


def echo_distance() -> float:
    """The distance under which two highlights are one passage, for the model in use."""
    from books.embedding.encoder import get_encoder

    return min(ECHO_DISTANCE, ECHO_SHARE * get_encoder().threshold)


# --- what a reader shares ------------------------------------------------------------------


def sharing_profile_for(reader: User) -> SharingProfile:
    profile, _ = SharingProfile.objects.get_or_create(reader=reader)
    return profile


def shared_highlights(reader_id: int) -> QuerySet[Highlight]:
    """The reader's alive highlights outside the books they excluded from sharing.

    Passages only: a standalone note is the reader's own writing, never shared or counted.
    """
    excluded = SharingProfile.excluded_books.through.objects.filter(
        sharingprofile__reader_id=reader_id
    ).values("book_id")
    return (
        Highlight.objects.alive()
        .filter(reader_id=reader_id, kind=Highlight.Kind.HIGHLIGHT)
        .exclude(book_id__in=excluded)
    )


# --- the debounced refresh -----------------------------------------------------------------


def embedded_shared_count(reader_id: int) -> int:
    """The reader's embedded highlights in the books they share, counted from the
    highlights themselves, as the home page counts them: the centroid's own count changes
    only when a refresh runs, a while after the vectors land."""
    return (
        shared_highlights(reader_id).filter(embedding_status=Highlight.EmbeddingStatus.DONE).count()
    )


def centroid_catch_up(*, reader: User) -> int:
    """A sharing reader's embedded shared highlights (embedded_shared_count); when they
    are enough and the stored centroid still says too few, the centroid computed now.

    Kindred readers took ten minutes to appear: the refresh queued when the vectors
    landed waited behind another reader's embedding. The sums are one scan of the reader's
    rows (CentroidSums.of: 10-110 ms for 428 to 5,517 highlights, measured on the
    development machine at a load average of 6-8), done once, when the centroid lags; the
    echo probe stays with the queued refresh, which weighs famous passages down after."""
    embedded = embedded_shared_count(reader.pk)
    if embedded < MIN_HIGHLIGHTS:
        return embedded
    centroid = ReaderCentroid.objects.filter(reader=reader).first()
    if centroid is None or centroid.vector is None or centroid.highlight_count < MIN_HIGHLIGHTS:
        _centroid_save(reader, CentroidSums.of(reader.pk))
    return embedded


def centroids_mark_stale(*, reader_ids: set[int], behind_the_embedding: bool = False) -> None:
    """Queue one centroid refresh per reader, unless one is queued already.

    The task is sent after commit, so it never runs before the vectors it reads are
    visible (STYLE: enqueue only after commit). `behind_the_embedding` sends it to the
    default queue rather than the refreshes' (exogram.queues): a long echo probe's next
    turn, which would otherwise be taken before every embedding turn.
    """
    from affinity.tasks import refresh_centroid

    options = {"queue": _default_queue()} if behind_the_embedding else {}
    now = timezone.now()
    for reader_id in sorted(reader_ids):
        ReaderCentroid.objects.get_or_create(reader_id=reader_id)
        # Only the call that sets the time enqueues; concurrent batches find it set. A
        # conditional UPDATE, so two workers racing here cannot both win.
        queued = (
            ReaderCentroid.objects.filter(reader_id=reader_id)
            .filter(Q(refresh_queued_at__isnull=True) | Q(refresh_queued_at__lt=now - LOST_REFRESH))
            .update(refresh_queued_at=now)
        )
        if queued:
            # celery-types does not know DjangoTask, the app's task class, which adds this.
            # No countdown: the worker takes a delayed task off the broker at once and, when
            # it is due, runs it ahead of all it has not taken yet, whatever the queues'
            # order (an import waited behind them). The claim above is the debounce: one
            # refresh waits per reader, and the changes made until it starts go in it.
            refresh_centroid.apply_async_on_commit(  # type: ignore[attr-defined]
                (reader_id,), **options
            )


def _default_queue() -> str:
    from exogram.celery import app

    return str(app.conf.task_default_queue)


def centroid_refresh(*, reader: User, probe_seconds: float = ECHO_BUDGET_SECONDS) -> ReaderCentroid:
    """Recompute where the reader's reading sits: the echo-weighted mean of the vectors of
    their shared highlights, L2-normalized. Idempotent: it reads only current vectors."""
    # Cleared first: a batch that lands while this runs queues the next refresh rather
    # than being lost in this one.
    ReaderCentroid.objects.filter(reader=reader).update(refresh_queued_at=None)
    sharing = SharingProfile.objects.filter(reader=reader, discoverable=True).exists()
    sums = CentroidSums.of(reader.pk)
    if sharing and sums.model_id is not None and sums.unprobed:
        # Saved before the probe: a reader new to sharing is compared at once, their new
        # highlights weighed as their own until the probe finds their echoes.
        _centroid_save(reader, sums)
        # Only sharing readers are compared, so only they pay for probing, and only for
        # highlights not probed yet.
        outcome = passage_echoes_probe(
            reader_id=reader.pk, model_id=sums.model_id, budget_seconds=probe_seconds
        )
        if outcome.others:
            centroids_mark_stale(reader_ids=outcome.others)
        if not outcome.finished:
            # The probe goes on in a refresh of its own, queued behind the embedding turns:
            # in the refreshes' queue, a sharing reader's probe of a large import took
            # turn after turn (each up to its budget) before any embedding, and on a worker
            # of one process (--pool solo) embedding waited until the whole probe was done.
            centroids_mark_stale(reader_ids={reader.pk}, behind_the_embedding=True)
        sums = CentroidSums.of(reader.pk)
    return _centroid_save(reader, sums)


def _centroid_save(reader: User, sums: "CentroidSums") -> ReaderCentroid:
    centroid, _ = ReaderCentroid.objects.get_or_create(reader=reader)
    centroid.vector, centroid.highlight_count = sums.vector(), sums.count
    centroid.embedding_model = sums.model_id or ""
    centroid.save(update_fields=["vector", "highlight_count", "embedding_model", "updated"])
    return centroid


def shared_vector_sql(alias: str, model: str = "%(model)s") -> str:
    """SQL: the row `alias` of books_highlight is an alive vector of `model` outside the
    books its reader excluded from sharing (shared_highlights, in SQL)."""
    return f"""
        {alias}.deleted_at IS NULL AND {alias}.kind = 'highlight'
        AND {alias}.embedding_status = 'done' AND {alias}.embedding_model = {model}
        AND NOT EXISTS (
            SELECT 1 FROM affinity_sharingprofile p
            JOIN affinity_sharingprofile_excluded_books x ON x.sharingprofile_id = p.id
            WHERE p.reader_id = {alias}.reader_id AND x.book_id = {alias}.book_id)
    """


def discoverable_sql(alias: str) -> str:
    """SQL: the reader of the row `alias` shares their reading."""
    return f"""EXISTS (SELECT 1 FROM affinity_sharingprofile p
                       WHERE p.reader_id = {alias}.reader_id AND p.discoverable)"""


@dataclass
class CentroidSums:
    """A reader's shared vectors summed by model and by how many readers hold the passage.

    One scan of the reader's rows gives everything a refresh needs: which model most of
    them use, the weighted sum, and how many highlights have not been probed for echoes.
    """

    model_id: str | None = None
    # (holders, sum of the vectors, how many) for the chosen model
    groups: list[tuple[int, npt.NDArray[np.float64], int]] = field(default_factory=list)
    unprobed: int = 0

    @property
    def count(self) -> int:
        return sum(n for _, _, n in self.groups)

    def vector(self) -> list[float] | None:
        total = np.zeros(EMBEDDING_DIMENSIONS, dtype=np.float64)
        for holders, vector_sum, _ in self.groups:
            total += echo_weight(holders) * vector_sum
        centroid = unit_or_none(total)
        return None if centroid is None else centroid.astype(np.float32).tolist()

    @classmethod
    def of(cls, reader_id: int) -> "CentroidSums":
        # Holders other than the reader come from the few pairs that are not a highlight's
        # echo of itself, so only those look up the other highlight; a highlight with no
        # echo of itself has not been probed (or its vector changed since).
        mine = f"h.reader_id = %(reader)s AND {shared_vector_sql('h', 'h.embedding_model')}"
        sql = f"""
            WITH others AS (
                SELECT e.highlight_id, count(DISTINCT o.reader_id) AS n
                FROM affinity_passageecho e JOIN books_highlight o ON o.id = e.echo_id
                WHERE e.highlight_id IN (
                        SELECT id FROM books_highlight WHERE reader_id = %(reader)s)
                  AND e.echo_id <> e.highlight_id AND o.reader_id <> %(reader)s
                  AND {shared_vector_sql("o", "e.embedding_model")} AND {discoverable_sql("o")}
                GROUP BY e.highlight_id
            )
            SELECT h.embedding_model,
                   EXISTS (SELECT 1 FROM affinity_passageecho s
                           WHERE s.highlight_id = h.id AND s.echo_id = h.id
                             AND s.embedding_model = h.embedding_model) AS probed,
                   1 + COALESCE(others.n, 0) AS holders,
                   sum(h.embedding)::real[], count(*)
            FROM books_highlight h LEFT JOIN others ON others.highlight_id = h.id
            WHERE {mine}
            GROUP BY 1, 2, 3
        """
        with connection.cursor() as cursor:
            cursor.execute(sql, {"reader": reader_id})
            rows = cursor.fetchall()
        if not rows:
            return cls()
        by_model: dict[str, int] = {}
        for model_id, _, _, _, n in rows:
            by_model[model_id] = by_model.get(model_id, 0) + int(n)
        # The model in use, else the one most of the vectors come from: two models never
        # mix, and during a model change the centroid moves to the new model's vectors.
        from books.embedding.encoder import active_model_id

        active = active_model_id()
        chosen = active if active in by_model else min(by_model, key=lambda m: (-by_model[m], m))
        sums = cls(model_id=chosen)
        merged: dict[int, tuple[npt.NDArray[np.float64], int]] = {}
        for model_id, probed, holders, vector_sum, n in rows:
            if model_id != chosen:
                continue
            if not probed:
                sums.unprobed += int(n)
            # An unprobed highlight has no echoes yet: it counts as the reader's alone.
            key = int(holders) if probed else 1
            total, count = merged.get(key, (np.zeros(EMBEDDING_DIMENSIONS), 0))
            merged[key] = (total + np.asarray(vector_sum, dtype=np.float64), count + int(n))
        sums.groups = [(k, total, n) for k, (total, n) in sorted(merged.items())]
        return sums


# --- passage echoes ------------------------------------------------------------------------


@dataclass
class ProbeOutcome:
    probed: int = 0
    # Readers whose highlights gained an echo: their weights changed.
    others: set[int] = field(default_factory=set)
    finished: bool = True


def passage_echoes_probe(
    *, reader_id: int, model_id: str, budget_seconds: float = ECHO_BUDGET_SECONDS
) -> ProbeOutcome:
    """Find the near-identical highlights (of any reader) of the reader's highlights not
    probed yet, and store each pair both ways. Idempotent: pairs are unique, and a probed
    highlight (it echoes itself) is not probed again."""
    outcome = ProbeOutcome()
    started = time.monotonic()
    while True:
        if time.monotonic() - started > budget_seconds:
            outcome.finished = False
            return outcome
        found = _probe_batch(reader_id=reader_id, model_id=model_id)
        if found is None:
            return outcome
        probed, others = found
        outcome.probed += probed
        outcome.others |= others


def _probe_batch(*, reader_id: int, model_id: str) -> tuple[int, set[int]] | None:
    # The probe looks through the whole table's HNSW index; the iterative scan keeps
    # looking when the model filter throws candidates away (during a model change).
    sql = """
        WITH fresh AS MATERIALIZED (
            SELECT h.id, h.reader_id, h.embedding FROM books_highlight h
            WHERE h.reader_id = %(reader)s AND h.deleted_at IS NULL AND h.kind = 'highlight'
              AND h.embedding_status = 'done' AND h.embedding_model = %(model)s
              AND NOT EXISTS (SELECT 1 FROM affinity_passageecho e
                              WHERE e.highlight_id = h.id AND e.echo_id = h.id
                                AND e.embedding_model = %(model)s)
            ORDER BY h.id LIMIT %(batch)s
        )
        SELECT f.id, f.reader_id, o.id, o.reader_id, o.distance
        FROM fresh f CROSS JOIN LATERAL (
            SELECT h.id, h.reader_id, h.embedding <=> f.embedding AS distance
            FROM books_highlight h
            WHERE h.deleted_at IS NULL AND h.kind = 'highlight'
              AND h.embedding_status = 'done' AND h.embedding_model = %(model)s
            ORDER BY h.embedding <=> f.embedding LIMIT %(cap)s
        ) o
        WHERE o.distance < %(radius)s OR o.id = f.id
    """
    params: dict[str, int | float | str] = {
        "reader": reader_id,
        "model": model_id,
        "batch": ECHO_BATCH,
        "cap": ECHO_CAP,
        "radius": echo_distance(),
    }
    with transaction.atomic():
        with iterative_scan(2 * ECHO_CAP) as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
            if not rows:
                return None
            probed = {row[0] for row in rows}
            # The index may miss a highlight's own vector (approximate search); it is
            # probed all the same and echoes itself.
            pairs: dict[tuple[int, int], float] = {(pk, pk): 0.0 for pk in probed}
            others: set[int] = set()
            for mine, _, theirs, their_reader, distance in rows:
                if mine == theirs:
                    continue
                pairs[(mine, theirs)] = float(distance)
                pairs[(theirs, mine)] = float(distance)
                if their_reader != reader_id:
                    others.add(their_reader)
        PassageEcho.objects.bulk_create(
            [
                PassageEcho(highlight_id=a, echo_id=b, embedding_model=model_id, distance=d)
                for (a, b), d in pairs.items()
            ],
            # A concurrent probe of the other reader may store the same pair first.
            ignore_conflicts=True,
            batch_size=1000,
        )
    return len(probed), others


def passage_echoes_forget(*, ids: Sequence[int]) -> None:
    """Drop the echo pairs of highlights whose vector changed (new words, re-embedded):
    they are probed again at their reader's next refresh."""
    PassageEcho.objects.filter(Q(highlight_id__in=ids) | Q(echo_id__in=ids)).delete()


def echo_holders(reader_ids: Sequence[int]) -> set[int]:
    """Readers holding an echo of these readers' highlights: their weights change when
    these readers' sharing does."""
    return set(
        PassageEcho.objects.filter(highlight__reader_id__in=reader_ids)
        .exclude(echo__reader_id__in=reader_ids)
        .values_list("echo__reader_id", flat=True)
        .distinct()
    )


# --- sharing settings ----------------------------------------------------------------------


def sharing_update(
    *, reader: User, discoverable: bool, display_name: str, excluded_books: Sequence[Book]
) -> SharingProfile:
    """Save a reader's sharing settings; the centroid follows in the same transaction.

    Turning sharing off takes effect at commit: every kindred query checks the flag. The
    centroid is recomputed here, not in a task, so that a book excluded a moment ago never
    counts in a centroid another reader is compared with.
    """
    if any(book.reader_id != reader.pk for book in excluded_books):
        raise ValueError("a reader can only exclude their own books")
    with transaction.atomic():
        profile = SharingProfile.objects.select_for_update().get(pk=sharing_profile_for(reader).pk)
        was = (profile.discoverable, set(profile.excluded_books.values_list("pk", flat=True)))
        profile.discoverable = discoverable
        profile.display_name = display_name.strip()
        profile.save(update_fields=["discoverable", "display_name", "updated"])
        profile.excluded_books.set(excluded_books)
        now = (discoverable, {book.pk for book in excluded_books})
        if now != was:
            sharing_changed(reader=reader)
    return profile


def sharing_changed(*, reader: User) -> None:
    """What the reader shares changed (their settings, or two books merged into one of
    them kept out of sharing: books.importing.same_book): the centroid is recomputed now,
    in the caller's transaction, so that an excluded passage never counts in a centroid
    another reader is compared with."""
    _centroid_save(reader, CentroidSums.of(reader.pk))
    # Probing (new to sharing) and the echo weights of readers who hold the same
    # passages follow in the background.
    centroids_mark_stale(reader_ids={reader.pk} | echo_holders([reader.pk]))
