"""The language detector (books.language): English, Spanish, German, Portuguese, French,
Italian or unknown; pure, no database."""

import pytest

from books.language import (
    ENGLISH,
    FRENCH,
    GERMAN,
    ITALIAN,
    PORTUGUESE,
    SPANISH,
    UNKNOWN,
    language_of,
)


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
        ("text", "language"),
        [
            ("C'est la vie, et nous ne pouvons pas la changer.", FRENCH),
            ("C'est qu'en vérité le chemin importe peu, la volonté d'arriver suffit à tout.",
             FRENCH),
            ("O que não tem remédio, remediado está, e não é para chorar.", PORTUGUESE),
            ("Nunca deixe para amanhã o que se pode deixar para depois de amanhã.", PORTUGUESE),
            ("Das Leben ist kein Ponyhof, und es ist nicht immer leicht.", GERMAN),
            ("Wer nichts weiß, muss alles glauben.", GERMAN),
            ("Nel mezzo del cammin di nostra vita mi ritrovai per una selva oscura.", ITALIAN),
            ("人は怒りを捏造する", UNKNOWN),
        ],
    )  # fmt: skip
    def test_it_knows_german_portuguese_french_and_italian(self, text: str, language: str) -> None:
        assert language_of(text) == language

    @pytest.mark.parametrize(
        "text",
        [
            # Words Spanish shares with Portuguese, French or Italian are no evidence
            # against Spanish: "dos", "mas", "cosa", "sur", "pelo", "loro", "vergüenza".
            "Una persona usa un soplete en dos cámaras.",
            "Cuanto mas grande la cabeza, mas fuerte la jaqueca.",
            "Si la cosa no te importa, que no te importe.",
            "El norte es claro y el sur es oscuro.",
            "Un loro está hablando.",
            "La vergüenza una vez perdida, se perdió para toda la vida.",
        ],
    )
    def test_spanish_stays_spanish_beside_its_neighbours(self, text: str) -> None:
        assert language_of(text) == SPANISH

    def test_a_text_split_between_two_other_languages_is_unknown(self) -> None:
        assert language_of("Ist es nicht so? Nous ne savons pas.") == UNKNOWN
