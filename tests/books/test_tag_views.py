import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from books.models import Highlight, Tag
from books.services import highlight_tag
from tests.books.library import book_of, highlight_in


@pytest.fixture
def tagged(alice: User) -> list[Highlight]:
    book = book_of(alice, "Ficciones")
    highlights = [highlight_in(book, f"Line {i} of Ficciones.", location=i + 1) for i in range(3)]
    highlight_tag(highlight=highlights[0], name="memory")
    highlight_tag(highlight=highlights[1], name="memory")
    highlight_tag(highlight=highlights[1], name="remembering")
    highlight_tag(highlight=highlights[2], name="remembering")
    return highlights


def _names(highlight: Highlight) -> list[str]:
    return sorted(t.name for t in highlight.tags.all())


@pytest.mark.django_db
class TagRenameTests:
    def test_it_renames_a_tag(
        self, tagged: list[Highlight], alice: User, alice_client: Client
    ) -> None:
        response = alice_client.post(reverse("tag_rename", args=["memory"]), {"name": " Memoria "})
        assert response["Location"] == reverse("tag", args=["memoria"])
        assert _names(tagged[0]) == ["memoria"]
        page = alice_client.get(response["Location"]).content.decode()
        assert "Renamed “memory” to “memoria”." in page

    def test_renaming_to_an_existing_name_merges(
        self, tagged: list[Highlight], alice: User, alice_client: Client
    ) -> None:
        alice_client.post(reverse("tag_rename", args=["remembering"]), {"name": "memory"})
        assert [_names(h) for h in tagged] == [["memory"], ["memory"], ["memory"]]
        assert list(Tag.objects.filter(reader=alice).values_list("name", flat=True)) == ["memory"]

    def test_it_refuses_an_empty_name(self, tagged: list[Highlight], alice_client: Client) -> None:
        response = alice_client.post(reverse("tag_rename", args=["memory"]), {"name": "   "})
        assert response["Location"] == reverse("tag", args=["memory"])
        assert _names(tagged[0]) == ["memory"]


@pytest.mark.django_db
class TagMergeTests:
    def test_it_merges_one_tag_into_another(
        self, tagged: list[Highlight], alice: User, alice_client: Client
    ) -> None:
        into = Tag.objects.get(reader=alice, name="memory")
        response = alice_client.post(reverse("tag_merge", args=["remembering"]), {"into": into.pk})
        assert response["Location"] == reverse("tag", args=["memory"])
        assert [_names(h) for h in tagged] == [["memory"], ["memory"], ["memory"]]
        page = alice_client.get(response["Location"]).content.decode()
        assert "1 highlight moved" in page

    def test_it_never_merges_into_another_readers_tag(
        self, tagged: list[Highlight], bob: User, alice_client: Client
    ) -> None:
        bobs = Tag.objects.create(reader=bob, name="bobs")
        response = alice_client.post(reverse("tag_merge", args=["memory"]), {"into": bobs.pk})
        assert response["Location"] == reverse("tag", args=["memory"])
        assert _names(tagged[0]) == ["memory"]
        assert not bobs.highlights.exists()

    def test_it_refuses_a_merge_into_itself(
        self, tagged: list[Highlight], alice: User, alice_client: Client
    ) -> None:
        itself = Tag.objects.get(reader=alice, name="memory")
        alice_client.post(reverse("tag_merge", args=["memory"]), {"into": itself.pk})
        assert _names(tagged[0]) == ["memory"]


@pytest.mark.django_db
class TagDeleteTests:
    def test_it_deletes_the_tag_and_keeps_the_highlights(
        self, tagged: list[Highlight], alice: User, alice_client: Client
    ) -> None:
        response = alice_client.post(reverse("tag_delete", args=["memory"]))
        assert response["Location"] == reverse("tags")
        assert [_names(h) for h in tagged] == [[], ["remembering"], ["remembering"]]
        assert Highlight.objects.filter(reader=alice).count() == 3


@pytest.mark.django_db
class TagOwnershipTests:
    @pytest.mark.parametrize("name", ["tag_rename", "tag_merge", "tag_delete"])
    def test_bob_gets_a_404(
        self, tagged: list[Highlight], bob: User, bob_client: Client, name: str
    ) -> None:
        response = bob_client.post(reverse(name, args=["memory"]), {"name": "x", "into": "1"})
        assert response.status_code == 404
        assert _names(tagged[0]) == ["memory"]

    @pytest.mark.parametrize("name", ["tag_rename", "tag_merge", "tag_delete"])
    def test_anonymous_readers_are_sent_to_login(
        self, tagged: list[Highlight], client: Client, name: str
    ) -> None:
        response = client.post(reverse(name, args=["memory"]), {"name": "x"})
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
        assert _names(tagged[0]) == ["memory"]

    def test_a_get_changes_nothing(self, tagged: list[Highlight], alice_client: Client) -> None:
        assert alice_client.get(reverse("tag_delete", args=["memory"])).status_code == 405
