"""/api/: the five reads with a token; never with a session, a revoked or another's token."""

import hashlib

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from api.models import ApiToken
from api.services import api_token_create, api_token_revoke
from books.connections.judge import judge_version
from books.connections.selectors import connections_for
from books.importing.services import clippings_import
from books.models import Book, Connection, Highlight
from books.search.keyword import KEYWORD_CANDIDATES
from exogram.reader_slots import reader_slot_release, reader_slot_take, searches_at_once
from tests.books.embedded import embedded_library
from tests.books.kindle import MEMORY_LIBRARY, Entry, clippings_file


@pytest.fixture
def library(alice: User) -> dict[str, Highlight]:
    clippings_import(reader=alice, data=clippings_file(*MEMORY_LIBRARY), file_name="c.txt")
    return {h.text.split()[0]: h for h in Highlight.objects.filter(reader=alice)}


@pytest.fixture
def alice_token(alice: User) -> str:
    return api_token_create(reader=alice, name="scripts")[1]


def _get(client: Client, url: str, token: str | None, **params: object) -> tuple[int, dict]:  # type: ignore[type-arg]
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = client.get(url, params, headers=headers)
    assert response["Content-Type"] == "application/json"
    return response.status_code, response.json()


@pytest.mark.django_db
class ApiReadsTests:
    def test_it_searches_with_a_citation_on_every_result(
        self, client: Client, alice_token: str, library: dict[str, Highlight]
    ) -> None:
        status, answer = _get(client, reverse("api_search"), alice_token, q="remembered leaf")
        assert status == 200
        assert answer["results"][0]["code"] == str(library["He"].code)
        for row in answer["results"]:
            assert row["book"]
            assert row["author"]
            assert row["location"]

    def test_it_reads_a_highlight_its_connections_books_and_a_books_highlights(
        self, client: Client, alice_token: str, library: dict[str, Highlight]
    ) -> None:
        funes = library["To"]
        status, answer = _get(client, reverse("api_highlight", args=[funes.code]), alice_token)
        assert (status, answer["text"], answer["note"]) == (
            200, funes.text, "Read this twice.",
        )  # fmt: skip
        status, answer = _get(client, reverse("api_connections", args=[funes.code]), alice_token)
        assert status == 200
        assert answer["highlight"]["code"] == str(funes.code)
        assert isinstance(answer["connections"], list)
        status, answer = _get(client, reverse("api_books"), alice_token)
        assert [b["title"] for b in answer["books"]] == [
            "Ficciones", "The Man Who Mistook His Wife for a Hat",
        ]  # fmt: skip
        url = reverse("api_book_highlights", args=[funes.book.code])
        status, answer = _get(client, url, alice_token, limit=2)
        assert answer["total"] == 3
        assert [h["location"] for h in answer["highlights"]] == [
            "Location 100-102", "Location 380-381",
        ]  # fmt: skip
        assert answer["next_offset"] == 2

    def test_it_finds_a_name_written_with_symbols_as_written(
        self, alice: User, client: Client, alice_token: str
    ) -> None:
        clippings_import(
            reader=alice,
            data=clippings_file(
                Entry("C++ Primer (Lippman, Stanley)", "Prefer C++ references to pointers."),
                Entry("Cosmos (Sagan, Carl)", "Vitamin C and the cosmic calendar."),
            ),
            file_name="c.txt",
        )
        _, answer = _get(client, reverse("api_search"), alice_token, q="c++", mode="keyword")
        assert [row["text"] for row in answer["results"]] == ["Prefer C++ references to pointers."]
        _, answer = _get(client, reverse("api_books"), alice_token, q="c++")
        assert [book["title"] for book in answer["books"]] == ["C++ Primer"]

    def test_it_answers_bad_arguments_with_400(
        self, client: Client, alice_token: str, library: dict[str, Highlight]
    ) -> None:
        status, answer = _get(client, reverse("api_search"), alice_token, q="x", limit="ten")
        assert status == 400
        assert "limit must be a whole number" in answer["error"]
        status, answer = _get(client, reverse("api_search"), alice_token, q="x", limit=1000)
        assert status == 400
        status, answer = _get(client, reverse("api_search"), alice_token, q="x", mode="psychic")
        assert status == 400

    def test_it_says_the_range_each_number_takes_and_the_parameter_the_client_sent(
        self, client: Client, alice_token: str, library: dict[str, Highlight]
    ) -> None:
        book = reverse("api_book_highlights", args=[library["To"].book.code])
        for url, params, expected in [
            (book, {"limit": "abc"}, "limit must be a whole number from 1 to 200, not 'abc'."),
            (book, {"offset": "x"}, "offset must be a whole number from 0 to 1,000,000,000"),
            (reverse("api_search"), {"q": "x", "limit": "abc"}, "from 1 to 50, not 'abc'."),
            (reverse("api_search"), {"q": ""}, "q must be some words to search for."),
            (reverse("api_search"), {"q": "x" * 1000}, "q must be at most"),
        ]:
            status, answer = _get(client, url, alice_token, **params)
            assert (status, expected in answer["error"]) == (400, True), answer

    def test_it_pages_through_search_results(
        self, client: Client, alice_token: str, library: dict[str, Highlight]
    ) -> None:
        url = reverse("api_search")
        params = {"q": "every or narrative or sleep", "mode": "keyword"}
        status, every = _get(client, url, alice_token, **params)
        assert status == 200
        codes = [row["code"] for row in every["results"]]
        assert len(codes) == every["total"] == 4
        assert (every["offset"], every["next_offset"], every["total_capped"]) == (0, None, False)
        _, first = _get(client, url, alice_token, **params, limit=3)
        assert [row["code"] for row in first["results"]] == codes[:3]
        assert (first["limit"], first["next_offset"]) == (3, 3)
        _, second = _get(client, url, alice_token, **params, limit=3, offset=3)
        assert [row["code"] for row in second["results"]] == codes[3:]
        assert (second["offset"], second["next_offset"], second["total"]) == (3, None, 4)
        _, past = _get(client, url, alice_token, **params, offset=10)
        assert (past["results"], past["total"], past["next_offset"]) == ([], 4, None)
        status, answer = _get(client, url, alice_token, **params, offset="-1")
        assert status == 400
        assert "offset must be a whole number from 0 to 1,000,000,000" in answer["error"]

    def test_it_says_when_more_highlights_match_than_a_search_ranks(
        self, client: Client, alice: User, alice_token: str
    ) -> None:
        entries = [
            Entry(f"Lanterns {i // 50} (Keeper, A.)", f"A lantern, number {i}.", location=str(i))
            for i in range(KEYWORD_CANDIDATES + 20)
        ]
        clippings_import(reader=alice, data=clippings_file(*entries), file_name="many.txt")
        url = reverse("api_search")
        _, answer = _get(client, url, alice_token, q="lantern", mode="keyword", limit=50)
        assert (answer["total"], answer["total_capped"]) == (KEYWORD_CANDIDATES, True)
        _, last = _get(client, url, alice_token, q="lantern", mode="keyword", offset=290)
        assert len(last["results"]) == 10
        assert last["next_offset"] is None

    def test_it_gives_each_connection_the_judges_percentage(
        self, client: Client, alice: User, alice_token: str
    ) -> None:
        yates = embedded_library(
            alice,
            Entry("Commonplace (Yates, Frances)", "Memory is the diary that we all carry."),
            Entry("Diaries (Wilde, Oscar)", "Memory is the diary we all carry about with us."),
        )["Memory is the diary that we all carry."]
        judged = connections_for(yates, limit=10)
        assert judged
        assert judged[0].percent is not None
        status, answer = _get(client, reverse("api_connections", args=[yates.code]), alice_token)
        assert status == 200
        assert [c["likely_related_percent"] for c in answer["connections"]] == [
            c.percent for c in judged
        ]
        _, full = _get(client, reverse("api_highlight", args=[yates.code]), alice_token)
        assert full["connections"][0]["likely_related_percent"] == judged[0].percent

    @pytest.mark.parametrize(
        "offset", ["99999999999999999999", "1" + "0" * 5000, "-1", "١٢", " 12", "1e3"]
    )
    def test_it_answers_an_offset_out_of_range_with_400(
        self, client: Client, alice_token: str, library: dict[str, Highlight], offset: str
    ) -> None:
        url = reverse("api_book_highlights", args=[library["To"].book.code])
        status, answer = _get(client, url, alice_token, offset=offset)
        assert status == 400
        assert "offset must be a whole number from 0 to 1,000,000,000" in answer["error"]
        assert len(answer["error"]) < 200  # never the 5,000 digits back

    def test_it_refuses_a_search_past_the_readers_searches_at_once(
        self, client: Client, alice: User, alice_token: str, library: dict[str, Highlight]
    ) -> None:
        for _ in range(searches_at_once()):  # as many searches of alice's still running
            reader_slot_take(kind="search", reader_id=alice.pk, limit=searches_at_once())
        status, answer = _get(client, reverse("api_search"), alice_token, q="remembered")
        assert status == 429
        assert "other searches are still running" in answer["error"]
        reader_slot_release(kind="search", reader_id=alice.pk)
        status, _ = _get(client, reverse("api_search"), alice_token, q="remembered")
        assert status == 200


