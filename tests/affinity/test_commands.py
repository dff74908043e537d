"""The kindred, seed_demo_library and evaluate_affinity commands."""

import json
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from accounts.models import User
from affinity.models import ReaderCentroid, SharingProfile
from affinity.services import centroid_refresh
from books.models import Highlight, Import
from tests.affinity.eval_data import write_eval_data
from tests.affinity.library import (
    book,
    direction,
    highlights,
    library,
    near,
    reader,
    share,
    unit,
)


def _client(who: User) -> Client:
    client = Client()
    client.force_login(who)
    return client


@pytest.mark.django_db
class KindredCommandTests:
    def test_it_prints_the_kindred_list_as_json(self, alice: User, bob: User) -> None:
        rng = np.random.default_rng(50)
        centre, idea = direction(rng), direction(rng)
        for who in (alice, bob):
            library(who, centre, rng)
        highlights(book(alice, "Ficciones"), near(idea, 0.1, rng, 1), texts=["Alice on time"])
        highlights(book(bob, "El Aleph"), near(idea, 0.1, rng, 1), texts=["Bob on time"])
        share(alice, "Alice L.")
        share(bob, "Bob B.")
        for who in (alice, bob):
            centroid_refresh(reader=who)
        out = StringIO()
        call_command("kindred", "--user", "alice", "--json", stdout=out)
        [row] = json.loads(out.getvalue())
        assert row["display_name"] == "Bob B."
        assert row["profile"] == SharingProfile.objects.get(reader=bob).get_absolute_url()
        assert 0 < row["similarity"] <= 1
        first = row["bridges"][0]
        assert (first["mine"]["text"], first["theirs"]["text"]) == ("Alice on time", "Bob on time")
        assert set(first["theirs"]) == {"book", "author", "text"}  # no code of bob's

    def test_it_refuses_a_reader_who_does_not_share(self, alice: User) -> None:
        with pytest.raises(CommandError, match="does not share"):
            call_command("kindred", "--user", "alice", stdout=StringIO())

    def test_it_says_why_a_small_library_has_none(self, alice: User) -> None:
        rng = np.random.default_rng(51)
        library(alice, direction(rng), rng, count=5)
        share(alice)
        centroid_refresh(reader=alice)
        with pytest.raises(CommandError, match="5 embedded highlight"):
            call_command("kindred", "--user", "alice", stdout=StringIO())

    def test_it_counts_the_embedded_highlights_as_the_page_does(self, alice: User) -> None:
        # Shared before the vectors landed: the centroid still says 0 (it said "0 embedded
        # highlight(s)" while the page said 428).
        share(alice)
        rng = np.random.default_rng(52)
        library(alice, direction(rng), rng, count=12)
        assert ReaderCentroid.objects.get(reader=alice).highlight_count == 0
        with pytest.raises(CommandError, match="12 embedded highlight"):
            call_command("kindred", "--user", "alice", stdout=StringIO())

    def test_it_works_out_a_lagging_place_and_says_who_shares(self, alice: User, bob: User) -> None:
        rng = np.random.default_rng(53)
        share(alice)
        share(bob)
        library(alice, direction(rng), rng, count=24)
        library(bob, direction(rng), rng, count=24)
        out = StringIO()
        call_command("kindred", "--user", "alice", stdout=out)
        assert ReaderCentroid.objects.get(reader=alice).highlight_count == 24
        # bob shares, his place not yet worked out: never "No other reader shares".
        assert "1 other reader(s) share their reading, but where theirs sits" in out.getvalue()
        out = StringIO()
        call_command("kindred", "--user", "bob", stdout=out)
        assert "Alice" in out.getvalue()

    def test_it_refuses_an_unknown_reader(self, db: None) -> None:
        with pytest.raises(CommandError, match="No reader named"):
            call_command("kindred", "--user", "nobody", stdout=StringIO())

    def test_it_says_how_close_as_the_page_does_never_a_cosine(self, alice: User) -> None:
        """Every centroid points nearly the same way: a cosine printed as "99% alike" said
        nothing. The command places the pair among all pairs, in the page's own words."""
        rng = np.random.default_rng(44)
        common = direction(rng)
        mine = unit(common + 0.3 * direction(rng))
        library(alice, mine, rng, noise=0.2)
        share(alice, "Alice")
        twin = reader("twin")
        library(twin, mine, rng, noise=0.2)
        share(twin, "Twin")
        for i in range(5):
            other = reader(f"other{i}")
            library(other, unit(common + 0.3 * direction(rng)), rng, noise=0.2)
            share(other, f"Other {i}")
        for who in User.objects.all():
            centroid_refresh(reader=who)
        out = StringIO()
        call_command("kindred", "--user", "alice", stdout=out)
        printed = out.getvalue()
        # 7 readers, 21 pairs: alice and her twin are the closest of them all.
        assert " 1. Twin  Closer than 95% of pairs of readers here\n" in printed
        assert "alike" not in printed
        page = _client(alice).get(reverse("kindred"))
        for kindred in page.context["kindred"]:
            line = f"{kindred.profile.display_name}  {kindred.closeness}\n"
            assert line in printed
            assert kindred.closeness in page.content.decode()
        out = StringIO()
        call_command("kindred", "--user", "alice", "--json", stdout=out)
        rows = {row["display_name"]: row for row in json.loads(out.getvalue())}
        assert rows["Twin"]["closer_than"] == 95
        assert rows["Twin"]["closeness"] == "Closer than 95% of pairs of readers here"

    def test_it_says_when_too_few_readers_share_to_tell(self, alice: User, bob: User) -> None:
        rng = np.random.default_rng(52)
        centre = direction(rng)
        for who, name in ((alice, "Alice"), (bob, "Bob")):
            library(who, centre, rng)
            share(who, name)
            centroid_refresh(reader=who)
        out = StringIO()
        call_command("kindred", "--user", "alice", stdout=out)
        assert out.getvalue().startswith(
            " 1. Bob  Among the nearest to you; too few readers share yet to say how close.\n"
        )


