"""/favicon.ico: what a browser asks for on a page that links no icon (the admin's), or
when it is opened directly, leads to the site's icon instead of a 404."""

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from accounts.models import User

ICON_LINK = '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'


@pytest.mark.django_db
class FaviconTests:
    def test_it_sends_a_browser_to_the_sites_icon(self, client: Client) -> None:
        response = client.get("/favicon.ico")
        assert response.status_code == 302
        assert response["Location"] == "/static/favicon.svg"
        assert "max-age=86400" in response["Cache-Control"]
        # The icon it names is the one every page links.
        assert (settings.BASE_DIR / "static" / "favicon.svg").read_text().startswith("<svg")

    def test_it_answers_a_signed_in_reader_and_a_head_request_alike(
        self, alice_client: Client
    ) -> None:
        for response in (alice_client.get("/favicon.ico"), alice_client.head("/favicon.ico")):
            assert response.status_code == 302
            assert response["Location"] == "/static/favicon.svg"

    def test_it_refuses_a_post(self, client: Client) -> None:
        assert client.post("/favicon.ico").status_code == 405

    def test_the_admins_pages_link_the_sites_icon(self, client: Client) -> None:
        admin = User.objects.create_superuser("admin", password="x")
        client.force_login(admin)
        for url in (reverse("admin:index"), reverse("admin:books_highlight_changelist")):
            page = client.get(url).content.decode()
            assert ICON_LINK in page
            assert page.count('rel="icon"') == 1
        # And its sign-in page, before anyone is signed in.
        client.logout()
        assert ICON_LINK in client.get(reverse("admin:login")).content.decode()
