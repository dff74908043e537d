"""The committed label files resolve against the shared data: every reference still points
at the text it was made from (a changed source file would silently mislabel)."""

from pathlib import Path

import pytest

from evaluation.labels import LABELS_DIR, SHARED_DATA, labelled_texts, read_labels

pytestmark = pytest.mark.corpus

if not SHARED_DATA.is_dir():
    pytest.skip(f"no shared data at {SHARED_DATA}", allow_module_level=True)


class CommittedLabelsTests:
    @pytest.mark.parametrize("path", sorted(LABELS_DIR.glob("*.tsv")), ids=lambda p: p.name)
    def test_it_resolves_every_row(self, path: Path) -> None:
        rows = read_labels(path)
        resolved = labelled_texts(rows, SHARED_DATA)
        assert len(resolved) == len(rows) > 0
        assert all(r.a_text and r.b_text for r in resolved)
