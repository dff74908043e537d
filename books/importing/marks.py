"""The mark a pure module puts on a message it writes in English for a reader to see.

`gettext_noop` is one of the names Django's `makemessages` looks for, so a message marked
here lands in the catalogue; the module stays free of Django. The message is stored and
logged in English, and `books.wording` says it in the reader's language when a page
shows it. Messages carry named placeholders (`%(key)s`), never positional ones: a
translation may put them in another order.
"""

__all__ = ["gettext_noop"]


def gettext_noop(message: str) -> str:
    return message
