"""Where the tests find the team's shared Kindle files: beside the checkout, read in place.

Those files carry no licence to copy, so the repository holds only fixtures written for it.
The tests over the real files run wherever the shared folder sits beside the checkout (every
developer's machine and CI have it) and, on a clone without it, skip saying where they
looked: they cannot run without the files, and failing would only say the folder is absent.
"""

from pathlib import Path

import pytest

CLIPPINGS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "clippings"


def require_clippings() -> Path:
    """The shared clippings folder; skips the calling test module when it is absent."""
    if not CLIPPINGS.is_dir():
        pytest.skip(f"no clippings corpus at {CLIPPINGS}", allow_module_level=True)
    return CLIPPINGS


READERS = CLIPPINGS.parent / "readers"


def require_readers() -> Path:
    """The shared folder of KOReader, Kobo and Apple Books files; skips when it is absent."""
    if not READERS.is_dir():
        pytest.skip(f"no readers' files at {READERS}", allow_module_level=True)
    return READERS