def _passage(reader: User, title: str, authors: str, text: str, seed: int) -> Highlight:
    """A read passage with a vector of its own (the model is not asked)."""
    book, _ = Book.objects.get_or_create(
        reader=reader, key=f"{title}|{authors}".casefold(),
        defaults={"title": title, "authors": authors, "authors_normalized": authors.casefold()},
    )  # fmt: skip
    vector = np.random.default_rng(seed).normal(size=384)
    return Highlight.objects.create(
        reader=reader, book=book, text=text, dedupe_key=f"{book.pk}:{text}"[:64],
        embedding=(vector / np.linalg.norm(vector)).tolist(), embedding_model="test-model@0",
        embedding_status=Highlight.EmbeddingStatus.DONE,
    )  # fmt: skip


def _candidate(a: Highlight, b: Highlight, probability: float) -> None:
    """A pair the judge weighed and left below a connection (nearby)."""
    low, high = sorted((a, b), key=lambda h: h.pk)
    Connection.objects.create(
        reader=a.reader, highlight_a=low, highlight_b=high, distance=0.3,
        probability=probability, same_probability=probability / 2,
        strength=Connection.Strength.NEARBY, judge_version=judge_version(),
        embedding_model="test-model@0",
    )  # fmt: skip


@pytest.mark.django_db
class ApiConnectionsStateTests:
    """What the highlight's page says of its connections, the API says too (#1 of the
    shelves exploration: `"connections": []` and nothing else, before and after)."""

    def test_it_says_a_highlight_not_read_yet_is_waiting(
        self,
        client: Client,
        alice_client: Client,
        alice_token: str,
        library: dict[str, Highlight],
    ) -> None:
        funes = library["To"]
        Highlight.objects.filter(pk=funes.pk).update(
            embedding_status=Highlight.EmbeddingStatus.PENDING
        )
        for url in (
            reverse("api_connections", args=[funes.code]),
            reverse("api_highlight", args=[funes.code]),
        ):
            status, answer = _get(client, url, alice_token)
            assert status == 200
            assert answer["state"] == "waiting"
            # The page's words, not "read by the model": one sentence, from one source.
            said = (
                "This highlight is not ready for connections yet; its connections appear "
                "once it is."
            )
            assert answer["state_said"] == said
            assert said in _page_text(alice_client, funes)
            assert (answer["connections"], answer["nearest"]) == ([], [])

    def test_it_gives_the_nearest_the_page_shows_never_as_connections(
        self, client: Client, alice: User, alice_client: Client, alice_token: str
    ) -> None:
        anger = _passage(alice, "Calm", "Hanh", "Let anger pass like weather.", 1)
        seneca = _passage(alice, "On Anger", "Seneca", "The remedy for anger is delay.", 2)
        myth = _passage(alice, "Myths", "Lilienfeld", "Catharsis is a myth.", 3)
        _candidate(anger, seneca, 0.41)
        _candidate(anger, myth, 0.33)
        page = alice_client.get(anger.get_absolute_url()).context["connections"]
        status, answer = _get(client, reverse("api_connections", args=[anger.code]), alice_token)
        assert status == 200
        assert answer["connections"] == []
        assert answer["state"] == "read"
        assert [n["code"] for n in answer["nearest"]] == [
            str(c.highlight.code) for c in page.nearest
        ] == [str(seneca.code), str(myth.code)]  # fmt: skip
        assert [n["likely_related_percent"] for n in answer["nearest"]] == [41, 33]
        assert {n["connection"] for n in answer["nearest"]} == {False}
        assert answer["connection_percent"] == page.connection_percent
        assert f"takes {page.connection_percent}% or more" in answer["state_said"]
        assert "judge" not in answer["state_said"]
        assert "Read by the model" not in answer["state_said"]
        assert answer["state_said"] in _page_text(alice_client, anger)
        assert answer["nearest"][0]["book"] == "On Anger"  # a citation, as every highlight
        _, full = _get(client, reverse("api_highlight", args=[anger.code]), alice_token)
        assert full["nearest"] == answer["nearest"]

    def test_it_says_a_word_is_never_connected(
        self, client: Client, alice: User, alice_token: str
    ) -> None:
        clippings_import(
            reader=alice, data=clippings_file(Entry("Lexicon (Word, A.)", "serendipity")),
            file_name="w.txt",
        )  # fmt: skip
        word = Highlight.objects.get(reader=alice, text="serendipity")
        assert word.is_word
        _, answer = _get(client, reverse("api_connections", args=[word.code]), alice_token)
        assert (answer["state"], answer["nearest"]) == ("word", [])
        assert answer["state_said"] == (
            "This is one of your words from this book: a word or short phrase is kept and "
            "found by keyword search, but it is not connected to other passages."
        )

    def test_alone_in_the_library_a_highlight_waits_for_another_book_not_yet(
        self, client: Client, alice: User, alice_client: Client, alice_token: str
    ) -> None:
        # A library of one book: a highlight waiting there was told its connections "appear
        # once it is" ready; and a ready one, nothing "yet".
        ready = _passage(alice, "Calm", "Hanh", "Let anger pass like weather.", 1)
        waiting = _passage(alice, "Calm", "Hanh", "Breathe in, and know you breathe in.", 2)
        Highlight.objects.filter(pk=waiting.pk).update(
            embedding_status=Highlight.EmbeddingStatus.PENDING
        )
        alone = (
            "A connection joins passages from two different books, and your library has no "
            "other book with passages to compare it with."
        )
        _, answer = _get(client, reverse("api_connections", args=[waiting.code]), alice_token)
        assert answer["state_said"] == f"This highlight is not ready for connections yet. {alone}"
        assert answer["state_said"] in _page_text(alice_client, waiting)
        spanish = alice_client.get(waiting.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="es-ES")
        assert (
            "Este subrayado aún no está listo para las conexiones. Una conexión une pasajes de "
            "dos libros distintos, y tu biblioteca no tiene ningún otro libro con pasajes con "
            "los que compararlo." in " ".join(spanish.content.decode().split())
        )
        _, answer = _get(client, reverse("api_connections", args=[ready.code]), alice_token)
        assert answer["state"] == "read"
        assert answer["state_said"] == alone
        assert answer["state_said"] in _page_text(alice_client, ready)


