"""delete_reader and create_reader: an operator closes or opens an account the way the
reader's own pages do."""

from collections.abc import Iterator
from contextlib import contextmanager
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from accounts import services
from accounts.models import User
from books.models import Book, Highlight
from exogram.celery import app


def library_of(reader: User, highlights: int) -> None:
    book = Book.objects.create(reader=reader, title="Ficciones", key=f"ficciones-{reader.pk}")
    Highlight.objects.bulk_create(
        Highlight(reader=reader, book=book, text=f"Passage {n}", dedupe_key=f"k{n}")
        for n in range(highlights)
    )


@contextmanager
def broker_down() -> Iterator[None]:
    """No worker gets the deletion: what the request did before sending it stays visible."""
    saved = (app.conf.broker_url, app.conf.task_always_eager)
    app.conf.update(broker_url="redis://127.0.0.1:9/0", task_always_eager=False)
    app._pool = None
    app.amqp._producer_pool = None
    try:
        yield
    finally:
        app.conf.update(broker_url=saved[0], task_always_eager=saved[1])
        app._pool = None
        app.amqp._producer_pool = None


def _run(*args: str, **options: object) -> str:
    out = StringIO()
    call_command(*args, stdout=out, **options)
    return out.getvalue()


@pytest.mark.django_db
class DeleteReaderCommandTests:
    def test_it_deletes_a_small_reader_at_once(self, alice: User, bob: User) -> None:
        library_of(alice, 3)
        library_of(bob, 2)
        out = _run("delete_reader", "alice", interactive=False)
        assert out.strip() == "Deleted alice and 3 highlights in 1 book."
        assert not User.objects.filter(username="alice").exists()
        assert Highlight.objects.filter(reader=bob).count() == 2

    def test_it_closes_a_large_reader_and_leaves_the_rest_to_a_worker(
        self, alice: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(services, "DELETE_INLINE_MAX_HIGHLIGHTS", 2)
        library_of(alice, 3)
        with broker_down():
            out = _run("delete_reader", "alice", interactive=False)
        assert "Closed alice's account" in out
        assert "a worker deletes 3 highlights" in out
        alice.refresh_from_db()
        assert not alice.is_active
        assert alice.deletion_requested_at is not None

    def test_it_asks_first_and_deletes_nothing_without_a_yes(
        self, alice: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr("builtins.input", lambda prompt: "no")
        with pytest.raises(CommandError, match="Nothing deleted"):
            _run("delete_reader", "alice")
        assert User.objects.get(username="alice").is_active

    def test_it_names_a_reader_who_is_not_there(self, db: None) -> None:
        with pytest.raises(CommandError, match="No reader named 'nobody'"):
            _run("delete_reader", "nobody", interactive=False)


@pytest.mark.django_db
class ReaderAdminDeleteTests:
    """The admin's delete of a user is the reader's own batched deletion."""

    @pytest.fixture
    def admin_client(self, client: Client) -> Client:
        client.force_login(User.objects.create_superuser("admin", password="x"))
        return client

    def test_its_confirmation_sums_up_instead_of_listing_every_row(
        self, alice: User, admin_client: Client
    ) -> None:
        library_of(alice, 3)
        page = admin_client.get(reverse("admin:accounts_user_delete", args=[alice.pk]))
        assert page.status_code == 200
        text = page.content.decode()
        assert "alice: 3 highlights, 1 book" in text
        assert "Passage 0" not in text

    def test_its_delete_closes_the_account_and_sends_the_batched_deletion(
        self, alice: User, admin_client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(services, "DELETE_INLINE_MAX_HIGHLIGHTS", 2)
        library_of(alice, 3)
        with broker_down():
            response = admin_client.post(
                reverse("admin:accounts_user_delete", args=[alice.pk]), {"post": "yes"}
            )
        assert response.status_code == 302
        # Django's cascade would have removed her; the service closed her and left the
        # rows to the worker (and, with the queue down, to the sweep).
        alice.refresh_from_db()
        assert not alice.is_active
        assert alice.deletion_requested_at is not None
        assert Highlight.objects.filter(reader=alice).count() == 3

    def test_its_delete_action_deletes_the_chosen_readers_only(
        self, alice: User, bob: User, admin_client: Client, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(services, "DELETE_INLINE_MAX_HIGHLIGHTS", 2)
        library_of(alice, 3)
        library_of(bob, 1)
        with broker_down():
            response = admin_client.post(
                reverse("admin:accounts_user_changelist"),
                {
                    "action": "delete_selected",
                    "_selected_action": [alice.pk, bob.pk],
                    "post": "yes",
                },
            )
        assert response.status_code == 302
        # Bob's small library went at once; alice's large one waits for a worker, closed.
        assert not User.objects.filter(username="bob").exists()
        alice.refresh_from_db()
        assert not alice.is_active
        assert alice.deletion_requested_at is not None


@pytest.mark.django_db
class CreateReaderCommandTests:
    def _create(self, monkeypatch: pytest.MonkeyPatch, *args: str, password: str) -> str:
        monkeypatch.setattr("sys.stdin", StringIO(password + "\n"))
        return _run("create_reader", *args, "--password-stdin")

    def test_it_makes_a_reader_who_is_not_staff_and_can_log_in(
        self, db: None, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        out = self._create(
            monkeypatch, "clara", "--email", "clara@example.org", password="a long walk home"
        )
        assert "Made the reader clara." in out
        clara = User.objects.get(username="clara")
        assert not clara.is_staff
        assert not clara.is_superuser
        assert clara.is_active
        assert clara.email == "clara@example.org"
        assert Client().login(username="clara", password="a long walk home")

    def test_it_mails_a_link_to_confirm_the_address(
        self, db: None, monkeypatch: pytest.MonkeyPatch, mailoutbox: list[object]
    ) -> None:
        out = self._create(
            monkeypatch, "clara", "--email", "clara@example.org", password="a long walk home"
        )
        assert "Mailed clara@example.org a link" in out
        assert len(mailoutbox) == 1

    def test_it_refuses_what_the_sign_up_page_refuses(
        self, alice: User, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        with pytest.raises(CommandError, match="password"):
            self._create(monkeypatch, "clara", password="12345678")
        # alice with a Cyrillic first letter is drawn like alice.
        with pytest.raises(CommandError, match="username"):
            self._create(monkeypatch, "\u0430lice", password="a long walk home")
        assert not User.objects.exclude(username="alice").exists()

    def test_it_asks_twice_and_refuses_two_different_passwords(
        self, db: None, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        answers = iter(["a long walk home", "a long walk hone"])
        monkeypatch.setattr("getpass.getpass", lambda prompt: next(answers))
        with pytest.raises(CommandError, match="differ"):
            _run("create_reader", "clara")
        assert not User.objects.exists()
