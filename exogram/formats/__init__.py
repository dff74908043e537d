"""The dates of the pages, per language (settings.FORMAT_MODULE_PATH): templates ask for
DATE_FORMAT or DATETIME_FORMAT, never a literal format, so each language writes a date its
own way. Formats not named here are Django's own for the language."""
