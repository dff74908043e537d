"""The embedding pipeline: claim highlights, encode them, write vectors, connect them.

Every step is guarded so that a retried, duplicated or swept task changes nothing twice.
The encoder (onnxruntime, numpy) is imported inside the functions: web processes that
only enqueue never load the model's runtime.
"""

import os
import socket
import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from books.connections.services import connections_forget, highlights_connect
from books.language import ENGLISH
from books.models import Connection, Highlight

if TYPE_CHECKING:
    from books.embedding.encoder import Encoders

# Highlights per embedding task: small enough for workers to share a large import, large
# enough that the per-task overhead stays small.
EMBED_TASK_SIZE = 256

# Highlights are claimed in sub-batches this small so that no claim's lock is held for
# long; a group's vectors are written, and connected, in one transaction. The task's texts
# are encoded in one call between the two: the encoder sorts them by length, and encoding
# sub-batches of 16 one by one ran at half the speed (82 against 183 texts/s, measured on
# the benchmark's library).
EMBED_BATCH = 16
# The most characters of one highlight that are embedded; the rest is left out and the
# highlight says so. Without a cap a 5 MB highlight ran through 20,000 windows (8-10
# minutes), past any lease, and was claimed again forever. 16,000 characters are about
# 4,000 tokens (16 of the model's windows), far more than any passage a reader marks.
EMBED_MAX_CHARS = 16_000
# The texts of one task are encoded in groups of at most this many characters (about
# 300 typical highlights: a whole task of typical ones stays one call). Each group is
# claimed, encoded and written before the next is claimed, so no claim waits behind more
# than one group's encoding, whatever the task holds.
EMBED_GROUP_CHARS = 64_000
# A claim older than this belongs to a worker that died: the sweep hands it out again.
# It must outlast any live task, or the sweep re-claims a highlight mid-encode and the
# first write is refused: longer than the tasks' hard time limit (15 minutes,
# CELERY_TASK_TIME_LIMIT, after which Celery kills the task), while a group, at most
# 64,000 + 16 x 16,000 characters, encodes in about two minutes on one thread.
STALE_CLAIM = timedelta(minutes=20)
# The sweep leaves alone what was enqueued more recently than this: its task is most
# likely still waiting in the queue (a backlog after a restart drains for minutes).
QUEUED_LEASE = STALE_CLAIM


def _needs_embedding(model_id: str, now: datetime) -> Q:
    status = Highlight.EmbeddingStatus
    # A reader whose account is being deleted is skipped: their rows are going away.
    return Q(deleted_at__isnull=True, reader__is_active=True) & (
        Q(embedding_status=status.PENDING)
        | (Q(embedding_status=status.DONE) & ~Q(embedding_model=model_id))
        | Q(embedding_status=status.CLAIMED, embedding_claimed_at__lt=now - STALE_CLAIM)
    )


def _claim(ids: list[int], model_id: str) -> tuple[datetime, list[Highlight]]:
    """Claim the highlights among `ids` that still need a vector from this model.

    Two workers given the same ids (a retry, a sweep, a duplicate delivery) race here:
    FOR UPDATE lets only one take each row, and the loser, once the winner's claim
    commits, finds the row claimed and leaves it. Not SKIP LOCKED: with two worker
    processes it skipped about 4% of the rows of a 10,000-highlight import that no other
    worker was claiming, and they waited for the next sweep. Rows are locked in id order,
    so two claims of overlapping batches cannot deadlock; and FOR NO KEY UPDATE, which
    leaves alone the key-share locks another worker's new connections take on their
    highlights (a FOR UPDATE claim of a neighbour could wait for that worker while it
    waited for the claim: a deadlock).
    """
    now = timezone.now()
    with transaction.atomic():
        rows = list(
            Highlight.objects.select_for_update(no_key=True)
            .filter(_needs_embedding(model_id, now), pk__in=ids)
            .order_by("pk")
            .only("pk", "reader_id", "text", "note", "language", "is_word")
        )
        Highlight.objects.filter(pk__in=[h.pk for h in rows]).update(
            embedding_status=Highlight.EmbeddingStatus.CLAIMED,
            embedding_claimed_at=now,
            embedding_claimed_by=_claimer(),
        )
    return now, rows


