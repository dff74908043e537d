"""Searching a reader's library by words and by meaning: the service (`search.search`), its
parts (query, names, filters, keyword, meaning, fusion, results, language), its page and
JSON view, its urls. Views reach rows only through `search()`, which filters by the reader
first.
"""
