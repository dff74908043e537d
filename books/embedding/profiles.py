"""What the product knows about each model, beyond its files: one registry.

A model's profile holds every per-model figure that search and connections read: its own
cosine-distance cuts (same idea, related) for the pairs the pinned judge was not trained
for, where search by meaning stops and how far behind the best a close match may be, when
the meaning half of a search is sure, the languages it reads, and the English and theme models
that work beside it. The built-in models' figures are measured; docs/models.md ("The figures
each model carries") says where each comes from. A model folder (EXOGRAM_EMBEDDING_MODEL_DIR)
brings its own cuts and search floor in its exogram_model.json and takes the rest from the
profile of its name, or the defaults below.

Pure: no Django, no ONNX Runtime; search, connections and the model builders read it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

# Search by meaning stops this far from the query (cosine distance), and keeps a close
# match this far behind the best one, for a model that names no figures of its own.
DEFAULT_SEARCH_MAX_DISTANCE = 0.75
DEFAULT_SEARCH_MARGIN = 0.35
# Search by meaning also reads the theme model's nearest (books.embedding.theme), for a model
# that has it beside it: those nearer than THEME_SEARCH_MAX_DISTANCE and at most
# THEME_SEARCH_MARGIN behind its best, merged with the model's own close matches by
# reciprocal rank, the theme's counted THEME_SEARCH_WEIGHT. Measured on the realistic library
# (docs/evaluation.md, 2026-12-06): 15 queries that mean nothing or nothing the library holds
# ("xyzzyqwrtplk", "volcanic eruptions in Iceland") had their best at 0.61-0.83; 15 of 20
# real topics under 0.60 ("friendship" 0.42, "miedo al fracaso" 0.51; "money" 0.60 and
# "grief" 0.73 left to e5).
THEME_SEARCH_MAX_DISTANCE = 0.60
THEME_SEARCH_MARGIN = 0.12
THEME_SEARCH_WEIGHT = 1.0
# e5's results found by meaning alone farther than this are shown apart as "loosely
# related". Measured on evaluate_search's tasks (docs/evaluation.md, 2026-12-06, "Loosely
# related"): past 0.13, a meaning-only result in the first ten was a paraphrase's answer
# never, a cross-language answer 3-4 % of the time (11-20 % nearer); the first answer of
# 7 % of cross-language queries lands there (12-13 % at 0.12, 3 % at 0.14).
SEARCH_CLOSE_DISTANCE_E5 = 0.13
# Within books the reader chose, when neither words nor meaning found anything within the
# floor, e5's passages nearer than this are shown as loosely related: a passage in another
# language on the query's topic is past the floor ("miedo" and a book's English passages
# on fear, 0.158 and 0.164), a word of no topic of the book is farther. Measured on three
# small books (docs/evaluation.md, 2026-12-07, "search fixes from a QA walk"): 12 words of
# other languages on a book's topic at 0.144-0.178 from its nearest passage, 12 unrelated
# words ("tractor", "June", "invoice") at 0.192 or more from the nearest of each book without them.
SEARCH_IN_BOOKS_DISTANCE_E5 = 0.18


@dataclass(frozen=True)
class ModelProfile:
    # The name a model's vectors carry: the part of a model id before "@".
    name: str
    # Cosine-distance cuts: under `same_idea_cut` two passages carry one idea, under
    # `related_cut` (never tighter) they share a theme.
    same_idea_cut: float
    related_cut: float
    # The value of EXOGRAM_EMBEDDING_MODEL that chooses it; None for a model folder's.
    choice: str | None = None
    search_max_distance: float = DEFAULT_SEARCH_MAX_DISTANCE
    search_margin: float = DEFAULT_SEARCH_MARGIN
    # A result found by meaning alone farther than this is shown apart, as "loosely
    # related", below the close ones; None: every close match is close.
    search_close_distance: float | None = None
    # Within books the reader chose, when nothing is within the floor by meaning nor by
    # words, the passages nearer than this are shown (as loosely related); None: none are.
    search_in_books_distance: float | None = None
    # A best match nearer than this is a paraphrase and search's meaning half is sure;
    # None: never sure (measure a model with evaluate_search before giving it one).
    sure_distance: float | None = None
    # The languages it reads well; None: many.
    languages: tuple[str, ...] | None = None
    # The built-in model (its choice) that judges two English passages beside this one.
    english_model: str | None = None
    # Whether the theme model (books.embedding.theme) gives every passage a vector beside
    # this one's, for the pair judge: only for a model the pinned judge was trained with.
    theme_model: bool = False


# multilingual-e5-small: Spanish, English and ~100 more; the default.
E5 = ModelProfile(
    name="multilingual-e5-small",
    choice="multilingual-e5-small",
    same_idea_cut=0.07,
    related_cut=0.07,
    search_max_distance=0.15,
    search_margin=0.08,
    search_close_distance=SEARCH_CLOSE_DISTANCE_E5,
    search_in_books_distance=SEARCH_IN_BOOKS_DISTANCE_E5,
    sure_distance=0.08,
    languages=None,
    english_model="minilm-l6",
    theme_model=True,
)
# all-MiniLM-L6-v2: English only; the English model beside e5, or the model itself.
MINILM = ModelProfile(
    name="all-MiniLM-L6-v2",
    choice="minilm-l6",
    same_idea_cut=0.27,
    related_cut=0.37,
    search_max_distance=0.75,
    sure_distance=0.3,
    languages=("en",),
)
BUILT_IN = (E5, MINILM)
DEFAULT_MODEL = str(E5.choice)
# The names EXOGRAM_EMBEDDING_MODEL takes.
MODEL_CHOICES = tuple(str(profile.choice) for profile in BUILT_IN)
# A model folder that names no related cut gets its same-idea cut plus MiniLM's margin.
RELATED_MARGIN = round(MINILM.related_cut - MINILM.same_idea_cut, 2)

_BY_NAME = {profile.name: profile for profile in BUILT_IN}
_BY_CHOICE = {profile.choice: profile for profile in BUILT_IN}


def built_in(choice: str) -> ModelProfile | None:
    """The built-in model chosen by `choice` (a value of EXOGRAM_EMBEDDING_MODEL)."""
    return _BY_CHOICE.get(choice)


def profile_named(name: str) -> ModelProfile | None:
    """The built-in profile of the model whose vectors carry `name`, if there is one."""
    return _BY_NAME.get(name)


def profile_for_model_id(model_id: str) -> ModelProfile | None:
    """The profile of the model that wrote vectors with `model_id` ("name@sha…[+…]")."""
    return profile_named(model_id.split("@")[0])


def folder_profile(
    name: str,
    *,
    same_idea_cut: float,
    related_cut: float | None,
    search_max_distance: float,
) -> ModelProfile:
    """A model folder's profile: the figures its description names, the rest from the
    built-in profile of its name (a built folder of e5 is e5) or the defaults."""
    related = (
        min(2.0, same_idea_cut + RELATED_MARGIN)
        if related_cut is None
        else max(related_cut, same_idea_cut)
    )
    base = profile_named(name) or ModelProfile(name=name, same_idea_cut=0.0, related_cut=0.0)
    return dataclasses.replace(
        base,
        same_idea_cut=same_idea_cut,
        related_cut=related,
        search_max_distance=search_max_distance,
    )
