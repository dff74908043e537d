"""The connections page's "New since your last import": empty after a file imported again,
it says the import added nothing new rather than blaming a filter."""

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.connections.judge import judge_version
from books.importing.services import clippings_import
from books.models import Connection, Highlight
from tests.books.kindle import MEMORY_LIBRARY, Entry, clippings_file

MODEL = "test-model@00000000"
NOTHING_NEW = "Your last import added nothing new, so it brought no new connections."
NO_MATCH = "No connections match this filter."


@pytest.fixture
def imported(alice: User) -> bytes:
    """alice's clippings imported once, with one pair between its two books."""
    data = clippings_file(*MEMORY_LIBRARY)
    clippings_import(reader=alice, data=data, file_name="My Clippings.txt")
    borges = Highlight.objects.get(reader=alice, text__startswith="To think is to forget")
    sacks = Highlight.objects.get(reader=alice, text__startswith="We have each of us")
    low, high = sorted((borges, sacks), key=lambda h: h.pk)
    Connection.objects.create(
        reader=alice, highlight_a=low, highlight_b=high, distance=0.1, probability=0.8,
        same_probability=0.1, strength=Connection.Strength.RELATED,
        judge_version=judge_version(), embedding_model=MODEL,
    )  # fmt: skip
    return data


@pytest.mark.django_db
class NewSinceLastImportTests:
    def test_a_file_imported_again_says_it_added_nothing_new(
        self, alice: User, imported: bytes, alice_client: Client
    ) -> None:
        again = clippings_import(reader=alice, data=imported, file_name="My Clippings.txt")
        assert again.counts["new_highlights"] == 0
        response = alice_client.get(reverse("connections"), {"new": "1"})
        assert response.context["page"].paginator.count == 0
        content = response.content.decode()
        assert NOTHING_NEW in content
        assert NO_MATCH not in content
        # The library's pair is still there, one click away.
        assert "To think is to forget" in alice_client.get(reverse("connections")).content.decode()

    def test_an_import_that_added_passages_but_no_pair_says_the_filter_matched_none(
        self, alice: User, imported: bytes, alice_client: Client
    ) -> None:
        more = clippings_file(
            *MEMORY_LIBRARY, Entry("Ficciones (Borges, Jorge Luis)", "A new line.", location="9")
        )
        grown = clippings_import(reader=alice, data=more, file_name="My Clippings.txt")
        assert grown.counts["new_highlights"] == 1
        content = alice_client.get(reverse("connections"), {"new": "1"}).content.decode()
        assert NO_MATCH in content
        assert NOTHING_NEW not in content

    def test_it_says_it_in_spanish(
        self, alice: User, imported: bytes, alice_client: Client
    ) -> None:
        alice.language = "es"
        alice.save(update_fields=["language"])
        clippings_import(reader=alice, data=imported, file_name="My Clippings.txt")
        content = alice_client.get(reverse("connections"), {"new": "1"}).content.decode()
        assert "Tu última importación no añadió nada nuevo" in content

    def test_another_readers_import_says_nothing_to_bob(
        self, alice: User, bob: User, imported: bytes, bob_client: Client
    ) -> None:
        clippings_import(reader=alice, data=imported, file_name="My Clippings.txt")
        content = bob_client.get(reverse("connections"), {"new": "1"}).content.decode()
        assert NOTHING_NEW not in content

    def test_it_sends_anonymous_readers_to_log_in(self, client: Client) -> None:
        response = client.get(reverse("connections"), {"new": "1"})
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
