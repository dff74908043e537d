"""The rule for versions of one passage (books.importing.versions): a highlight whose words
a new version changed loses every vector it had, the theme model's too, until the pipeline
embeds its new words."""

import numpy as np
import pytest

from accounts.models import User
from books.embedding.pipeline import highlights_embed
from books.importing.services import clippings_import
from books.importing.versions import VECTORS_RESET
from books.models import Highlight
from tests.books.kindle import BORGES, Entry, clippings_file

SHORT = Entry(BORGES, "He remembered every leaf of every tree", location="380")
EXTENDED = Entry(
    BORGES,
    "He remembered every leaf of every tree of every wood, and every time he saw it.",
    location="380-381",
    added="Tuesday, 4 March 2025 09:00:00",
)


def _import(reader: User, entry: Entry) -> None:
    clippings_import(reader=reader, data=clippings_file(entry), file_name="c.txt")


@pytest.mark.django_db
class VectorsResetTests:
    def test_it_names_every_vector_column(self) -> None:
        vectors = {f.name for f in Highlight._meta.get_fields() if f.name.endswith("embedding")}
        assert vectors == {"embedding", "english_embedding", "theme_embedding"}
        assert vectors <= set(VECTORS_RESET)
        assert all(VECTORS_RESET[name] is None for name in vectors)

    def test_an_extension_leaves_no_vector_of_the_old_words(self, alice: User) -> None:
        _import(alice, SHORT)
        highlight = Highlight.objects.get(reader=alice)
        highlights_embed(ids=[highlight.pk])
        highlight.refresh_from_db()
        assert highlight.embedding_status == Highlight.EmbeddingStatus.DONE
        old_theme = highlight.theme_embedding
        assert old_theme is not None

        _import(alice, EXTENDED)

        highlight.refresh_from_db()
        assert highlight.text == EXTENDED.text
        assert highlight.embedding_status == Highlight.EmbeddingStatus.PENDING
        assert highlight.embedding is None
        assert highlight.english_embedding is None
        # Candidates are sought by the theme vector too: one of the old words must not stay.
        assert highlight.theme_embedding is None

        highlights_embed(ids=[highlight.pk])

        highlight.refresh_from_db()
        assert highlight.embedding_status == Highlight.EmbeddingStatus.DONE
        assert highlight.embedding is not None
        assert highlight.theme_embedding is not None
        assert not np.allclose(highlight.theme_embedding, old_theme)
