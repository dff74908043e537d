"""Every link in every e-mail points at the configured address (exogram.links)."""

import re
from collections.abc import Iterator
from datetime import date
from io import StringIO
from typing import Any

import pytest
from django.core import mail
from django.core.management import call_command
from django.test import Client, RequestFactory
from django.urls import clear_script_prefix, reverse, set_script_prefix

from accounts.models import User
from exogram.links import site_link, site_link_to
from review.models import ReviewSettings
from review.services import review_emails_send
from tests.books.library import library_of
from tests.conftest import PASSWORD

# Served under a path, as behind a proxy that hands Exogram /exogram/: the path must
# survive in every link.
BASE = "https://books.example.org/exogram"
THROUGH_THE_PROXY: dict[str, Any] = {"SCRIPT_NAME": "/exogram", "HTTP_HOST": "localhost"}
LINK = re.compile(r"https?://[^\s\"'<>]+")


def _assert_all_configured(text: object, *, at_least: int) -> list[str]:
    links: list[str] = LINK.findall(str(text))
    assert len(links) >= at_least, text
    assert [link for link in links if not link.startswith(BASE + "/")] == []
    assert not any("//" in link.removeprefix("https://") for link in links)
    assert not any(link.startswith(f"{BASE}/exogram/") for link in links)
    return links


@pytest.fixture
def configured(settings: Any) -> None:
    settings.EXOGRAM_BASE_URL = BASE + "/"
    settings.EXOGRAM_BASE_URL_SET = True


@pytest.fixture
def served_under_a_path() -> Iterator[None]:
    # What a request through such a proxy does: reverse() puts the path in front.
    set_script_prefix("/exogram/")
    try:
        yield
    finally:
        clear_script_prefix()


class SiteLinkTests:
    @pytest.mark.usefixtures("configured")
    def test_it_joins_the_configured_address_and_the_path(self) -> None:
        assert site_link("/review/") == f"{BASE}/review/"
        assert site_link_to("review") == f"{BASE}/review/"

    @pytest.mark.usefixtures("configured")
    def test_it_never_takes_the_host_from_the_request(self) -> None:
        request = RequestFactory().get("/", HTTP_HOST="attacker.example")
        assert site_link("/review/", request=request) == f"{BASE}/review/"

    @pytest.mark.usefixtures("configured")
    def test_a_path_reversed_inside_a_request_served_under_a_path_keeps_it_once(
        self, served_under_a_path: None
    ) -> None:
        assert reverse("review") == "/exogram/review/"
        assert site_link_to("review") == f"{BASE}/review/"

    def test_unset_it_takes_the_requests_checked_host_and_without_one_the_default(
        self, settings: Any
    ) -> None:
        settings.EXOGRAM_BASE_URL, settings.EXOGRAM_BASE_URL_SET = "http://localhost:8000", False
        request = RequestFactory().get("/", HTTP_HOST="127.0.0.1:8000")
        assert site_link("/review/", request=request) == "http://127.0.0.1:8000/review/"
        assert site_link("/review/") == "http://localhost:8000/review/"

    def test_it_refuses_a_path_without_its_leading_slash(self) -> None:
        with pytest.raises(ValueError, match="starts with a slash"):
            site_link("review/")


@pytest.mark.django_db
@pytest.mark.usefixtures("configured")
class EmailLinkTests:
    def test_the_review_emails_links(self, alice: User) -> None:
        alice.email = alice.verified_email = "alice@example.org"
        alice.save()
        ReviewSettings.objects.create(reader=alice, daily_email=True)
        library_of(alice, 5)
        assert review_emails_send(today=date(2026, 3, 2)) == 1
        [message] = mail.outbox
        # Each card's highlight, its book, the review, the unsubscribe link.
        _assert_all_configured(message.body, at_least=4)
        [(html, _)] = message.alternatives  # type: ignore[union-attr]
        _assert_all_configured(str(html), at_least=5)
        assert message.extra_headers["List-Unsubscribe"].startswith(f"<{BASE}/review/")

    def test_the_password_reset_emails_link(self, alice: User, client: Client) -> None:
        alice.email = alice.verified_email = "alice@example.org"
        alice.save()
        client.post("/password-reset/", {"email": alice.email}, HTTP_HOST="localhost")
        [message] = mail.outbox
        [link] = _assert_all_configured(message.body, at_least=1)
        assert link.startswith(f"{BASE}/password-reset/")
        # And it works: the path after the address is the confirm page's.
        page = client.get(link.removeprefix(BASE), follow=True)
        assert "Choose a new password" in page.content.decode()

    # The pages below are asked for through the proxy's path (SCRIPT_NAME), as a reader's
    # browser does; the mails must name that path once.
    def test_the_sign_up_emails_link(self, client: Client, served_under_a_path: None) -> None:
        client.post(
            "/signup/",
            {"username": "carol", "password1": PASSWORD, "password2": PASSWORD,
             "email": "carol@example.org"},
            **THROUGH_THE_PROXY,
        )  # fmt: skip
        [message] = mail.outbox
        [link] = _assert_all_configured(message.body, at_least=1)
        assert link.startswith(f"{BASE}/settings/email/verify/")

    def test_the_address_change_emails_link(
        self, alice: User, alice_client: Client, served_under_a_path: None
    ) -> None:
        alice_client.post(
            "/settings/email/",
            {"email": "alice@example.org", "password": PASSWORD},
            **THROUGH_THE_PROXY,
        )
        [message] = mail.outbox
        _assert_all_configured(message.body, at_least=1)

    def test_the_create_reader_commands_email(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr("sys.stdin", StringIO("a long walk home\n"))
        call_command(
            "create_reader", "clara", "--email", "clara@example.org", "--password-stdin",
            stdout=StringIO(),
        )  # fmt: skip
        [message] = mail.outbox
        _assert_all_configured(message.body, at_least=1)
