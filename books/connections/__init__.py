"""Connections between highlights of different books: the neighbour query over pgvector,
the service that writes connections when highlights are embedded, and the reads the pages
use. It may import the encoder for thresholds, never the import or search code.
"""
