"""A small library of sayings on happiness and friendship in five languages, embedded by the
real model: "happines" finds none of them by its words and several by meaning, as it did in
a tester's 5,500-highlight library."""

from uuid import uuid4

from accounts.models import User
from books.embedding.pipeline import highlights_embed
from books.importing.clippings import normalize_author
from books.models import Book, Highlight

SAYINGS = {
    ("Collected Sayings", "Disraeli, Benjamin"): [
        "Happiness is a habit of the heart.",
        "Action may not always bring happiness; but there is no happiness without action.",
        "The happiness of your life depends upon the quality of your thoughts.",
        "Happy is the one who finds a true friend.",
        "Happiness depends upon ourselves.",
        "Most folks are about as happy as they make up their minds to be.",
        "Friendship doubles our joys and halves our griefs.",
        "A friend is one soul in two bodies; friendship is the wine of life.",
        "The river carried the winter's ice down to the sea.",
    ],
    ("Antología de Sentimientos", ""): [
        "La felicidad radica, ante todo, en la salud.",
        "La felicidad es la conjunción de muchas cosas.",
        "La felicidad no es hacer lo que uno quiere, sino querer lo que uno hace.",
        "La amistad es un alma que habita en dos cuerpos.",
        "La dicha de la vida consiste en tener siempre algo que hacer.",
    ],
    ("Gedanken und Einfälle", "Goethe"): [
        "Wer freudig tut und sich des Getanen freut, ist glücklich.",
        "Glück ist das Einzige, das sich verdoppelt, wenn man es teilt.",
        "Die Freundschaft ist ein Schatz, den man hüten muss.",
        "Er hat den Nagel auf den Kopf getroffen.",
        "Freue dich des Lebens, solange das Lämpchen glüht.",
    ],
    ("Uma breve história da Filosofia", "Warburton, Nigel"): [
        "Para ele, a felicidade não passava de alegria momentânea.",
        "A felicidade é um bem que se multiplica ao ser dividido.",
    ],
    ("Pensées", ""): [
        "Le bonheur est la seule chose qui se double si on la partage.",
    ],
}


def sayings_of(reader: User) -> list[Highlight]:
    """The sayings as the reader's highlights, with their languages and vectors."""
    rows = []
    for (title, authors), texts in SAYINGS.items():
        book = Book.objects.create(
            reader=reader, title=title, authors=authors,
            authors_normalized=normalize_author(authors), key=f"{title}|{authors}".casefold(),
        )  # fmt: skip
        for text in texts:
            highlight = Highlight(reader=reader, book=book, text=text, dedupe_key=uuid4().hex)
            highlight.refresh_search_text()
            highlight.refresh_language()
            highlight.save()
            rows.append(highlight)
    highlights_embed(ids=[h.pk for h in rows])
    return rows
