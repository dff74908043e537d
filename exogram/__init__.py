import os

# One BLAS thread a process, set before numpy loads its BLAS: the worker runs a process per
# core, each encoding with one ONNX Runtime thread, and numpy's threads on the theme model's
# small matrix products (books.embedding.theme) took five times the CPU for the same speed.
# An operator may still set it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from exogram.celery import app as celery_app

__all__ = ["celery_app"]
