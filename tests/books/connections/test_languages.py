"""Connections in every language, on the real model and the pinned judge: English, Spanish,
German and Portuguese passages connect within their language, translations across two, the
kin of German and Portuguese passages in another language are the judge's nearby candidates,
a passage about something else connects to nothing, and rebuilding finds the same again."""

import pytest

from accounts.models import User
from books.connections.judge import NEARBY, NEARBY_BAND, RELATED, SAME_IDEA
from books.connections.selectors import connections_for
from books.connections.services import connections_rebuild
from books.models import Connection, Highlight
from tests.books.embedded import connection_between, embedded_library
from tests.books.kindle import Entry

MEMORY_ES = "La memoria del corazón elimina los malos recuerdos y magnifica los buenos."
MEMORY_EN = "The heart's memory eliminates the bad memories and magnifies the good ones."
SNOW_ES = "Dos niños acostados en la nieve haciendo ángeles de nieve."
SNOW_EN = "Two children lying in the snow making snow angels."
# One idea (no happiness without forgetting) in German twice, in English and Portuguese.
FORGET_DE = "Wer nicht vergessen kann, der wird niemals wirklich glücklich sein."
FORGET_DE_TOO = "Ohne die Fähigkeit zu vergessen gibt es kein Glück für den Menschen."
FORGET_EN = "Without the ability to forget, no one could ever be truly happy."
FORGET_PT = "Quem não consegue esquecer nunca será verdadeiramente feliz."
# Longing as the presence of the absent, in Portuguese twice and in Spanish.
LONGING_PT = "A saudade é a presença de quem está ausente."
LONGING_PT_TOO = "Sentir saudade é ter alguém presente mesmo na sua ausência."
LONGING_ES = "La nostalgia es la presencia de quien está ausente."
ROSES = "Prune the roses hard in early March, just above an outward bud."

LIBRARY = [
    Entry("Cien años de soledad (García Márquez, Gabriel)", MEMORY_ES, location="210-212"),
    Entry("The Man Who Mistook His Wife for a Hat (Sacks, Oliver)", MEMORY_EN,
          location="1520-1522"),
    Entry("Nieve (Vallejo, Irene)", SNOW_ES, location="12-13"),
    Entry("Winter Stories (Munro, Alice)", SNOW_EN, location="300-301"),
    Entry("Unzeitgemäße Betrachtungen (Nietzsche, Friedrich)", FORGET_DE, location="10"),
    Entry("Aphorismen (Ebner-Eschenbach, Marie von)", FORGET_DE_TOO, location="20"),
    Entry("On Forgetting (Augé, Marc)", FORGET_EN, location="30"),
    Entry("Livro do Desassossego (Pessoa, Fernando)", FORGET_PT, location="40"),
    Entry("Saudade (Lourenço, Eduardo)", LONGING_PT, location="50"),
    Entry("Crônicas (Lispector, Clarice)", LONGING_PT_TOO, location="60"),
    Entry("Greguerías (Gómez de la Serna, Ramón)", LONGING_ES, location="70"),
    Entry("The Well-Tempered Garden (Lloyd, Christopher)", ROSES, location="88"),
]  # fmt: skip


def _connected(rows: dict[str, Highlight], a: str, b: str) -> bool:
    pair = connection_between(rows[a], rows[b])
    return pair is not None and pair.strength >= RELATED


def _nearby(rows: dict[str, Highlight], a: str, b: str) -> bool:
    """Kept as a candidate the judge finds likelier than NEARBY_BAND, not a connection."""
    pair = connection_between(rows[a], rows[b])
    return pair is not None and pair.strength == NEARBY and pair.probability >= NEARBY_BAND


@pytest.fixture
def library(alice: User) -> dict[str, Highlight]:
    return embedded_library(alice, *LIBRARY)


@pytest.mark.django_db
class LanguagesTests:
    def test_translations_connect_across_languages(self, library: dict[str, Highlight]) -> None:
        assert _connected(library, SNOW_ES, SNOW_EN)
        assert _connected(library, MEMORY_ES, MEMORY_EN)

    def test_german_passages_are_judged_likely_kin_within_german(
        self, library: dict[str, Highlight]
    ) -> None:
        # A German paraphrase: P(related) ~0.76 under judge v3, ~0.54 under v4, under their
        # related bands (0.9, 0.7):
        # a likely-related candidate the page shows first, not a connection. The price of the
        # bands that keep the connections a blind reader calls related (docs/evaluation.md).
        pair = connection_between(library[FORGET_DE], library[FORGET_DE_TOO])
        assert pair is not None
        assert pair.probability >= 0.5
        assert _connected(library, FORGET_DE, FORGET_DE_TOO) or _nearby(
            library, FORGET_DE, FORGET_DE_TOO
        )
        # To its English kin judge v2 gives P(related) ~0.4 (e5's cosines across German and
        # English sit near 0.90, where blind-judged pairs of German, Portuguese or French
        # were mostly unrelated): kept as the judge's nearby candidates, which the highlight
        # page shows as the nearest, not as connections (docs/evaluation.md, judge v2).
        for german in (FORGET_DE, FORGET_DE_TOO):
            assert _nearby(library, german, FORGET_EN)

    def test_portuguese_passages_connect_within_portuguese(
        self, library: dict[str, Highlight]
    ) -> None:
        assert _connected(library, LONGING_PT, LONGING_PT_TOO)
        # Its Spanish version, word for word across two languages: P(related) ~0.88 under
        # judge v4, just under its band (0.9), a likely candidate the page shows first; its
        # English kin on forgetting, said another way, a nearby candidate (P ~0.33).
        assert _nearby(library, LONGING_PT, LONGING_ES)
        assert _nearby(library, FORGET_PT, FORGET_EN)

    def test_a_passage_on_something_else_connects_to_nothing(
        self, library: dict[str, Highlight]
    ) -> None:
        assert connections_for(library[ROSES]) == []

    def test_what_connects_mostly_shares_a_theme(self, library: dict[str, Highlight]) -> None:
        themes = [
            {MEMORY_ES, MEMORY_EN},
            {SNOW_ES, SNOW_EN},
            {FORGET_DE, FORGET_DE_TOO, FORGET_EN, FORGET_PT},
            {LONGING_PT, LONGING_PT_TOO, LONGING_ES},
        ]
        theme = {text: i for i, texts in enumerate(themes) for text in texts}
        pairs = Connection.objects.filter(strength__gte=RELATED).select_related(
            "highlight_a", "highlight_b"
        )
        right = [theme.get(p.highlight_a.text) == theme.get(p.highlight_b.text) for p in pairs]
        # Judge v2 (bands at 0.5) also paired memory with forgetting and a Portuguese saying
        # on forgetting with one on longing: 4 of 9 on these themes. Judge v3's bands keep
        # only the translations and the paraphrase of longing, each on its theme, and the
        # translation of one saying as the same idea (docs/evaluation.md).
        same = [ok for ok, p in zip(right, pairs, strict=True) if p.strength == SAME_IDEA]
        assert len(right) >= 3
        assert all(right)
        assert len(same) >= 1

    def test_rebuilding_finds_the_same_connections_again(
        self, library: dict[str, Highlight]
    ) -> None:
        def stored() -> set[tuple[int, int, int]]:
            return set(
                Connection.objects.values_list("highlight_a_id", "highlight_b_id", "strength")
            )

        before = stored()
        connections_rebuild()
        assert stored() == before
