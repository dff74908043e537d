"""Connections in every language, on the real models and the pinned judge: English, Spanish,
German and Portuguese passages connect within their language and to their kin in another
(translations, one idea said two ways), two themes do not connect, a passage about something
else connects to nothing, and rebuilding finds the same again."""

import pytest

from accounts.models import User
from books.connections.judge import RELATED, SAME_IDEA
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


@pytest.fixture
def library(alice: User) -> dict[str, Highlight]:
    return embedded_library(alice, *LIBRARY)


@pytest.mark.django_db
class LanguagesTests:
    def test_translations_connect_across_languages(self, library: dict[str, Highlight]) -> None:
        assert _connected(library, SNOW_ES, SNOW_EN)
        assert _connected(library, MEMORY_ES, MEMORY_EN)

    def test_german_passages_connect_within_german_and_to_their_kin(
        self, library: dict[str, Highlight]
    ) -> None:
        # A German paraphrase, and the same idea in English and Portuguese. Under judge v4
        # (no theme model) the paraphrase was a likely candidate (P ~0.54) and its kin in
        # other languages only nearby (P ~0.4); the theme model's cosine makes each a
        # connection (P 0.78-0.92 under judge v5; docs/evaluation.md).
        assert _connected(library, FORGET_DE, FORGET_DE_TOO)
        for german in (FORGET_DE, FORGET_DE_TOO):
            assert _connected(library, german, FORGET_EN)
        assert _connected(library, FORGET_DE, FORGET_PT)

    def test_portuguese_passages_connect_within_portuguese_and_to_spanish(
        self, library: dict[str, Highlight]
    ) -> None:
        assert _connected(library, LONGING_PT, LONGING_PT_TOO)
        # Its Spanish version, word for word across two languages (under judge v4 P ~0.88,
        # just under its band), and Portuguese on forgetting with its English kin.
        assert _connected(library, LONGING_PT, LONGING_ES)
        assert _connected(library, FORGET_PT, FORGET_EN)

    def test_two_themes_do_not_connect_across_languages(
        self, library: dict[str, Highlight]
    ) -> None:
        # Memory and forgetting, longing and forgetting: near in words, not one idea. The
        # judge keeps them as nearby candidates at most (P 0.2-0.53 under judge v5).
        for memory in (MEMORY_EN, MEMORY_ES):
            assert not _connected(library, memory, FORGET_EN)
            assert not _connected(library, memory, LONGING_ES)
        assert not _connected(library, FORGET_EN, LONGING_ES)
        assert not _connected(library, FORGET_PT, LONGING_ES)

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
        # on forgetting with one on longing: 4 of 9 on these themes. Judge v5 connects the
        # ten pairs within the four themes and none across them (docs/evaluation.md).
        same = [ok for ok, p in zip(right, pairs, strict=True) if p.strength == SAME_IDEA]
        assert len(right) >= 8
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


@pytest.mark.django_db
def test_one_saying_in_two_anthologies_is_the_same_idea(alice: User) -> None:
    """Copied an accent and a comma apart: the features alone gave P(same idea) 0.98 and
    called the pair related; the same words are the same idea."""
    rows = embedded_library(
        alice,
        Entry("Refranero (Sbarbi, José María)", "Oír a todos, creer a pocos.", location="5"),
        Entry("Dichos y refranes (Correas, Gonzalo)", "Oir a todos creer a pocos", location="9"),
        Entry("The Well-Tempered Garden (Lloyd, Christopher)", ROSES, location="88"),
    )
    pair = connection_between(
        rows["Oír a todos, creer a pocos."], rows["Oir a todos creer a pocos"]
    )
    assert pair is not None
    assert (pair.strength, pair.same_probability) == (SAME_IDEA, 1.0)
    assert connections_for(rows[ROSES]) == []
