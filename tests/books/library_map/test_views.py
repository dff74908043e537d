"""The map page, its JSON and its points: drawn from the reader's own embedded highlights."""

import json
from typing import Any

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.embedding.pipeline import highlights_embed
from books.importing.services import clippings_import
from books.library_map import services, stop_words
from books.models import THEME_DIMENSIONS, Book, Highlight, LibraryMap
from books.tasks import embed_highlights, refresh_library_map
from tests.books.kindle import MEMORY_LIBRARY, Entry, clippings_file


def _embedded_library(reader: User) -> list[Highlight]:
    clippings_import(reader=reader, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")
    ids = list(Highlight.objects.filter(reader=reader).values_list("pk", flat=True))
    highlights_embed(ids=ids)
    return list(Highlight.objects.filter(reader=reader, embedding_status="done"))


@pytest.mark.django_db
class MapPageTests:
    def test_it_shows_an_empty_state(self, alice_client: Client) -> None:
        response = alice_client.get(reverse("map"))
        assert b"Nothing to map yet" in response.content
        assert b"map-canvas" not in response.content

    def test_it_offers_each_book_to_filter_by(self, alice: User, alice_client: Client) -> None:
        _embedded_library(alice)
        response = alice_client.get(reverse("map"))
        assert b'id="map-canvas"' in response.content
        assert b"Ficciones (3)" in response.content
        assert b"All your 5 highlights are on the map." in response.content

    def test_it_says_how_many_highlights_wait_to_be_placed(
        self, alice: User, alice_client: Client
    ) -> None:
        _embedded_library(alice)
        extra = Entry(
            "Ficciones (Borges, Jorge Luis)", "The garden of forking paths.", location="9"
        )
        clippings_import(reader=alice, data=clippings_file(extra), file_name="more.txt")
        response = alice_client.get(reverse("map"))
        assert b"1 highlight is still being embedded" in response.content
        assert b"laid out again when they are done" in response.content

    def test_it_counts_the_words_kept_off_it_as_the_words_page_lists_them(
        self, alice: User, alice_client: Client
    ) -> None:
        _embedded_library(alice)
        book = "Ficciones (Borges, Jorge Luis)"
        extra = [
            Entry(book, "labyrinth", location="700"),  # a looked-up word
            Entry(book, "Read again.", kind="Note", location="900"),  # a short note, no word
        ]
        clippings_import(reader=alice, data=clippings_file(*extra), file_name="more.txt")
        highlights_embed(
            ids=list(Highlight.objects.filter(reader=alice).values_list("pk", flat=True))
        )
        words = alice_client.get(reverse("words")).context["page"].paginator.count
        response = alice_client.get(reverse("map"))
        assert words == 1
        assert b"1 word is kept off the map" in response.content

    def test_its_counts_add_up_to_the_libraries(self, alice: User, alice_client: Client) -> None:
        """The home page counts every highlight; the map says how many of those it shows
        and why each of the others is not on it."""
        _embedded_library(alice)
        book = "Ficciones (Borges, Jorge Luis)"
        extra = [
            Entry(book, "labyrinth", location="700"),
            Entry(book, "Read again.", kind="Note", location="900"),
        ]
        clippings_import(reader=alice, data=clippings_file(*extra), file_name="more.txt")
        highlights_embed(
            ids=list(Highlight.objects.filter(reader=alice).values_list("pk", flat=True))
        )
        home = alice_client.get(reverse("home")).context["counts"]
        content = alice_client.get(reverse("map")).content.decode()
        assert home.highlights == 7
        assert "5 of your 7 highlights are on the map." in content
        assert "1 word is kept off the map" in content
        assert "1 note of a few words is kept off the map, as words are." in content

    def test_it_sends_anonymous_readers_to_log_in(self, client: Client) -> None:
        for name, args in (("map", []), ("map_data", []), ("map_point", [0])):
            response = client.get(reverse(name, args=args))
            assert response.status_code == 302
            assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
class MapDataTests:
    def test_it_places_every_embedded_highlight(self, alice: User, alice_client: Client) -> None:
        embedded = _embedded_library(alice)
        data = alice_client.get(reverse("map_data")).json()
        assert data["status"] == "ready"
        assert data["stale"] is False
        points = data["points"]
        assert len(points["x"]) == len(points["y"]) == len(points["book"]) == len(embedded)
        assert all(0 <= v <= data["scale"] for v in points["x"] + points["y"])
        assert sum(book["count"] for book in data["books"]) == len(embedded)
        # Codes stay on the server: a point is read through map_point, by its index.
        assert "code" not in points

    def test_it_draws_a_new_map_when_the_library_changed(
        self, alice: User, alice_client: Client
    ) -> None:
        embedded = _embedded_library(alice)
        alice_client.get(reverse("map_data"))
        first = LibraryMap.objects.get(reader=alice)
        embedded[0].deleted_at = embedded[0].updated
        embedded[0].save(update_fields=["deleted_at", "updated"])
        # Eager tasks in tests: the refresh queued by this request has run when it returns.
        alice_client.get(reverse("map_data"))
        data = alice_client.get(reverse("map_data")).json()
        assert len(data["points"]["x"]) == len(embedded) - 1
        assert LibraryMap.objects.get(reader=alice).signature != first.signature

    def test_it_says_empty_when_nothing_is_embedded(
        self, alice: User, alice_client: Client
    ) -> None:
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")
        data = alice_client.get(reverse("map_data")).json()
        assert (data["status"], data["stale"]) == ("empty", False)
        assert "5 highlights are still being embedded" in data["summary"]

    def test_it_never_shows_another_readers_points(
        self, alice: User, bob: User, bob_client: Client
    ) -> None:
        _embedded_library(alice)
        response = bob_client.get(reverse("map_data"))
        assert response.json()["status"] == "empty"
        assert b"Ficciones" not in response.content


@pytest.mark.django_db
class MapPointTests:
    def test_it_reads_a_point(self, alice: User, alice_client: Client) -> None:
        _embedded_library(alice)
        alice_client.get(reverse("map_data"))
        the_map = LibraryMap.objects.get(reader=alice)
        for index, code in enumerate(the_map.points["code"]):
            highlight = Highlight.objects.get(code=code)
            point = alice_client.get(reverse("map_point", args=[index])).json()
            assert point["text"] == highlight.text
            assert point["title"] == highlight.book.title
            assert point["url"] == highlight.get_absolute_url()

    def test_it_reads_a_point_of_the_layout_the_page_drew(
        self, alice: User, alice_client: Client
    ) -> None:
        embedded = _embedded_library(alice)
        drawn = alice_client.get(reverse("map_data")).json()["version"]
        url = reverse("map_point", args=[0])

        assert alice_client.get(url, {"map": drawn}).status_code == 200
        # A layout drawn since (a highlight deleted) holds other highlights at the indexes.
        embedded[0].deleted_at = embedded[0].updated
        embedded[0].save(update_fields=["deleted_at", "updated"])
        newer = alice_client.get(reverse("map_data")).json()["version"]
        response = alice_client.get(url, {"map": drawn})

        assert newer != drawn
        assert response.status_code == 409
        assert "drawn again" in response.json()["error"]
        assert alice_client.get(url, {"map": newer}).status_code == 200

    def test_it_is_not_found_past_the_last_point(self, alice: User, alice_client: Client) -> None:
        _embedded_library(alice)
        alice_client.get(reverse("map_data"))
        assert alice_client.get(reverse("map_point", args=[99])).status_code == 404

    def test_it_is_not_found_for_a_deleted_highlight(
        self, alice: User, alice_client: Client
    ) -> None:
        _embedded_library(alice)
        alice_client.get(reverse("map_data"))
        code = LibraryMap.objects.get(reader=alice).points["code"][0]
        Highlight.objects.filter(code=code).update(
            deleted_at=Highlight.objects.get(code=code).updated
        )
        assert alice_client.get(reverse("map_point", args=[0])).status_code == 404

    def test_it_never_reads_another_readers_point(
        self, alice: User, bob: User, bob_client: Client
    ) -> None:
        _embedded_library(alice)
        _embedded_library(bob)
        self_map = json.dumps(
            LibraryMap.objects.filter(reader=alice).values_list("points", flat=True).first()
        )
        assert self_map == "null"  # alice never opened her map
        bob_client.get(reverse("map_data"))
        for index in range(5):
            point = bob_client.get(reverse("map_point", args=[index])).json()
            assert Highlight.objects.get(text=point["text"], reader=bob)
        # Alice has no map: her index is nobody's to read.
        assert Client().get(reverse("map_point", args=[0])).status_code == 302


@pytest.mark.django_db
class BackgroundLayoutTests:
    """Larger libraries are laid out by the Celery task, queued once per change."""

    def test_it_draws_in_the_background_and_queues_one_layout(
        self,
        alice: User,
        alice_client: Client,
        monkeypatch: pytest.MonkeyPatch,
        django_capture_on_commit_callbacks: Any,
    ) -> None:
        monkeypatch.setattr(services, "SYNC_MAX_POINTS", 0)
        embedded = _embedded_library(alice)
        with django_capture_on_commit_callbacks(execute=False) as queued:
            first = alice_client.get(reverse("map_data")).json()
            alice_client.get(reverse("map"))  # a second visit while it is being drawn
        assert (first["status"], first["stale"]) == ("drawing", True)
        page = alice_client.get(reverse("map")).content
        assert b"Laying out your map" in page
        # Everything is embedded: the page says what is happening, not that it waits.
        assert f"{len(embedded)} embedded highlights are being laid out".encode() in page
        assert b"still being embedded" not in page
        assert b"0 highlights" not in page
        assert len(queued) == 1
        queued[0]()  # the task, run eagerly as the worker would
        data = alice_client.get(reverse("map_data")).json()
        assert (data["status"], data["stale"]) == ("ready", False)
        assert len(data["points"]["x"]) == len(embedded)
        assert LibraryMap.objects.get(reader=alice).refreshing_since is None


@pytest.mark.django_db
class LayoutWhenEmbeddedTests:
    """The map is laid out when a reader's embedding finishes, before anyone asks for it."""

    def test_it_lays_out_the_map_when_the_last_batch_lands(
        self, alice: User, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
    ) -> None:
        monkeypatch.setattr(services, "SYNC_MAX_POINTS", 0)
        clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")
        ids = sorted(Highlight.objects.filter(reader=alice).values_list("pk", flat=True))
        with django_capture_on_commit_callbacks(execute=True):
            # A first batch (a task is a turn that would take all five: its work by hand).
            highlights_embed(ids=ids[:2])
            services.library_maps_refresh_when_embedded(reader_ids={alice.pk})
        # Still embedding: no layout yet, it would take the embedding's CPU.
        assert not LibraryMap.objects.filter(reader=alice).exists()
        with django_capture_on_commit_callbacks(execute=True):
            embed_highlights(ids[2:])
        the_map = LibraryMap.objects.get(reader=alice)
        placed = Highlight.objects.filter(reader=alice, is_word=False, embedding_status="done")
        assert sorted(the_map.points["code"]) == sorted(str(h.code) for h in placed)
        assert the_map.refreshing_since is None
        assert not services.library_map_state(alice, refresh=False).stale

    def test_it_lays_out_again_for_vectors_that_landed_during_a_layout(
        self, alice: User, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
    ) -> None:
        monkeypatch.setattr(services, "SYNC_MAX_POINTS", 0)
        _embedded_library(alice)
        real_refresh = services.library_map_refresh

        def refresh_then_a_batch_lands(*, reader: User) -> LibraryMap:
            the_map = real_refresh(reader=reader)
            extra = Entry("Ficciones (Borges)", "The garden of forking paths.", location="9")
            clippings_import(reader=alice, data=clippings_file(extra), file_name="more.txt")
            highlights_embed(ids=[Highlight.objects.get(text__startswith="The garden").pk])
            return the_map

        monkeypatch.setattr(services, "library_map_refresh", refresh_then_a_batch_lands)
        with django_capture_on_commit_callbacks(execute=False) as queued:
            refresh_library_map(alice.pk)
        # The layout that catches up is claimed and queued.
        assert LibraryMap.objects.get(reader=alice).refreshing_since is not None
        monkeypatch.setattr(services, "library_map_refresh", real_refresh)
        with django_capture_on_commit_callbacks(execute=True):
            for callback in queued:
                callback()
        assert not services.library_map_state(alice, refresh=False).stale
        assert len(LibraryMap.objects.get(reader=alice).points["code"]) == 6

    def test_it_changes_nothing_when_run_twice(self, alice: User) -> None:
        _embedded_library(alice)
        refresh_library_map(alice.pk)
        first = LibraryMap.objects.get(reader=alice)
        refresh_library_map(alice.pk)
        second = LibraryMap.objects.get(reader=alice)
        assert (first.signature, first.points, first.regions) == (
            second.signature,
            second.points,
            second.regions,
        )


def _clustered(reader: User, *, theme_vectors: bool = True) -> dict[str, list[str]]:
    """Two ideas in two languages: e5 puts the languages apart, the theme model the ideas.
    Returns the codes of each idea and each language."""
    rng = np.random.default_rng(7)
    book = Book.objects.create(reader=reader, title="Mixed", key="mixed")
    e5_centres = {lang: rng.normal(size=384) for lang in ("en", "es")}
    theme_centres = {idea: rng.normal(size=THEME_DIMENSIONS) for idea in ("sea", "time")}
    groups: dict[str, list[str]] = {"sea": [], "time": [], "en": [], "es": []}
    for idea in ("sea", "time"):
        for lang in ("en", "es"):
            for n in range(10):
                e5 = e5_centres[lang] + rng.normal(scale=0.3, size=384)
                theme = theme_centres[idea] + rng.normal(scale=0.3, size=THEME_DIMENSIONS)
                highlight = Highlight.objects.create(
                    reader=reader, book=book, text=f"{idea} {lang} {n}", language=lang,
                    dedupe_key=f"{idea}{lang}{n}", embedding=(e5 / np.linalg.norm(e5)).tolist(),
                    theme_embedding=(theme / np.linalg.norm(theme)).tolist()
                    if theme_vectors else None,
                    embedding_model="m", embedding_status=Highlight.EmbeddingStatus.DONE,
                )  # fmt: skip
                groups[idea].append(str(highlight.code))
                groups[lang].append(str(highlight.code))
    return groups


def _spread(the_map: LibraryMap, codes: list[str]) -> float:
    """The mean distance between the map points of `codes`."""
    index = {code: i for i, code in enumerate(the_map.points["code"])}
    points = np.array(
        [(the_map.points["x"][index[c]], the_map.points["y"][index[c]]) for c in codes], float
    )
    return float(np.linalg.norm(points[:, None] - points[None, :], axis=-1).mean())


@pytest.mark.django_db
class LayoutTests:
    def test_it_places_one_idea_together_across_languages(self, alice: User) -> None:
        groups = _clustered(alice)
        the_map = services.library_map_refresh(reader=alice)
        by_idea = _spread(the_map, groups["sea"]) + _spread(the_map, groups["time"])
        by_language = _spread(the_map, groups["en"]) + _spread(the_map, groups["es"])
        assert by_idea < by_language / 2

    def test_without_every_theme_vector_it_places_by_the_main_model(self, alice: User) -> None:
        groups = _clustered(alice, theme_vectors=False)
        the_map = services.library_map_refresh(reader=alice)
        by_idea = _spread(the_map, groups["sea"]) + _spread(the_map, groups["time"])
        by_language = _spread(the_map, groups["en"]) + _spread(the_map, groups["es"])
        assert by_language < by_idea / 2

    def test_a_map_of_an_older_layout_is_laid_out_again(self, alice: User) -> None:
        _clustered(alice)
        services.library_map_refresh(reader=alice)
        assert not services.library_map_state(alice, refresh=False).stale
        the_map = LibraryMap.objects.get(reader=alice)
        older = the_map.signature.replace(f"{services.LAYOUT_VERSION}|", "1|", 1)
        LibraryMap.objects.filter(pk=the_map.pk).update(signature=older)
        assert services.library_map_state(alice, refresh=False).stale

    def test_a_map_named_by_other_stop_words_is_drawn_again(
        self, alice: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # A map drawn before Russian filler was listed kept "ero" as a region's name until
        # the library changed.
        _clustered(alice)
        services.library_map_refresh(reader=alice)
        assert not services.library_map_state(alice, refresh=False).stale
        monkeypatch.setattr(stop_words, "FINGERPRINT", "0" * 8)
        assert services.library_map_state(alice, refresh=False).stale
        services.library_map_refresh(reader=alice)
        assert not services.library_map_state(alice, refresh=False).stale