def _page_text(client: Client, highlight: Highlight) -> str:
    """The highlight page's words, its spacing made one."""
    return " ".join(client.get(highlight.get_absolute_url()).content.decode().split())


@pytest.mark.django_db
class ApiAuthenticationTests:
    def test_it_refuses_no_token(self, client: Client, library: dict[str, Highlight]) -> None:
        status, answer = _get(client, reverse("api_books"), None)
        assert status == 401
        assert "Authorization: Bearer" in answer["error"]

    def test_it_never_takes_the_session_cookie(
        self, alice_client: Client, library: dict[str, Highlight]
    ) -> None:
        status, _ = _get(alice_client, reverse("api_books"), None)
        assert status == 401

    def test_it_refuses_a_revoked_token(
        self, client: Client, alice: User, library: dict[str, Highlight]
    ) -> None:
        token, raw = api_token_create(reader=alice, name="old laptop")
        assert _get(client, reverse("api_books"), raw)[0] == 200
        api_token_revoke(token=token)
        status, answer = _get(client, reverse("api_books"), raw)
        assert status == 401
        assert answer["error"] == "This token is unknown or has been revoked."

    def test_it_refuses_a_made_up_token(self, client: Client, alice_token: str) -> None:
        assert _get(client, reverse("api_books"), alice_token + "x")[0] == 401
        assert _get(client, reverse("api_books"), "not-even-a-token")[0] == 401

    def test_it_stores_only_the_tokens_hash(self, alice: User, alice_token: str) -> None:
        token = ApiToken.objects.get(reader=alice)
        assert token.token_hash == hashlib.sha256(alice_token.encode()).hexdigest()
        assert alice_token not in {token.name, token.prefix, token.token_hash}
        assert token.prefix == alice_token[:10]

    def test_it_notes_when_a_token_was_last_used(
        self, client: Client, alice: User, alice_token: str
    ) -> None:
        _get(client, reverse("api_books"), alice_token)
        assert ApiToken.objects.get(reader=alice).last_used_at is not None