def _take(ids: list[int], model_id: str) -> list[int]:
    """Write this process's name on the task's highlights that still need a vector, before
    claiming them a batch at a time: killed between two batches, it leaves the rest pending
    with their task's message gone (a broker that cannot redeliver: the file broker), and
    the name tells the next worker to send them again (claims_of_dead_workers_release)
    instead of waiting out QUEUED_LEASE.

    Locked in id order first, as _claim locks them: a plain UPDATE locks rows in the order
    it finds them on disk, and beside another worker's claim of the same ids that order
    deadlocked (seen once in the race test)."""
    with transaction.atomic():
        taken = list(
            Highlight.objects.select_for_update(no_key=True)
            .filter(
                _needs_embedding(model_id, timezone.now()),
                pk__in=ids,
                # a dead worker's stale claim too (_needs_embedding), pending again
                embedding_status__in=[
                    Highlight.EmbeddingStatus.PENDING,
                    Highlight.EmbeddingStatus.CLAIMED,
                ],
            )
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        # When, too: a turn choosing meanwhile leaves them alone (_taken_by_a_live_turn).
        Highlight.objects.filter(pk__in=taken).update(
            embedding_status=Highlight.EmbeddingStatus.PENDING,
            embedding_claimed_by=_claimer(),
            embedding_claimed_at=timezone.now(),
        )
    return taken


def _claimer() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # it exists, as another user
    return False


def claims_of_dead_workers_release() -> int:
    """Hand out again the claims of worker processes of this host that are gone.

    A worker killed mid-batch (SIGKILL, out of memory, a power cut) leaves its highlights
    claimed, and the rest of its task taken (_take) but pending; other hosts wait out
    STALE_CLAIM, but on this host the process can be asked for, so the next sweep (one runs
    when a worker starts) sends them again at once.
    """
    prefix = f"{socket.gethostname()}:"
    held = Q(embedding_status=Highlight.EmbeddingStatus.CLAIMED) | Q(
        embedding_status=Highlight.EmbeddingStatus.PENDING
    )
    claimers = (
        Highlight.objects.filter(held, embedding_claimed_by__startswith=prefix)
        .values_list("embedding_claimed_by", flat=True)
        .distinct()
    )
    gone = [
        claimer
        for claimer in claimers
        if claimer[len(prefix) :].isdigit() and _process_gone(int(claimer[len(prefix) :]))
    ]
    if not gone:
        return 0
    return Highlight.objects.filter(held, embedding_claimed_by__in=gone).update(
        embedding_status=Highlight.EmbeddingStatus.PENDING,
        embedding_claimed_at=None,
        embedding_claimed_by="",
        embedding_enqueued_at=None,
    )


def _text_of(highlight: Highlight) -> str:
    return (highlight.text or highlight.note).strip()


# What a highlight's embedding says to its reader, stored in English and shown in the
# reader's language (books.wording).
NO_TEXT_TO_EMBED = gettext_noop("There is no text to embed.")
EMBEDDING_FAILED = gettext_noop("Embedding failed: %(error)s")
EMBEDDED_IN_PART = gettext_noop(
    "Only the first %(part)s of its %(all)s characters were embedded: its connections and "
    "search by meaning read that part."
)


def _embedded_part(text: str) -> str:
    """The text, or its first EMBED_MAX_CHARS characters cut at a word boundary."""
    if len(text) <= EMBED_MAX_CHARS:
        return text
    cut = text[:EMBED_MAX_CHARS]
    space = cut.rfind(" ", EMBED_MAX_CHARS // 2)
    return cut[:space] if space > 0 else cut


def _cut_notice(text: str) -> str:
    """What a highlight says about its vector when only its beginning was embedded."""
    if len(text) <= EMBED_MAX_CHARS:
        return ""
    return EMBEDDED_IN_PART % {"part": f"{len(_embedded_part(text)):,}", "all": f"{len(text):,}"}


def _fail_empty(rows: list[Highlight]) -> list[Highlight]:
    """Mark the claimed highlights with no text as failed; returns the others."""
    empty = [h.pk for h in rows if not (h.text or h.note).strip()]
    if empty:
        Highlight.objects.filter(pk__in=empty).update(
            embedding_status=Highlight.EmbeddingStatus.FAILED,
            embedding_claimed_at=None,
            embedding_error=NO_TEXT_TO_EMBED,
        )
    return [h for h in rows if h.pk not in empty]


def _release(rows: list[Highlight], claimed_at: datetime, reason: str) -> None:
    Highlight.objects.filter(
        pk__in=[h.pk for h in rows],
        embedding_status=Highlight.EmbeddingStatus.CLAIMED,
        embedding_claimed_at=claimed_at,
    ).update(
        embedding_status=Highlight.EmbeddingStatus.PENDING,
        embedding_claimed_at=None,
        embedding_error=reason,
    )


@dataclass
class EmbedOutcome:
    embedded_ids: list[int] = field(default_factory=list)
    skipped: int = 0
    readers: set[int] = field(default_factory=set)
    # What the turn took and left, pending and free again, when its time ran out: the next
    # turn's (books.tasks sends it).
    left_ids: list[int] = field(default_factory=list)

    @property
    def embedded(self) -> int:
        return len(self.embedded_ids)


@dataclass(frozen=True)
class TurnClock:
    """When a turn must stop taking more groups (`ends_at`, on `clock`'s scale); None: never."""

    ends_at: float | None = None
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def from_now(
        cls, seconds: float | None, clock: Callable[[], float] = time.monotonic
    ) -> "TurnClock":
        return cls(None if seconds is None else clock() + seconds, clock)


def highlights_embed(*, ids: list[int], turn: TurnClock | None = None) -> EmbedOutcome:
    """Give each highlight in `ids` that needs one a vector from the current model.

    Idempotent: a highlight already embedded by this model, deleted, or claimed by another
    worker is left alone, so calling this twice changes nothing the second time.
    With `turn`, it stops between two groups once the turn's time is up (after one group at
    least) and frees what it took and did not claim (`left_ids`).
    Raises EncoderUnavailable after leaving the claimed rows pending with the reason.
    """
    from books.embedding.encoder import EncoderUnavailable, get_encoders

    outcome = EmbedOutcome()
    try:
        encoders = get_encoders()
    except EncoderUnavailable as error:
        Highlight.objects.filter(pk__in=ids, deleted_at__isnull=True).exclude(
            embedding_status=Highlight.EmbeddingStatus.DONE
        ).update(embedding_error=str(error))
        raise
    taken = _take(ids, encoders.model_id)
    try:
        left = _embed_taken(encoders, ids, outcome, turn or TurnClock())
    except BaseException:
        with suppress(DatabaseError):  # a database gone cannot be told; the lease then frees them
            _untake(ids)
        raise
    if left:
        # Freed as an error frees them: pending, and no longer "taken by a live turn", so
        # the next turn (sent by the task) or any other one takes them at once.
        _untake(left)
        outcome.left_ids = sorted(set(left) & set(taken))
    return outcome


def _embed_taken(
    encoders: "Encoders", ids: list[int], outcome: EmbedOutcome, turn: TurnClock
) -> list[int]:
    """Claim, encode and write `ids` a group at a time; returns those it did not reach
    because the turn's time ran out (none without a deadline).

    With a deadline, a group is sized to what the turn has measured it writes in the time
    left (at most EMBED_GROUP_CHARS), and the first is one sub-batch: a whole task was one
    group of about 50,000 characters, encoded in one call that took 20 s on a quiet machine
    and 450-540 s on a loaded one, while an upload waited for a worker (docs/operations.md).
    """
    started = turn.clock()
    groups, written_chars = 0, 0
    limit = EMBED_GROUP_CHARS if turn.ends_at is None else 0
    group: list[tuple[datetime, list[Highlight]]] = []
    group_chars = 0
    for start in range(0, len(ids), EMBED_BATCH):
        if turn.ends_at is not None and groups and not group and turn.clock() >= turn.ends_at:
            return ids[start:]
        claimed_at, rows = _claim(ids[start : start + EMBED_BATCH], encoders.model_id)
        outcome.skipped += min(EMBED_BATCH, len(ids) - start) - len(rows)
        rows = _fail_empty(rows)
        if rows:
            group.append((claimed_at, rows))
            group_chars += sum(len(_embedded_part(_text_of(h))) for h in rows)
        if group and group_chars >= limit:
            _embed_group(encoders, group, outcome)
            groups, written_chars = groups + 1, written_chars + group_chars
            group, group_chars = [], 0
            if turn.ends_at is not None:
                # What this turn wrote a second so far (encoding, writing, connecting),
                # times the seconds left: a loaded machine gets smaller groups.
                now = turn.clock()
                per_second = written_chars / max(now - started, 1e-3)
                limit = min(EMBED_GROUP_CHARS, int(per_second * (turn.ends_at - now)))
    if group:
        _embed_group(encoders, group, outcome)
    return []


# The advisory lock (any constant no other advisory lock in the project uses) under which
# one turn at a time chooses its highlights: a second turn waits a moment and then sees the
# first one's highlights taken, so two turns never choose the same rows.
TURN_LOCK = 19_0002


def _taken_by_a_live_turn(now: datetime) -> Q:
    """Pending highlights another turn has chosen (_take writes when) and not yet claimed;
    after STALE_CLAIM its worker is dead (the task's time limit is shorter) and they are
    free again."""
    return Q(
        embedding_status=Highlight.EmbeddingStatus.PENDING,
        embedding_claimed_at__gte=now - STALE_CLAIM,
    )


def embedding_turn_take(*, ids: list[int], model_id: str, size: int = EMBED_TASK_SIZE) -> list[int]:
    """Choose, and take, the highlights one embedding task embeds: its turn at the worker.

    A task does not embed the ids it was sent with but the first `size` highlights that need
    a vector, readers with the fewest first: a reader's 4-highlight import goes at the next
    turn instead of behind another reader's 8,000, on any broker (the file broker has no
    priorities). Nothing waits forever: every task sent is one turn, each turn takes `size`
    highlights or all there are, and every enqueue sends a turn per `size` ids, so the turns
    sent cover the highlights sent; a turn whose time ran out (highlights_embed_turn) frees
    what it did not reach and sends one more turn for it; what is left over (a lost message,
    a dead worker's claims) the sweep sends again. Highlights of another model are chosen
    only among the task's own ids: after a model change the sweep sets them pending
    (embeddings_switch_model), and looking for them in every done row on every turn would
    read the whole table.

    Returns the chosen ids, the smallest reader's first, each taken by this process
    (_take), so that a second turn choosing meanwhile leaves them to this one.
    """
    now = timezone.now()
    status = Highlight.EmbeddingStatus
    # Not even the task's own ids when another turn took them: a turn that chose them
    # (fairly, before this task's) embeds them; taking them again would race it for every
    # row (one of them wins each in _claim) and leave this turn's share to the sweep. A
    # worker that died on another host frees its highlights when the lease runs out.
    candidates = Highlight.objects.filter(
        _needs_embedding(model_id, now),
        Q(embedding_status__in=[status.PENDING, status.CLAIMED]) | Q(pk__in=ids),
    ).exclude(_taken_by_a_live_turn(now))
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [TURN_LOCK])
        # Counted per reader, then read a reader at a time, in id order: one sort of every
        # pending row per turn cost more after a model change of a large instance.
        backlogs = (
            candidates.values("reader_id")
            .annotate(backlog=Count("pk"))
            .order_by("backlog", "reader_id")
            .values_list("reader_id", flat=True)
        )
        chosen: list[int] = []
        for reader_id in backlogs:
            if len(chosen) >= size:
                break
            rows = candidates.filter(reader_id=reader_id).order_by("pk")
            chosen += rows.values_list("pk", flat=True)[: size - len(chosen)]
        _take(chosen, model_id)
    return chosen


def _untake(ids: list[int]) -> None:
    """A task that stopped early (an error) frees what it took and did not claim."""
    Highlight.objects.filter(
        pk__in=ids,
        embedding_status=Highlight.EmbeddingStatus.PENDING,
        embedding_claimed_by=_claimer(),
    ).update(embedding_claimed_at=None)


def highlights_embed_turn(*, ids: list[int], seconds: float | None = None) -> EmbedOutcome:
    """One embedding task's turn: embed the highlights embedding_turn_take chooses, for
    about `seconds` (EXOGRAM_EMBEDDING_TURN_SECONDS by default; None there: unbounded, as
    in tests that run tasks in process): past them it stops between two groups and leaves
    the rest, pending, to the next turn (`left_ids`), so a worker process is free for an
    upload that often.

    `skipped` counts the task's own ids it left (done already, claimed by another worker,
    or left to another turn), as highlights_embed counts them.
    Raises EncoderUnavailable after leaving the task's highlights pending with the reason.
    """
    from books.embedding.encoder import EncoderUnavailable, get_encoders

    turn = TurnClock.from_now(
        settings.EXOGRAM_EMBEDDING_TURN_SECONDS if seconds is None else seconds
    )
    try:
        model_id = get_encoders().model_id
    except EncoderUnavailable:
        return highlights_embed(ids=ids)  # records the reason on them, and raises
    chosen = embedding_turn_take(ids=ids, model_id=model_id)
    outcome = highlights_embed(ids=chosen, turn=turn)
    embedded = set(outcome.embedded_ids)
    outcome.skipped = sum(1 for pk in ids if pk not in embedded)
    return outcome


def _embed_group(
    encoders: "Encoders", claims: list[tuple[datetime, list[Highlight]]], outcome: EmbedOutcome
) -> None:
    """Encode a group of claimed sub-batches in one call, then write them and connect them
    in one transaction."""
    rows = [h for _, claimed in claims for h in claimed]
    texts = [_embedded_part(_text_of(h)) for h in rows]
    # English passages also get the English model's vector, which judges their connections
    # with other English passages (books.embedding.english). Words never connect: none.
    english = [i for i, h in enumerate(rows) if _judged_in_english(encoders, h)]
    # Every passage also gets the theme model's vector, which the pair judge reads
    # (books.embedding.theme). Words never connect: none.
    theme = [i for i, h in enumerate(rows) if encoders.with_theme and _connects(h)]
    try:
        vectors = encoders.main.encode(texts)
        english_vectors: Iterable[Any] = (
            encoders.encode_english([texts[i] for i in english]) if english else []
        )
        theme_vectors: Iterable[Any] = (
            encoders.encode_theme([texts[i] for i in theme]) if theme else []
        )
    except Exception as error:
        for claimed_at, claimed in claims:
            _release(claimed, claimed_at, EMBEDDING_FAILED % {"error": error})
        raise
    english_of = dict(zip(english, english_vectors, strict=True))
    theme_of = dict(zip(theme, theme_vectors, strict=True))
    with transaction.atomic():
        # The readers' rows are share-locked for the write: an account deletion
        # (accounts.services) takes them FOR UPDATE first, so it waits for this write and
        # its connections to commit, or this finds the reader gone or leaving and writes
        # nothing. Without it a connection inserted mid-delete broke the delete with an
        # IntegrityError.
        live = _lock_live_readers({h.reader_id for h in rows})
        claimed_ats = [claimed_at for claimed_at, claimed in claims for _ in claimed]
        indexes = [i for i, h in enumerate(rows) if h.reader_id in live]
        written_ids = _write_vectors(
            [rows[i] for i in indexes],
            vectors[indexes],
            [english_of.get(i) for i in indexes],
            [theme_of.get(i) for i in indexes],
            [claimed_ats[i] for i in indexes],
            encoders.model_id,
        )
        outcome.skipped += len(rows) - len(written_ids)
        written_set = set(written_ids)
        outcome.readers.update(h.reader_id for h in rows if h.pk in written_set)
        # A new vector makes the old connections of these highlights meaningless; the new
        # ones are found in the same transaction, so a highlight that reads as embedded has
        # its connections too (the import report counts on that). One call for the whole
        # group: it reads each library once (books.connections.services).
        connections_forget(ids=written_ids)
        highlights_connect(ids=written_ids)
    outcome.embedded_ids += written_ids
    # The group's texts and vectors go now, before the next group is read (memory).
    del texts, vectors, english_vectors, english_of, theme_vectors, theme_of


def _connects(highlight: Highlight) -> bool:
    """A passage or a note with text: what connections are judged between."""
    return not highlight.is_word and bool(_text_of(highlight))


def _judged_in_english(encoders: "Encoders", highlight: Highlight) -> bool:
    """An English passage or note, when the English model is configured."""
    return (
        encoders.english_spec is not None and highlight.language == ENGLISH and _connects(highlight)
    )


def _lock_live_readers(reader_ids: set[int]) -> set[int]:
    """Share-lock the active readers among `reader_ids`; returns their ids."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM accounts_user WHERE id = ANY(%s) AND is_active ORDER BY id FOR SHARE",
            [sorted(reader_ids)],
        )
        return {row[0] for row in cursor.fetchall()}


def _write_vectors(
    rows: list[Highlight],
    vectors: Any,
    english_vectors: list[Any],
    theme_vectors: list[Any],
    claimed_ats: list[datetime],
    model_id: str,
) -> list[int]:
    """Write a group's vectors in one statement; returns the ids actually written.

    The guard: only our own, still-current claim (each row's of `claimed_ats`) is written.
    A sweep that re-claimed a row, a re-import that changed its text, or a delete in the
    meantime each make the row fall out of the WHERE, and it keeps whatever state it has now.
    """
    if not rows:
        return []
    values = ", ".join(
        ["(%s, %s::vector, %s::vector, %s::vector, %s, %s::timestamptz)"] * len(rows)
    )
    params: list[Any] = []
    for highlight, vector, english, theme, claimed_at in zip(
        rows, vectors, english_vectors, theme_vectors, claimed_ats, strict=True
    ):
        params += [
            highlight.pk,
            _vector_text(vector),
            None if english is None else _vector_text(english),
            None if theme is None else _vector_text(theme),
            _cut_notice(_text_of(highlight)),
            claimed_at,
        ]
    sql = f"""
        UPDATE books_highlight AS h
        SET embedding = v.embedding, english_embedding = v.english, theme_embedding = v.theme,
            embedding_model = %s, embedding_status = 'done', embedding_claimed_at = NULL,
            embedding_error = v.notice, updated = now()
        FROM (VALUES {values}) AS v(id, embedding, english, theme, notice, claimed_at)
        WHERE h.id = v.id AND h.deleted_at IS NULL AND h.embedding_status = 'claimed'
          AND h.embedding_claimed_at = v.claimed_at
        RETURNING h.id
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [model_id, *params])
        return [row[0] for row in cursor.fetchall()]


def _vector_text(vector: Any) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]"


