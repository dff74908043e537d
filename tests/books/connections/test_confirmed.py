"""Past a kind of pair's plain related cut, two passages connect only as each other's nearest
with a rare word in common (books.connections.confirmed): two Spanish passages in their
related band, two English ones past the English model's plain cut. On real pgvector with
vectors at known distances and the model's own cuts."""

import numpy as np
import pytest

from accounts.models import User
from books.connections.confirmed import RARE_WORD_MIN_PASSAGES, passage_stems, rare_words
from books.connections.selectors import Strength, connections_for
from books.connections.services import (
    SHORT_PAIR_MARGIN,
    SHORT_PASSAGE_WORDS,
    highlights_connect,
    thresholds,
)
from books.language import ENGLISH, SPANISH
from books.models import Book, Highlight, search_text_of
from tests.books.connections.test_strengths import at_distance, unit
from tests.books.embedded import connection_between

MODEL = "test-model@00000000"
RNG = np.random.default_rng(20)


def _highlight(
    reader: User,
    title: str,
    text: str,
    vector: np.ndarray | list[float],
    language: str = SPANISH,
) -> Highlight:
    """A passage; an English one has the vector as the English model's too (its pairs are
    judged by that: books.connections.services)."""
    book, _ = Book.objects.get_or_create(
        reader=reader, title=title, defaults={"authors": title, "key": title.casefold()}
    )
    english = list(vector) if language == ENGLISH else None
    return Highlight.objects.create(
        reader=reader, book=book, text=text, dedupe_key=f"{book.pk}:{text}"[:64], language=language,
        search_text=search_text_of(text, ""), embedding=list(vector), english_embedding=english,
        embedding_model=MODEL, embedding_status=Highlight.EmbeddingStatus.DONE,
    )  # fmt: skip


def _far() -> np.ndarray:
    """A place of its own: random unit vectors in 384 dimensions are ~1 apart."""
    return unit(RNG.normal(size=384))


@pytest.fixture
def english_cuts() -> tuple[float, float]:
    """The English model's plain related cut and its confirmed one."""
    english = thresholds().english
    assert english is not None
    assert english.confirmed_from is not None
    return english.confirmed_from, english.related


@pytest.fixture
def cuts() -> tuple[float, float]:
    spanish = thresholds().spanish
    assert spanish.same_idea < spanish.related  # the model has a Spanish related band
    return spanish.same_idea, spanish.related


def _apart(
    reader: User,
    first: tuple[str, str],
    second: tuple[str, str],
    distance: float,
    language: str = SPANISH,
) -> tuple[Highlight, Highlight]:
    """Two passages, (book title, text) each, `distance` apart in a place of their own."""
    base = _far()
    return (
        _highlight(reader, *first, base, language),
        _highlight(reader, *second, at_distance(base, distance), language),
    )


def _related_distance(cuts: tuple[float, float], share: float = 0.5) -> float:
    same_idea, related = cuts
    return same_idea + share * (related - same_idea)


@pytest.mark.django_db
class SpanishRelatedTests:
    def test_each_others_nearest_with_a_rare_word_in_common_are_related(
        self, alice: User, cuts: tuple[float, float]
    ) -> None:
        envy, neighbour = _apart(
            alice,
            ("Diarios", "La envidia es una admiración escondida."),
            ("Cartas", "Quien envidia a su vecino lo admira en secreto."),
            _related_distance(cuts),
        )
        highlights_connect(ids=[envy.pk, neighbour.pk])
        assert connection_between(envy, neighbour) is not None
        (found,) = connections_for(envy)
        assert found.highlight == neighbour
        assert found.strength == Strength.RELATED

    def test_a_shared_mould_with_no_word_in_common_does_not_connect(
        self, alice: User, cuts: tuple[float, float]
    ) -> None:
        talk, sleep = _apart(
            alice,
            ("Refranes", "Quien mucho habla, poco escucha."),
            ("Dichos", "Quien mucho duerme, poco aprende."),
            _related_distance(cuts),
        )
        stems = passage_stems([talk.pk, sleep.pk], SPANISH)
        assert not stems[talk.pk] & stems[sleep.pk]  # "quien", "mucho", "poco" are stop words
        highlights_connect(ids=[talk.pk, sleep.pk])
        assert connection_between(talk, sleep) is None

    def test_the_same_idea_needs_no_word_in_common(
        self, alice: User, cuts: tuple[float, float]
    ) -> None:
        silence, consent = _apart(
            alice,
            ("Refranes", "Quien calla otorga."),
            ("Dichos", "El silencio dice que sí."),
            cuts[0] / 2,
        )
        highlights_connect(ids=[silence.pk, consent.pk])
        (found,) = connections_for(silence)
        assert found.highlight == consent
        assert found.strength == Strength.SAME_IDEA

    def test_only_a_passages_nearest_spanish_passage_is_asked(
        self, alice: User, cuts: tuple[float, float]
    ) -> None:
        # The lent umbrella is nearest the neighbour's; the neighbour's is nearest the
        # winter one. All three share "paraguas"; only the mutual pair connects.
        base = _far()
        neighbours = _highlight(
            alice, "Vecinos", "El paraguas del vecino siempre es más grande.", base
        )
        winter = _highlight(
            alice, "Inviernos", "Nunca prestes tu paraguas en invierno.",
            at_distance(base, _related_distance(cuts, 0.2)),
        )  # fmt: skip
        lent = _highlight(
            alice, "Préstamos", "Un paraguas prestado no vuelve nunca.",
            at_distance(base, _related_distance(cuts, 0.8)),
        )  # fmt: skip
        highlights_connect(ids=[neighbours.pk, winter.pk, lent.pk])
        assert connection_between(neighbours, winter) is not None
        assert connection_between(neighbours, lent) is None
        assert connection_between(winter, lent) is None

    def test_a_word_many_passages_have_is_not_rare(
        self, alice: User, cuts: tuple[float, float]
    ) -> None:
        heals, forgets = _apart(
            alice,
            ("Refranes", "El tiempo lo cura todo."),
            ("Dichos", "Con el tiempo todo se olvida."),
            _related_distance(cuts),
        )
        others = [
            _highlight(alice, f"Libro {n}", f"Aquel tiempo de la cosecha número {n}.", _far())
            for n in range(RARE_WORD_MIN_PASSAGES)
        ]
        highlights_connect(ids=[heals.pk, forgets.pk, *(h.pk for h in others)])
        assert connection_between(heals, forgets) is None