# Real commits: the import's on-commit embedding runs when the import commits, as in the
# command's real use, not at the end of a test transaction.
@pytest.mark.django_db(transaction=True)
class SeedAndEvaluateTests:
    """The real model, through the app's own import and embedding pipeline."""

    def test_it_lets_twins_find_each_other_and_not_opposites(self, tmp_path: Path) -> None:
        data = write_eval_data(tmp_path / "eval")
        args = ["--readers", "6", "--twins", "2", "--opposites", "1", "--data", str(data)]
        call_command("seed_demo_library", *args, stdout=StringIO())
        readers = User.objects.filter(username__startswith="demo-")
        assert readers.count() == 6
        assert SharingProfile.objects.filter(reader__in=readers, discoverable=True).count() == 6
        # through the import path, every highlight embedded, every reader placed
        assert Import.objects.filter(reader__in=readers, file_name="My Clippings.txt").count() == 6
        assert not Highlight.objects.exclude(embedding_status=Highlight.EmbeddingStatus.DONE)
        assert ReaderCentroid.objects.filter(reader__in=readers, vector__isnull=False).count() == 6
        assert not readers.filter(password__startswith="pbkdf2")  # nobody can log in as them

        out = StringIO()
        call_command("evaluate_affinity", "--json", stdout=out)
        report = json.loads(out.getvalue())
        assert report["readers"] == 6
        assert report["twin_pairs_in_top"]["app"] == 2
        twin_ranks = [rank for row in report["twins"] for rank in row["app"]]
        [opposite] = report["opposites"]
        # Six readers and six topics leave little room, but twins come first or second and
        # opposites, on average, well below them.
        assert max(twin_ranks) <= 2
        assert sum(opposite["app"]) / 2 > max(twin_ranks)

        with pytest.raises(CommandError, match="--reset"):
            call_command("seed_demo_library", *args, stdout=StringIO())

    def test_it_says_where_it_looked_for_the_data(self, tmp_path: Path, db: None) -> None:
        with pytest.raises(CommandError, match="does not exist"):
            call_command("seed_demo_library", "--data", str(tmp_path / "nowhere"))

    def test_it_evaluates_constructions_in_memory(self, tmp_path: Path) -> None:
        data = write_eval_data(tmp_path / "eval")
        out = StringIO()
        args = ["--construction", "quotes", "--data", str(data), "--readers", "30", "--json"]
        call_command("evaluate_affinity", *args, stdout=out)
        [report] = json.loads(out.getvalue())
        assert (report["construction"], report["seed"], report["readers"]) == ("quotes", 7, 30)
        # Side by side (six topics of 32 sayings is too small a world to rank them by).
        assert set(report["twin_pairs_in_top"]) == {"app", "plain_mean", "centred"}
        assert all(0 <= n <= 10 for n in report["twin_pairs_in_top"].values())
        with pytest.raises(CommandError, match="no Kindle clippings files"):
            call_command("evaluate_affinity", "--construction", "kindle", "--data", str(data))

    def test_it_needs_a_demo_library_to_evaluate(self, db: None) -> None:
        with pytest.raises(CommandError, match="seed_demo_library"):
            call_command("evaluate_affinity", stdout=StringIO())
