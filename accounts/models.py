from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils.translation import gettext_lazy as _

from accounts.usernames import validate_not_confusable


class User(AbstractUser):
    """A reader. Custom from the first migration so fields can be added without pain."""

    # AbstractUser's username, also refused when it is drawn like another reader's
    # (accounts.usernames): on the sign-up page, in the admin and by createsuperuser.
    username = models.CharField(
        _("username"),
        max_length=150,
        unique=True,
        help_text=_("Required. 150 characters or fewer. Letters, digits and @/./+/-/_ only."),
        validators=[AbstractUser.username_validator, validate_not_confusable],
        error_messages={"unique": _("A user with that username already exists.")},
    )
    # Set (with is_active off) when the reader asks to delete the account: the deletion
    # runs in the background, the embedding pipeline skips the reader meanwhile, and a
    # sweep finishes a deletion whose worker died.
    deletion_requested_at = models.DateTimeField(null=True, blank=True)
    # The address the reader proved is theirs by following a mailed link; mail goes to
    # `email` only while the two are the same (accounts.email_verification).
    verified_email = models.EmailField(blank=True)
    # Empty: follow the browser's Accept-Language. Otherwise one of settings.LANGUAGES,
    # applied to every page and to the e-mails sent to this reader.
    language = models.CharField(max_length=8, blank=True, default="", choices=settings.LANGUAGES)
