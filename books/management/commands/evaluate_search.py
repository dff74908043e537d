"""`manage.py evaluate_search`: the search evaluation on a library built from STS-B lives in
evaluation.search (docs/evaluation.md)."""

from evaluation.search import EvaluateSearch as Command

__all__ = ["Command"]