@pytest.mark.django_db
class RareWordTests:
    def test_a_word_is_rare_in_few_of_the_readers_spanish_passages(self, alice: User) -> None:
        umbrella = _highlight(alice, "Vecinos", "El paraguas del vecino.", _far())
        for n in range(RARE_WORD_MIN_PASSAGES + 1):
            _highlight(alice, f"Libro {n}", f"El tiempo de la cosecha número {n}.", _far())
        (stems,) = passage_stems([umbrella.pk], SPANISH).values()
        assert "paragu" in stems
        assert rare_words(alice.pk, SPANISH, {"paragu", "tiemp"}) == {"paragu"}

    def test_another_readers_passages_do_not_count(self, alice: User, bob: User) -> None:
        _highlight(alice, "Vecinos", "El paraguas del vecino.", _far())
        for n in range(RARE_WORD_MIN_PASSAGES + 1):
            _highlight(bob, f"Libro {n}", f"Otro paraguas perdido, el número {n}.", _far())
        assert rare_words(alice.pk, SPANISH, {"paragu"}) == {"paragu"}
        assert rare_words(bob.pk, SPANISH, {"paragu"}) == set()


# One idea in two long passages (12 words or more) with no word in common.
UNSAID = "Nothing we own is as heavy as the things we never said aloud to the people we loved."
SILENCE = "A silence kept for decades weighs more than any confession, and grows with every year."
LONG_ENVY = "Envy is the quiet admiration we refuse to confess, even to ourselves, for years."
LONG_ENVY_TOO = "He envied his brother all his life, which was only admiration wearing a mask."


@pytest.mark.django_db
class EnglishConfirmedTests:
    def test_past_the_plain_cut_each_others_nearest_with_a_rare_word_are_related(
        self, alice: User, english_cuts: tuple[float, float]
    ) -> None:
        envy, brother = _apart(
            alice,
            ("Journals", LONG_ENVY),
            ("East of Eden", LONG_ENVY_TOO),
            _related_distance(english_cuts),
            ENGLISH,
        )
        highlights_connect(ids=[envy.pk, brother.pk])
        (found,) = connections_for(envy)
        assert found.highlight == brother
        assert found.strength == Strength.RELATED

    def test_past_the_plain_cut_no_word_in_common_does_not_connect(
        self, alice: User, english_cuts: tuple[float, float]
    ) -> None:
        first, second = _apart(
            alice,
            ("Journals", UNSAID),
            ("Letters", SILENCE),
            _related_distance(english_cuts),
            ENGLISH,
        )
        stems = passage_stems([first.pk, second.pk], ENGLISH)
        assert not stems[first.pk] & stems[second.pk]
        highlights_connect(ids=[first.pk, second.pk])
        assert connection_between(first, second) is None

    def test_under_the_plain_cut_no_confirming_is_needed(
        self, alice: User, english_cuts: tuple[float, float]
    ) -> None:
        first, second = _apart(
            alice, ("Journals", UNSAID), ("Letters", SILENCE), english_cuts[0] - 0.02, ENGLISH
        )
        highlights_connect(ids=[first.pk, second.pk])
        assert connection_between(first, second) is not None

    def test_a_short_pair_must_be_confirmed_sooner(
        self, alice: User, english_cuts: tuple[float, float]
    ) -> None:
        # Under the plain cut for two long passages, past it (in the confirmed band) for a
        # short one.
        plain, related = english_cuts
        distance = (plain + related) / 2 - SHORT_PAIR_MARGIN
        assert distance < plain <= distance + SHORT_PAIR_MARGIN < related
        short, long = _apart(
            alice,
            ("Maxims", "Silence weighs more than words."),
            ("Letters", "A confession kept for decades grows heavier every year it is kept."),
            distance,
            ENGLISH,
        )
        assert len(short.text.split()) < SHORT_PASSAGE_WORDS
        stems = passage_stems([short.pk, long.pk], ENGLISH)
        assert not stems[short.pk] & stems[long.pk]
        highlights_connect(ids=[short.pk, long.pk])
        assert connection_between(short, long) is None