@pytest.mark.django_db
class ApiOwnershipTests:
    def test_another_readers_token_sees_only_their_own_library(
        self, client: Client, bob: User, library: dict[str, Highlight]
    ) -> None:
        clippings_import(
            reader=bob, data=clippings_file(Entry("Bob's Book (Bob)", "Bob's words.")),
            file_name="b.txt",
        )  # fmt: skip
        bob_token = api_token_create(reader=bob, name="bob")[1]
        alices = library["To"]
        for url in [
            reverse("api_highlight", args=[alices.code]),
            reverse("api_connections", args=[alices.code]),
            reverse("api_book_highlights", args=[alices.book.code]),
        ]:
            status, answer = _get(client, url, bob_token)
            assert status == 404, url
            assert "in your library" in answer["error"]
            assert "forget" not in str(answer)
        status, answer = _get(client, reverse("api_search"), bob_token, q="forget")
        assert answer["results"] == []
        status, answer = _get(
            client, reverse("api_search"), bob_token, q="forget", book=str(alices.book.code)
        )
        assert status == 404
        status, answer = _get(client, reverse("api_books"), bob_token)
        assert [b["title"] for b in answer["books"]] == ["Bob's Book"]

    def test_a_malformed_code_is_not_found(self, client: Client, alice_token: str) -> None:
        status, _ = _get(client, reverse("api_highlight", args=["nope"]), alice_token)
        assert status == 404

    def test_a_deleted_highlight_is_not_found(
        self, client: Client, alice_token: str, library: dict[str, Highlight]
    ) -> None:
        from books.services import highlight_delete

        highlight_delete(highlight=library["He"])
        url = reverse("api_highlight", args=[library["He"].code])
        assert _get(client, url, alice_token)[0] == 404


