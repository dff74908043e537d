"""A failed backup's reason, stored in English and said in the staff member's language on
/status/ (the matching is `exogram.wording`'s)."""

from types import ModuleType

from backups import nightly, postgres, services
from exogram.wording import StoredMessages

__all__ = ["translated"]


def _modules() -> list[ModuleType]:
    return [nightly, postgres, services]


_MESSAGES = StoredMessages(_modules, nested={"error"})


def _templates() -> list[str]:
    return _MESSAGES.templates()


def translated(message: str) -> str:
    """The stored English message in the active language, or as stored."""
    return _MESSAGES.translated(message)
