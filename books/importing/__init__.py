"""Importing a reader's highlights: one pure parser module per file format, and the service
that writes what they read. Parsers import nothing of Django (bytes in, dataclasses out);
only `services` touches the database.
"""
