"""The redraw_map command: the map laid out again for an operator."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import User
from books.embedding.pipeline import highlights_embed
from books.importing.services import clippings_import
from books.models import Highlight, LibraryMap
from tests.books.kindle import MEMORY_LIBRARY, clippings_file


def _embedded_library(reader: User) -> list[Highlight]:
    clippings_import(reader=reader, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")
    highlights_embed(ids=list(Highlight.objects.filter(reader=reader).values_list("pk", flat=True)))
    return list(Highlight.objects.filter(reader=reader, embedding_status="done"))


def _run(*args: str) -> str:
    out = StringIO()
    call_command("redraw_map", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
class RedrawMapCommandTests:
    def test_it_lays_out_the_readers_map_even_when_it_looks_current(
        self, alice: User, bob: User
    ) -> None:
        placed = _embedded_library(alice)
        out = _run("--user", "alice")
        assert f"Drew alice's map: {len(placed)} passages of " in out
        the_map = LibraryMap.objects.get(reader=alice)
        assert sorted(the_map.points["code"]) == sorted(str(h.code) for h in placed)
        # A map broken in place (its signature still current) is laid out again.
        LibraryMap.objects.filter(pk=the_map.pk).update(points={}, regions=[])
        _run("--user", "alice")
        assert len(LibraryMap.objects.get(reader=alice).points["code"]) == len(placed)
        assert not LibraryMap.objects.filter(reader=bob).exists()

    def test_it_names_a_reader_who_is_not_there(self, db: None) -> None:
        with pytest.raises(CommandError, match="No reader named"):
            _run("--user", "nobody")
