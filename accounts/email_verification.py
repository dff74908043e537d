"""An e-mail address is the reader's once they followed a link sent to it.

Until then no review e-mail and no password reset goes there: anyone could otherwise type
someone else's address and have Exogram mail them. The verified address is kept beside
the address itself, so changing the address (here or in the review settings) unverifies
it by itself.
"""

from django.core import signing
from django.core.mail import send_mail
from django.http import HttpRequest

from accounts.models import User
from exogram.links import site_link_to
from exogram.rate_limits import rate_limited

SALT = "exogram.accounts.email-verification"
MAX_AGE_SECONDS = 3 * 24 * 3600
# Verification mails one reader can have sent in an hour.
MAILS_PER_HOUR = 3


def email_is_verified(reader: User) -> bool:
    return bool(reader.email) and reader.verified_email == reader.email


def email_verification_send(*, reader: User, request: HttpRequest | None = None) -> bool:
    """Mail a link that verifies the reader's address; False when none was sent (no
    address, already verified, or too many asked for within the hour)."""
    if not reader.email or email_is_verified(reader):
        return False
    if rate_limited(
        kind="verify-mail", key=str(reader.pk), limit=MAILS_PER_HOUR, window_seconds=3600
    ):
        return False
    token = signing.dumps({"reader": reader.pk, "email": reader.email}, salt=SALT)
    link = site_link_to("email_verify", args=(token,), request=request)
    send_mail(
        "Confirm your e-mail address for Exogram",
        f'Someone set this address on the Exogram account "{reader.username}".\n\n'
        f"If it was you, confirm it here (the link works for 3 days):\n{link}\n\n"
        "If it was not you, ignore this e-mail: nothing more will be sent here.\n",
        None,
        [reader.email],
    )
    return True


def email_verification_confirm(*, token: str) -> User | None:
    """The reader whose current address the token verifies, now verified; else None."""
    try:
        claim = signing.loads(token, salt=SALT, max_age=MAX_AGE_SECONDS)
    except signing.BadSignature:
        return None
    reader = User.objects.filter(pk=claim.get("reader"), email=claim.get("email")).first()
    if reader is None or not reader.email:
        return None
    reader.verified_email = reader.email
    reader.save(update_fields=["verified_email"])
    return reader
