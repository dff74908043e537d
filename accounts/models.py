from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models


class User(AbstractUser):
    """A reader. Custom from the first migration so fields can be added without pain."""

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
