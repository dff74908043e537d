"""A small evaluation data folder, written in code, in the shapes of the real one."""

import itertools
import json
from pathlib import Path

# Invented sayings, by topic: each topic has its own vocabulary, so the real model can
# tell the topics apart (and so twins with the same taste).
_TOPICS_EN = {
    "Sailing": "sail harbour tide keel anchor mast compass current storm rudder",
    "Gardening": "seed root soil compost orchard blossom pruning trellis seedling harvest",
    "Astronomy": "star comet telescope orbit galaxy nebula eclipse planet meteor constellation",
}
_TOPICS_ES = {
    "cocina": "sartén receta cebolla horno caldo especia cuchara aceite pan guiso",
    "musica": "guitarra melodía tambor acorde canción violín ritmo partitura coro piano",
    "montana": "cumbre sendero roca glaciar cresta refugio valle niebla cordada piolet",
}
_EN = (
    "Every {a} remembers the {b} it came from.",
    "There is no {a} without a {b} somewhere behind it.",
    "Learn the {a} before you trust the {b}.",
)
_ES = (
    "Cada {a} recuerda la {b} de la que vino.",
    "No hay {a} sin una {b} en algún lugar detrás.",
    "Aprende el {a} antes de fiarte de la {b}.",
)
QUOTES_PER_TOPIC = 32


def _sayings(words: str, templates: tuple[str, ...]) -> list[str]:
    pairs = itertools.permutations(words.split(), 2)
    made = [t.format(a=a, b=b) for (a, b), t in zip(pairs, itertools.cycle(templates))]
    return made[:QUOTES_PER_TOPIC]


def write_eval_data(folder: Path) -> Path:
    """A small evaluation folder in the shapes of quotable/ and fortunes_es/."""
    quotes = [
        {"_id": f"{topic}{i}", "content": text, "author": f"{topic} Writer {i % 4}",
         "tags": ["Famous Quotes", topic]}
        for topic, words in _TOPICS_EN.items()
        for i, text in enumerate(_sayings(words, _EN))
    ]  # fmt: skip
    (folder / "quotable").mkdir(parents=True)
    (folder / "quotable" / "quotes.json").write_text(json.dumps(quotes), encoding="utf-8")
    spanish = folder / "fortunes_es" / "es"
    spanish.mkdir(parents=True)
    for topic, words in _TOPICS_ES.items():
        entries = [
            f"{text}\n\t\t-- Autor {i % 4}. (1900-1990) Escritor.\n"
            for i, text in enumerate(_sayings(words, _ES))
        ]
        (spanish / f"{topic}.fortunes").write_text("%\n".join(entries), encoding="utf-8")
    return folder
