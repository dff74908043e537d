"""Searching a reader's library by words and by meaning: the hybrid search itself, its
page and JSON view, its urls. Views reach rows only through `search()`, which filters by
the reader first.
"""
