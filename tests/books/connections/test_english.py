"""Two English passages are judged with both models' cosines (books.embedding.english), on
the real models and the pinned judge; a standalone note never pairs with another note."""

import pytest

from accounts.models import User
from books.connections.selectors import connections_for, highlight_connections
from books.models import Highlight
from tests.books.embedded import connection_between, embedded_library
from tests.books.kindle import Entry

# Two English passages on one theme in other words: e5 puts them 0.12 apart, where its
# cosine alone tells little between two English passages; the English model 0.34.
FAILURE = "Failure is only the opportunity to begin again, this time more wisely."
FAILURE_TOO = (
    "Every failure teaches you something that success never could, if you are willing to listen."
)
ROSES = "Prune the roses hard in early March, just above an outward bud."
ENVY = "Envy is a form of hidden admiration."
ENVY_TOO = "We envy most the people we secretly admire."


@pytest.fixture
def library(alice: User) -> dict[str, Highlight]:
    return embedded_library(
        alice,
        Entry("Essays (Montaigne, Michel)", FAILURE, location="10"),
        Entry("Letters (Seneca)", FAILURE_TOO, location="20"),
        Entry("The Well-Tempered Garden (Lloyd, Christopher)", ROSES, location="88"),
        Entry("Journals (Kierkegaard, Søren)", ENVY, location="3"),
        Entry("The End of the Affair (Greene, Graham)", ENVY_TOO, location="9"),
    )


@pytest.mark.django_db
class EnglishPairTests:
    def test_two_english_passages_on_one_theme_are_each_others_first(
        self, library: dict[str, Highlight]
    ) -> None:
        # Judged likely related by both models' cosines. Since judge v3 (bands raised to keep
        # the connections a blind reader calls related, docs/evaluation.md) a pair this far
        # apart in words may stay a candidate rather than a connection: either way it is the
        # first thing each page shows, with the judge's verdict.
        for a, b in ((FAILURE, FAILURE_TOO), (ENVY, ENVY_TOO)):
            pair = connection_between(library[a], library[b])
            assert pair is not None
            assert pair.probability >= 0.5, (a, b, pair.probability)
            shown = highlight_connections(library[a])
            first = (shown.same_idea + shown.related + shown.nearest)[0]
            assert first.highlight == library[b]
            assert first.probability == pytest.approx(pair.probability)

    def test_the_english_model_was_asked(self, library: dict[str, Highlight]) -> None:
        assert library[FAILURE].english_embedding is not None

    def test_an_unrelated_passage_shows_the_judges_candidates_or_the_nearest(
        self, library: dict[str, Highlight]
    ) -> None:
        assert connections_for(library[ROSES]) == []
        shown = highlight_connections(library[ROSES])
        assert not shown.any
        assert shown.nearest
        assert all(c.probability is None or c.probability < 0.5 for c in shown.nearest)


@pytest.mark.django_db
class NotesTests:
    def test_two_notes_never_connect_to_each_other(self, alice: User) -> None:
        note = "Use this in the talk on how memory rebuilds what it keeps, every single time."
        embedded_library(
            alice,
            # The same note, standing alone, in two books; and a passage on its theme.
            Entry("Ficciones (Borges, Jorge Luis)", note, kind="Note", location="500"),
            Entry("Awakenings (Sacks, Oliver)", note, kind="Note", location="600"),
            Entry(
                "Remembering (Bartlett, Frederic)",
                "Memory does not keep the past; it rebuilds it every single time we "
                "remember, and what it keeps is what it rebuilds.",
                location="10",
            ),
        )
        notes = list(Highlight.objects.filter(kind=Highlight.Kind.NOTE))
        assert len(notes) == 2
        assert connection_between(*notes) is None
        passage = Highlight.objects.get(kind=Highlight.Kind.HIGHLIGHT)
        assert any(connection_between(n, passage) for n in notes)  # a note meets what books say
