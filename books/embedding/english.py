"""The English model: all-MiniLM-L6-v2 beside multilingual-e5-small, for one job — judging
whether two English passages carry one idea.

multilingual-e5-small reads Spanish, English and their mix, so it makes every vector:
search, the map, kindred readers, and every connection that involves a Spanish or an
undetected passage, or crosses two languages. But between two English passages its
distances say little about what a reader calls a shared idea. Measured on a real reader's
library (six Kindle files, 6,649 passages, 6,004 of them English), with 445 pairs each
drawn from the connections a rule proposed and judged blind by a reader ("do they meet on
one specific theme, worth reading side by side?"):
- among English pairs that e5 proposed, e5's own distance told the related from the
  unrelated no better than chance (AUC 0.50; with the "passage: " prefix 0.59), and 28-33 %
  of what it connected at 8-25 % of passages covered was related;
- MiniLM's distance on the same pairs had an AUC of 0.80, and of the pairs MiniLM connects
  between English passages, 90 % under 0.30, 83 % under 0.36, 70 % at 0.36-0.40 and 50 % at
  0.40-0.45 were related.
So the pair judge (books.connections.judge) weighs two English passages by both models'
cosines: MiniLM's tells a shared theme, e5's a paraphrase (on STS-B dev, dropping MiniLM's
cosine raises the judge's test log-loss from 0.276 to 0.285).
It costs a second encoding of English passages only (77 texts per CPU-second, e5 61) and
~50 MB in a worker process (its graph rewritten to keep its weights 8-bit:
modelbuild.minilm); web processes never load it.

Only with the built-in multilingual model: when MiniLM is itself the model
(EXOGRAM_EMBEDDING_MODEL=minilm-l6) its vectors already judge every pair, and a model folder
(EXOGRAM_EMBEDDING_MODEL_DIR) judges its own.
"""

from __future__ import annotations

from pathlib import Path

from books.embedding.builtin import builtin_spec
from books.embedding.spec import ModelSpec


def has_english_model(main: ModelSpec) -> bool:
    """Whether an English model works beside `main` (its profile names one, as e5's does);
    else `main` judges every pair."""
    return main.profile.english_model is not None


def english_model_spec_for(main: ModelSpec, *, cache_dir: Path) -> ModelSpec | None:
    """The English model that works beside `main`, or None when `main` judges every pair."""
    english = main.profile.english_model
    return None if english is None else builtin_spec(english, cache_dir=cache_dir)
