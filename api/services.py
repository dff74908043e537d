"""Making, checking and revoking a reader's API tokens."""

import hashlib
import secrets
from datetime import timedelta

from django.utils import timezone

from accounts.models import User
from api.models import ApiToken

TOKEN_PREFIX = "exo_"
# last_used_at is written at most this often: a busy tool must not write on every call.
LAST_USED_RESOLUTION = timedelta(minutes=5)


def _hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def api_token_create(*, reader: User, name: str) -> tuple[ApiToken, str]:
    """A new token; the raw token is returned this once and never stored."""
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        reader=reader, name=name.strip()[:100] or "API token", prefix=raw[:10],
        token_hash=_hash(raw),
    )  # fmt: skip
    return token, raw


def api_token_revoke(*, token: ApiToken) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])


def api_token_reader(*, raw: str) -> User | None:
    """The reader a raw token belongs to, if it is theirs and not revoked."""
    if not raw.startswith(TOKEN_PREFIX) or len(raw) > 200:
        return None
    token = (
        ApiToken.objects.select_related("reader")
        .filter(token_hash=_hash(raw), revoked_at__isnull=True, reader__is_active=True)
        .first()
    )
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or token.last_used_at < now - LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.reader
