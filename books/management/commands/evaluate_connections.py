"""`manage.py evaluate_connections`: the calibration of the connection cuts on STS-B, the
quotable quotes and the Spanish sayings lives in evaluation.connections (docs/evaluation.md)."""

from evaluation.connections import EvaluateConnections as Command

__all__ = ["Command"]