def embeddings_switch_model(*, model_id: str) -> int:
    """Hand the vectors of any other model over to re-embedding; returns how many.

    Vectors of two models are never compared, so after a model change the old vectors
    leave every read path at once: their highlights go back to pending (the reader's
    progress bar shows the re-embedding; the old vector stays in the row until the new
    one is written), the connections found with them are forgotten, and the readers'
    centroids are refreshed from the vectors of the model in use. Idempotent.
    """
    from affinity.services import centroids_mark_stale

    status = Highlight.EmbeddingStatus
    with transaction.atomic():
        stale = Highlight.objects.filter(deleted_at__isnull=True, embedding_status=status.DONE)
        stale = stale.exclude(embedding_model=model_id)
        readers = set(stale.values_list("reader_id", flat=True).distinct())
        switched = stale.update(embedding_status=status.PENDING, embedding_claimed_at=None)
        Connection.objects.exclude(embedding_model=model_id).delete()
        if readers:
            centroids_mark_stale(reader_ids=readers)
    return switched


def pending_highlight_ids(*, queued_before: timedelta | None = None) -> list[int]:
    """Highlights that need a vector from the current model (for sweeps and embed_pending).

    With `queued_before`, leave out those whose task was sent more recently than that: it
    is still in the queue (without it, every sweep re-sent every pending highlight, and
    after restarts 1,291 redundant tasks delayed new readers for 15 minutes).
    Without a model (it cannot load) every highlight that is not done counts as pending.
    """
    from books.embedding.encoder import EncoderUnavailable, get_encoders

    now = timezone.now()
    try:
        condition = _needs_embedding(get_encoders().model_id, now)
    except EncoderUnavailable:
        condition = Q(deleted_at__isnull=True) & ~Q(embedding_status=Highlight.EmbeddingStatus.DONE)
    queryset = Highlight.objects.filter(condition)
    if queued_before is not None:
        queryset = queryset.filter(
            Q(embedding_enqueued_at__isnull=True) | Q(embedding_enqueued_at__lt=now - queued_before)
        )
    return list(queryset.order_by("pk").values_list("pk", flat=True))


