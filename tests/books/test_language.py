"""The language detector (books.language): English, Spanish, unknown; pure, no database."""

import pytest

from books.language import ENGLISH, SPANISH, UNKNOWN, language_of


class LanguageOfTests:
    @pytest.mark.parametrize(
        "text",
        [
            "We read the world wrong and say that it deceives us.",
            "The heart's memory eliminates the bad memories and magnifies the good ones.",
            "It isn't where you come from, it's where you're going that counts.",
        ],
    )
    def test_it_knows_english(self, text: str) -> None:
        assert language_of(text) == ENGLISH

    @pytest.mark.parametrize(
        "text",
        [
            "Leemos mal el mundo, y decimos luego que nos engaña.",
            "La memoria del corazón elimina los malos recuerdos y magnifica los buenos.",
            "¿Dónde está la biblioteca?",
            "EL QUE DE JOVEN NO TRABAJA DE VIEJO DUERME EN LA PAJA.",
        ],
    )
    def test_it_knows_spanish(self, text: str) -> None:
        assert language_of(text) == SPANISH

    def test_a_short_aphorism_has_enough_to_go_on(self) -> None:
        # One function word is enough when no other language has any.
        assert language_of("Fortune favors the brave.") == ENGLISH
        assert language_of("La vida es sueño.") == SPANISH
        # An "-ción" word is Spanish alone.
        assert language_of("Paciencia y perseverancia: tu mejor inversión.") == SPANISH

    def test_a_mixed_text_takes_the_language_most_of_it_is_in(self) -> None:
        quoting = (
            "As the old Spanish saying goes, poco a poco se va lejos, and they are right "
            "about the slowness of all the roads that matter."
        )
        assert language_of(quoting) == ENGLISH
        # Half and half is not clear enough to call.
        assert language_of("The house is big; la casa es grande.") == UNKNOWN

    @pytest.mark.parametrize(
        "text",
        [
            "",
            "allay",  # a looked-up word: no function word at all
            "1984",
            "Carpe diem.",
            "A barba muerta, poca vergüenza.",  # a proverb with no function word either
        ],
    )
    def test_it_says_unknown_when_there_is_too_little(self, text: str) -> None:
        assert language_of(text) == UNKNOWN

    @pytest.mark.parametrize(
        "text",
        [
            "C'est la vie, et nous ne pouvons pas la changer.",
            "O que não tem remédio, remediado está, e não é para chorar.",
            "Das Leben ist kein Ponyhof, und es ist nicht immer leicht.",
            "人は怒りを捏造する",
        ],
    )
    def test_other_languages_are_unknown_not_spanish(self, text: str) -> None:
        # Connections give an unknown pair the tight cut, never the looser one across
        # languages: a French or Portuguese text must not pass for Spanish.
        assert language_of(text) == UNKNOWN
