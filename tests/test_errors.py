"""Errors under /api/ are JSON with their status; the pages keep Django's pages."""

from typing import Any

import pytest
from django.test import Client

from accounts.models import User
from api.services import api_token_create


@pytest.fixture
def failing_urls(settings: Any) -> None:
    settings.ROOT_URLCONF = "tests.error_urls"


@pytest.fixture
def api(alice: User) -> Client:
    token = api_token_create(reader=alice, name="scripts")[1]
    # As a server answers: the exception is logged and answered, not raised in the test.
    return Client(raise_request_exception=False, headers={"Authorization": f"Bearer {token}"})


@pytest.mark.django_db
@pytest.mark.usefixtures("failing_urls")
class ApiErrorTests:
    def test_a_server_error_is_json_with_status_500(self, api: Client) -> None:
        response = api.get("/api/test/raises/")
        assert response.status_code == 500
        assert response["Content-Type"] == "application/json"
        body = response.json()
        assert body["status"] == 500
        assert "did not expect" in body["error"]
        assert "a bug inside" not in body["error"]  # the exception stays in the log

    def test_a_database_that_does_not_answer_is_json_with_503_and_retry_after(
        self, api: Client
    ) -> None:
        response = api.get("/api/test/database-down/")
        assert response.status_code == 503
        assert response["Content-Type"] == "application/json"
        assert response["Retry-After"] == "30"
        assert "database does not answer" in response.json()["error"]

    def test_an_unknown_api_address_is_json_with_404(self, api: Client) -> None:
        response = api.get("/api/no-such-thing/")
        assert response.status_code == 404
        assert response["Content-Type"] == "application/json"
        assert "/api/schema/" in response.json()["error"]

    def test_a_request_it_cannot_read_is_json_with_400(self, api: Client) -> None:
        response = api.get("/api/test/suspicious/")
        assert response.status_code == 400
        assert response["Content-Type"] == "application/json"
        assert response.json() == {"error": "Exogram could not read this request.", "status": 400}

    def test_a_refusal_is_json_with_403(self, api: Client) -> None:
        response = api.get("/api/test/denied/")
        assert response.status_code == 403
        assert response["Content-Type"] == "application/json"
        assert response.json()["status"] == 403

    @pytest.mark.parametrize("address", ["/api/search/?q=x", "/api/schema/"])
    def test_a_method_other_than_get_is_json_with_405(self, api: Client, address: str) -> None:
        for method in (api.post, api.put, api.delete):
            response = method(address)
            assert response.status_code == 405
            assert response["Content-Type"] == "application/json"
            assert response["Allow"] == "GET, HEAD"
            assert "only reads" in response.json()["error"]
        assert api.head(address).status_code == 200

    @pytest.mark.parametrize("address", ["/api/search/?q=a%00b", "/api/highlights/%00/"])
    def test_a_nul_in_the_address_is_json_with_400(self, api: Client, address: str) -> None:
        # Found by a hostile walk: refused before any view, as text/plain.
        response = api.get(address)
        assert response.status_code == 400
        assert response["Content-Type"] == "application/json"
        assert "NUL character" in response.json()["error"]

    def test_a_body_past_the_upload_limit_is_json_with_413(self, api: Client) -> None:
        response = api.generic("GET", "/api/search/?q=x", CONTENT_LENGTH=str(10**12))
        assert response.status_code == 413
        assert response["Content-Type"] == "application/json"
        assert response.json()["status"] == 413

    def test_a_pages_nul_is_still_plain_text(self, alice_client: Client) -> None:
        response = alice_client.get("/library/?q=a%00b")
        assert response.status_code == 400
        assert response["Content-Type"].startswith("text/plain")

    def test_a_pages_server_error_is_still_the_html_page(self, alice: User) -> None:
        client = Client(raise_request_exception=False)
        response = client.get("/test/raises/")
        assert response.status_code == 500
        assert response["Content-Type"].startswith("text/html")
        assert "Something went wrong" in response.content.decode()
        # With the site's icon, as every page: no /favicon.ico asked for beside it.
        assert '<link rel="icon" href="/static/favicon.svg"' in response.content.decode()

    def test_a_pages_404_is_still_the_html_page(self, client: Client) -> None:
        response = client.get("/no-such-page/")
        assert response.status_code == 404
        assert response["Content-Type"].startswith("text/html")