def embedding_elsewhere(*, reader_id: int) -> bool:
    """Whether the worker is embedding another reader's highlights and none of this
    reader's: what a reader whose highlights wait is told (books.selectors)."""
    now = timezone.now()
    busy = Highlight.objects.filter(
        embedding_status__in=[Highlight.EmbeddingStatus.PENDING, Highlight.EmbeddingStatus.CLAIMED],
        embedding_claimed_at__gte=now - STALE_CLAIM,  # claimed, or taken by a live turn
    )
    return (
        not busy.filter(reader_id=reader_id).exists() and busy.exclude(reader_id=reader_id).exists()
    )


def embedding_turn_under_way() -> bool:
    """Whether a worker is in a turn of embedding: highlights claimed, or taken by a turn,
    within the lease. An upload queued meanwhile waits for that turn's end at most
    (EXOGRAM_EMBEDDING_TURN_SECONDS and one group), its queue being taken first."""
    return Highlight.objects.filter(
        embedding_status__in=[Highlight.EmbeddingStatus.PENDING, Highlight.EmbeddingStatus.CLAIMED],
        embedding_claimed_at__gte=timezone.now() - STALE_CLAIM,
    ).exists()


def highlights_mark_enqueued(*, ids: list[int]) -> None:
    """Their task is in the queue: the sweep waits QUEUED_LEASE before sending another."""
    Highlight.objects.filter(pk__in=ids).exclude(
        embedding_status=Highlight.EmbeddingStatus.DONE
    ).update(embedding_enqueued_at=timezone.now(), embedding_error="")


def highlights_mark_unqueued(*, ids: list[int], reason: str) -> None:
    """Their task could not be sent: say so, and let the next sweep send it."""
    Highlight.objects.filter(pk__in=ids).exclude(
        embedding_status=Highlight.EmbeddingStatus.DONE
    ).update(embedding_enqueued_at=None, embedding_error=reason)


def readers_embeddings_changed(*, reader_ids: set[int]) -> None:
    """A batch of a reader's vectors landed: refresh what is derived from them."""
    from affinity.services import centroids_mark_stale

    with transaction.atomic():
        # A reader deleted meanwhile has no centroid to mark (the lock: see _embed_group).
        live = _lock_live_readers(reader_ids)
        centroids_mark_stale(reader_ids=live)
