"""/api/: the five reads with a token; never with a session, a revoked or another's token."""

import hashlib

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from api.models import ApiToken
from api.services import api_token_create, api_token_revoke
from books.importing.services import clippings_import
from books.models import Book, Highlight
from exogram.reader_slots import reader_slot_release, reader_slot_take, searches_at_once
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

    def test_it_refuses_writes(self, client: Client, alice_token: str) -> None:
        response = client.post(
            reverse("api_books"), headers={"Authorization": f"Bearer {alice_token}"}
        )
        assert response.status_code == 405
        assert not Book.objects.exists()