@pytest.mark.django_db
class ApiSchemaTests:
    def test_it_serves_an_openapi_document_for_the_five_reads(self, client: Client) -> None:
        response = client.get(reverse("api_schema"))
        assert response.status_code == 200
        schema = response.json()
        assert schema["openapi"] == "3.1.0"
        assert set(schema["paths"]) == {
            "/search/", "/highlights/{code}/", "/highlights/{code}/connections/", "/books/",
            "/books/{code}/highlights/",
        }  # fmt: skip
        assert schema["servers"] == [{"url": "http://testserver/api"}]
        search = schema["paths"]["/search/"]["get"]
        assert [p["name"] for p in search["parameters"]] == ["q", "mode", "limit", "offset", "book"]
        answer = search["responses"]["200"]["content"]["application/json"]["schema"]
        assert {"total", "total_capped", "offset", "limit", "next_offset"} <= set(
            answer["properties"]
        )
        assert "floor" in answer["properties"]["total"]["description"]
        connected = schema["components"]["schemas"]["ConnectedHighlight"]["allOf"][1]
        assert "likely_related_percent" in connected["properties"]
        assert schema["components"]["securitySchemes"]["token"]["scheme"] == "bearer"

    def test_every_path_in_the_schema_is_served(
        self, client: Client, alice_token: str, library: dict[str, Highlight]
    ) -> None:
        schema = client.get(reverse("api_schema")).json()
        code = str(library["To"].code)
        book = str(library["To"].book.code)
        for path in schema["paths"]:
            url = "/api" + path.replace("{code}", book if path.startswith("/books/") else code)
            status, _ = _get(client, url, alice_token, q="forget")
            assert status == 200, url

    @pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
    @pytest.mark.parametrize("with_token", [True, False])
    def test_it_refuses_writes_in_json_whatever_the_csrf_check(
        self, alice_token: str, method: str, with_token: bool
    ) -> None:
        # As a tool sends them: no CSRF cookie, no session (the test client skips the check
        # unless told not to).
        client = Client(enforce_csrf_checks=True)
        headers = {"Authorization": f"Bearer {alice_token}"} if with_token else {}
        for name in ["api_books", "api_search", "api_schema"]:
            response = getattr(client, method)(reverse(name), headers=headers)
            assert response.status_code == 405, (name, response.content[:80])
            assert response["Content-Type"] == "application/json"
            assert response["Allow"] == "GET, HEAD"
            assert response.json()["error"].startswith("The API only reads: send GET")
        assert not Book.objects.exists()
