"""The five-language guess used for reporting."""

import pytest

from evaluation.languages import guess_language


class GuessLanguageTests:
    @pytest.mark.parametrize(
        ("text", "language"),
        [
            ("The best way out is always through the middle of it.", "en"),
            ("Un hombre está tocando la guitarra para su hija.", "es"),
            ("Wer nicht wagt, der nicht gewinnt, sagt man bei uns.", "de"),
            ("Não é o que você diz, mas como você diz.", "pt"),
            ("C'est dans les petites choses que nous sommes les plus vrais.", "fr"),
            ("42", "unknown"),
        ],
    )
    def test_it_tells_the_languages_apart(self, text: str, language: str) -> None:
        assert guess_language(text) == language
