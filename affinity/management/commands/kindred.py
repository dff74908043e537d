import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.commands import reader_named
from affinity.bridges import Bridge
from affinity.selectors import (
    KindredReader,
    kindred_readers,
    other_sharing_readers,
    standing_for,
    with_closeness,
)
from affinity.services import MIN_HIGHLIGHTS, centroid_catch_up


def _side(bridge_side: Any) -> dict[str, Any]:
    return {
        "book": bridge_side.book.title,
        "author": bridge_side.book.authors,
        "text": bridge_side.text,
    }


def _bridge(bridge: Bridge) -> dict[str, Any]:
    mine = {"code": str(bridge.mine.code), **_side(bridge.mine)}
    return {"mine": mine, "theirs": _side(bridge.theirs), "distance": round(bridge.distance, 4)}


def as_json(found: list[KindredReader]) -> list[dict[str, Any]]:
    return [
        {
            "display_name": kindred.profile.display_name,
            "profile": kindred.profile.get_absolute_url(),
            "similarity": round(kindred.similarity, 4),
            # Placed among every pair of sharing readers, as the page places it (None: too
            # few readers share to tell), and said in the page's words.
            "closer_than": kindred.closer_than,
            "closeness": kindred.closeness,
            "distance": round(kindred.distance, 4),
            "books_in_common": kindred.books_in_common,
            "bridges": [_bridge(b) for b in kindred.bridges],
        }
        for kindred in found
    ]


class Command(BaseCommand):
    help = "Print a sharing reader's kindred readers, as their Kindred readers page shows them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the reader's username")
        parser.add_argument("--limit", type=int, default=10, help="readers to list (10)")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        reader = reader_named(options["user"])
        if options["limit"] < 1:
            raise CommandError("--limit must be at least 1.")
        standing = standing_for(reader)
        # The same rules as the page: only a sharing reader has kindred readers.
        if not standing.sharing:
            raise CommandError(
                f"{reader.username} does not share their reading; kindred readers are only "
                "for readers who do (their Sharing page turns it on)."
            )
        embedded = standing.highlights
        if not standing.ready:
            # As the page: counted from the highlights, not the centroid a refresh rewrites
            # later (it said "0 embedded" of 428), and with enough, the centroid computed now.
            embedded = centroid_catch_up(reader=reader)
            standing = standing_for(reader)
        if not standing.ready:
            if embedded >= MIN_HIGHLIGHTS:
                raise CommandError(
                    f"{reader.username} has {embedded} embedded highlight(s) in shared books; "
                    "where their reading sits is being worked out now. Try again in a minute."
                )
            raise CommandError(
                f"{reader.username} has {embedded} embedded highlight(s) in shared "
                f"books; kindred readers need at least {MIN_HIGHLIGHTS}."
            )
        rows = as_json(with_closeness(kindred_readers(standing, limit=options["limit"]), standing))
        if options["json"]:
            self.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2))
            return
        if not rows:
            others = other_sharing_readers(reader.pk)
            self.stdout.write(
                f"{others} other reader(s) share their reading, but where theirs sits is not "
                f"worked out yet (it needs at least {MIN_HIGHLIGHTS} embedded highlights in "
                "the books they share, and a minute or so once they are embedded)."
                if others
                else "No other reader shares their reading yet."
            )
        for rank, row in enumerate(rows, start=1):
            # What the page says: a cosine of two libraries is near 1 for any two
            # (affinity.selectors.similarity_spread), so never "99% alike".
            self.stdout.write(f"{rank:>2}. {row['display_name']}  {row['closeness']}")
            for bridge in row["bridges"]:
                self.stdout.write(f"      you:    {bridge['mine']['text'][:90]}")
                self.stdout.write(f"      them:   {bridge['theirs']['text'][:90]}")
            if row["books_in_common"]:
                self.stdout.write(f"      both read: {', '.join(row['books_in_common'])}")
