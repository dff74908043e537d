"""Readers, books and highlight vectors built in code, at known places, without the model (the
theme vectors from them: tests.theme_vectors)."""

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from accounts.models import User
from affinity.models import SharingProfile
from affinity.services import sharing_update
from books.models import Book, Highlight
from tests.theme_vectors import theme_of

MODEL = "test-model@00000000"
Vector = npt.NDArray[np.float64]


def unit(vector: Vector) -> Vector:
    result: Vector = vector / np.linalg.norm(vector)
    return result


def direction(rng: np.random.Generator) -> Vector:
    return unit(rng.normal(size=384))


def near(base: Vector, noise: float, rng: np.random.Generator, count: int = 1) -> Vector:
    """`count` unit vectors scattered around `base` (rows)."""
    rows = base + rng.normal(scale=noise / np.sqrt(384), size=(count, 384))
    result: Vector = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return result


def reader(username: str) -> User:
    return User.objects.create_user(username, password="a long and unguessable passphrase")


def share(who: User, name: str = "", excluded: Sequence[Book] = ()) -> SharingProfile:
    return sharing_update(
        reader=who,
        discoverable=True,
        display_name=name or who.username.title(),
        excluded_books=list(excluded),
    )


def book(who: User, title: str, authors: str = "") -> Book:
    return Book.objects.create(
        reader=who, title=title, authors=authors, authors_normalized=authors.casefold(),
        key=f"{title}|{authors}".casefold(),
    )  # fmt: skip


def highlights(
    the_book: Book,
    vectors: Vector,
    *,
    model: str = MODEL,
    kind: str = Highlight.Kind.HIGHLIGHT,
    texts: Sequence[str] = (),
    themes: Vector | None = None,
) -> list[Highlight]:
    """One embedded highlight per row of `vectors` in `the_book`; its theme vector from the
    same row of `themes`, else from its vector (tests.theme_vectors)."""
    start = Highlight.objects.filter(book=the_book).count()
    rows = [
        Highlight(
            reader_id=the_book.reader_id,
            book=the_book,
            kind=kind,
            text=texts[i] if texts else f"{the_book.title}, passage {start + i}",
            note=f"my own note {start + i}" if kind == Highlight.Kind.NOTE else "",
            dedupe_key=f"{the_book.pk}:{model}:{start + i}",
            embedding=vector.astype(np.float32).tolist(),
            theme_embedding=theme_of(vector if themes is None else themes[i]),
            embedding_model=model,
            embedding_status=Highlight.EmbeddingStatus.DONE,
        )
        for i, vector in enumerate(vectors)
    ]
    return Highlight.objects.bulk_create(rows)


def library(
    who: User,
    centre: Vector,
    rng: np.random.Generator,
    *,
    count: int = 24,
    noise: float = 0.8,
    titles: Sequence[str] = ("First", "Second", "Third"),
) -> list[Highlight]:
    """`count` highlights around `centre`, spread over books with these titles. They share a
    broad area, not an idea: the theme model (whose cosines part the two) gets directions
    of their own for them."""
    vectors = near(centre, noise, rng, count)
    themes = np.asarray([direction(rng) for _ in range(count)])
    made: list[Highlight] = []
    shelves = [book(who, f"{title} ({who.username})") for title in titles]
    for index, shelf in enumerate(shelves):
        step = len(shelves)
        made += highlights(shelf, vectors[index::step], themes=themes[index::step])
    return made


def vectors_of(rows: Sequence[Highlight]) -> Vector:
    return np.asarray([np.asarray(h.embedding, dtype=np.float64) for h in rows])


def normalized_mean(vectors: Vector, weights: Sequence[float] | None = None) -> Vector:
    w = np.ones(len(vectors)) if weights is None else np.asarray(weights, dtype=np.float64)
    return unit((vectors * w[:, None]).sum(axis=0))
