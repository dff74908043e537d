"""Search by meaning across languages: the theme model's nearest beside e5's, on real
PostgreSQL with the real models."""

import pytest

from accounts.models import User
from books.embedding.encoder import get_encoders
from books.embedding.profiles import E5, THEME_SEARCH_MAX_DISTANCE
from books.models import Highlight
from books.search.meaning import nearest_theme, theme_query_vector
from books.search.search import search
from tests.books.embedded import embedded_library
from tests.books.kindle import Entry

SAYINGS = "Refranero (Anónimo)"
COURAGE = "On Courage (Various)"
KITCHEN = "Bread at Home (Ada Quennell)"
# e5 puts every Spanish saying nearer "miedo al fracaso" than these two (0.16-0.17, past its
# floor of 0.15): the theme model puts them first.
FAILURE = "Courage is going from failure to failure without losing enthusiasm."
DEFEAT = "He who fears being conquered is sure of defeat."
# e5: 0.17 from "amistad verdadera", past its floor.
FRIENDSHIP = (
    "True friendship is like sound health; the value of it is seldom known until it is lost."
)
UNRELATED = (
    "Preheat the oven and knead the dough for ten minutes.",
    "The train to the coast leaves at seven every morning.",
)
SPANISH = (
    "Más vale pájaro en mano que ciento volando.",
    "Quien madruga, Dios le ayuda.",
    "En boca cerrada no entran moscas.",
    "La superstición trae mala suerte.",
    "Al que quiera celeste, que le cueste.",
    "Donde hay confianza, da asco.",
)


@pytest.fixture
def library(alice: User) -> dict[str, Highlight]:
    entries = [
        *(Entry(SAYINGS, text, location=f"{10 * n + 1}") for n, text in enumerate(SPANISH)),
        Entry(COURAGE, FAILURE, location="11"),
        Entry(COURAGE, DEFEAT, location="41"),
        Entry(COURAGE, FRIENDSHIP, location="71"),
        *(Entry(KITCHEN, text, location=f"{30 * n + 1}") for n, text in enumerate(UNRELATED)),
    ]
    return embedded_library(alice, *entries)


def _texts(reader: User, query: str, mode: str = "auto") -> list[str]:
    return [r.highlight.text for r in search(reader, query, mode=mode, limit=50).results]


@pytest.mark.django_db
class CrossLanguageSearchTests:
    def test_it_finds_an_english_passage_on_the_theme_of_a_spanish_query(
        self, alice: User, library: dict[str, Highlight]
    ) -> None:
        for mode in ("auto", "meaning"):
            found = _texts(alice, "miedo al fracaso", mode)
            assert FAILURE in found
            assert DEFEAT in found
            assert not set(UNRELATED) & set(found)
            assert FRIENDSHIP not in found

    def test_it_finds_english_friendship_for_spanish_friendship(
        self, alice: User, library: dict[str, Highlight]
    ) -> None:
        found = search(alice, "amistad verdadera", limit=50)
        texts = [r.highlight.text for r in found.results]
        assert FRIENDSHIP in texts
        assert not set(UNRELATED) & set(texts)
        assert FAILURE not in texts
        # Found by meaning, shown with e5's distance like every result by meaning: past e5's
        # own floor, so the theme model found it.
        result = next(r for r in found.results if r.highlight.text == FRIENDSHIP)
        assert result.halves == ("meaning",)
        assert result.distance is not None
        assert E5.search_max_distance < result.distance < 1

    def test_it_keeps_the_theme_models_matches_within_its_floor(
        self, alice: User, library: dict[str, Highlight]
    ) -> None:
        encoders = get_encoders()

        def theme_matches(query: str) -> list[str]:
            vector = theme_query_vector(encoders, query)
            assert vector is not None
            found = nearest_theme(
                alice,
                Highlight.objects.filter(reader=alice),
                False,
                vector,
                encoders.model_id,
                (),
            )
            assert all(n.distance < THEME_SEARCH_MAX_DISTANCE for n in found)
            return [library_text(n.highlight_id) for n in found]

        def library_text(pk: int) -> str:
            return next(h.text for h in library.values() if h.pk == pk)

        assert FAILURE in theme_matches("miedo al fracaso")
        assert not set(UNRELATED) & set(theme_matches("miedo al fracaso"))
        # A query that means nothing gains no close match from the theme model.
        assert theme_matches("xyzzyqwrtplk") == []
