import uuid

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A reader's key for the read-only JSON API (and only that: never a session).

    Only the token's SHA-256 is stored: the token is shown once, when it is made. A fast hash
    is enough because the token is 256 random bits, not a password a person chose.
    """

    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=100, help_text="Where the reader uses it.")
    # The first characters, so the reader can tell their tokens apart in the list.
    prefix = models.CharField(max_length=16)
    token_hash = models.CharField(max_length=64, unique=True)
    created = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        indexes = [
            # The reader's list of tokens on the settings page.
            models.Index(fields=["reader", "-created"], name="apitoken_reader_created"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def active(self) -> bool:
        return self.revoked_at is None
