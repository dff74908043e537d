"""The nightly backup (unless EXOGRAM_BACKUP_DIR is `off`), its retention, and its record."""

import logging
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db.models import Min
from django.utils import timezone
from django.utils.translation import gettext_noop

from backups.models import BackupRun
from backups.services import FOLDER_MODE, MANIFEST, backup_create

logger = logging.getLogger(__name__)

STAMP = "%Y%m%dT%H%M%SZ"
# A failed run's record: the exception's kind, then its message (one of backups.services'
# or backups.postgres', said in the staff member's language; Python's own stay English).
FAILED = gettext_noop("%(kind)s: %(error)s")
# A nightly backup older than this (or none at all) is shown as late on the status page:
# a night with no backup is as loud as a failed one.
LATE_AFTER = timedelta(hours=26)


@dataclass(frozen=True)
class Kept:
    path: Path
    taken: datetime


def folder_name(kind: str, now: datetime) -> str:
    return f"{kind}-{now.astimezone(UTC).strftime(STAMP)}"


def backups_folder_make(folder: Path) -> None:
    if not folder.exists():
        folder.mkdir(parents=True)
        folder.chmod(FOLDER_MODE)  # a folder of the reader's backups: theirs alone


def _nightly_backups(folder: Path) -> list[Kept]:
    """The complete nightly backups in `folder`, newest first (only folders whose manifest
    was written: a half-written one is never counted as kept)."""
    found = []
    for path in folder.glob("nightly-*"):
        try:
            taken = datetime.strptime(path.name.removeprefix("nightly-"), STAMP)
        except ValueError:
            continue
        if (path / MANIFEST).is_file():
            found.append(Kept(path, taken.replace(tzinfo=UTC)))
    return sorted(found, key=lambda kept: kept.taken, reverse=True)


def backups_to_keep(backups: list[Kept], *, daily: int, weekly: int) -> set[Path]:
    """The newest `daily` backups, and the newest of each of the `weekly` latest ISO weeks."""
    keep = {kept.path for kept in backups[:daily]}
    weeks: list[tuple[int, int]] = []
    for kept in backups:
        week = kept.taken.isocalendar()[:2]
        if week not in weeks:
            weeks.append(week)
            if len(weeks) > weekly:
                break
            keep.add(kept.path)
    return keep


def backups_prune(*, folder: Path, now: datetime, daily: int, weekly: int) -> list[Path]:
    """Remove the nightly backups retention does not keep, and leftovers of interrupted
    ones older than a day. Backups taken by hand are never removed."""
    backups = _nightly_backups(folder)
    keep = backups_to_keep(backups, daily=daily, weekly=weekly)
    removed = [kept.path for kept in backups if kept.path not in keep]
    for partial in folder.glob(".partial-*"):
        if now.timestamp() - partial.stat().st_mtime > 86400:
            removed.append(partial)
    for path in removed:
        shutil.rmtree(path)
    return removed


def backup_record(
    *, kind: str, path: Path, started_at: datetime, seconds: float, error: str = "", pruned: int = 0
) -> BackupRun:
    size = sum(p.stat().st_size for p in path.iterdir()) if not error and path.is_dir() else 0
    return BackupRun.objects.create(
        kind=kind,
        status=BackupRun.Status.FAILED if error else BackupRun.Status.OK,
        path=str(path),
        size_bytes=size,
        seconds=round(seconds, 2),
        pruned=pruned,
        error=error,
        started_at=started_at,
        finished_at=timezone.now(),
    )


def backup_nightly(*, folder: Path, now: datetime) -> BackupRun:
    """Take tonight's backup into `folder`, prune by retention, record and log the outcome.

    Never raises for a failed backup: the failure is logged as an error and recorded, and
    the status page shows it in red until a backup succeeds again.
    """
    path = folder / folder_name("nightly", now)
    started = time.monotonic()
    try:
        backups_folder_make(folder)
        backup_create(to=path)
    except Exception as error:
        logger.exception("the nightly backup into %s FAILED", path)
        return backup_record(
            kind=BackupRun.Kind.NIGHTLY, path=path, started_at=now,
            seconds=time.monotonic() - started,
            error=FAILED % {"kind": type(error).__name__, "error": error},
        )  # fmt: skip
    pruned = backups_prune(
        folder=folder,
        now=now,
        daily=settings.EXOGRAM_BACKUP_KEEP_DAILY,
        weekly=settings.EXOGRAM_BACKUP_KEEP_WEEKLY,
    )
    run = backup_record(
        kind=BackupRun.Kind.NIGHTLY, path=path, started_at=now,
        seconds=time.monotonic() - started, pruned=len(pruned),
    )  # fmt: skip
    logger.info(
        "nightly backup written to %s: %d bytes in %.1f s; %d old backup(s) removed",
        path, run.size_bytes, run.seconds, len(pruned),
    )  # fmt: skip
    return run


@dataclass(frozen=True)
class BackupStatus:
    configured: bool
    folder: str
    last: BackupRun | None
    last_ok: BackupRun | None
    recent: list[BackupRun]
    late: bool

    @property
    def failing(self) -> bool:
        return self.last is not None and self.last.status == BackupRun.Status.FAILED


def installed_at() -> datetime | None:
    """When this instance's database was made: its first migration's."""
    from django.db.migrations.recorder import MigrationRecorder

    first: datetime | None = MigrationRecorder.Migration.objects.aggregate(first=Min("applied"))[
        "first"
    ]
    return first


def backup_status(*, now: datetime) -> BackupStatus:
    recent = list(BackupRun.objects.all()[:14])
    last_ok = BackupRun.objects.filter(status=BackupRun.Status.OK).first()
    configured = settings.EXOGRAM_BACKUP_DIR is not None
    # With no good backup yet, a failed one is late at once; otherwise the clock starts when
    # the instance was made, so a new one is not in red before its first night.
    since = last_ok.finished_at if last_ok else installed_at()
    failed_only = last_ok is None and bool(recent)
    late = configured and (failed_only or since is None or now - since > LATE_AFTER)
    return BackupStatus(
        configured=configured,
        folder=str(settings.EXOGRAM_BACKUP_DIR or ""),
        last=recent[0] if recent else None,
        last_ok=last_ok,
        recent=recent,
        late=late,
    )
