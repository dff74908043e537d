"""Embedding highlights: the runtime that reads model folders and turns texts into vectors (no
database; the builders that write the folders are apart, in `modelbuild`), the registry of
per-model figures (`profiles.py`), and the pipeline that claims, encodes and writes vectors
(the only module here that touches the database).
"""
