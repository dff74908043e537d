"""Usernames compared as they look: "alice" spelt with a Cyrillic a is taken when "alice" is.

Django compares usernames exactly (after NFKC), so two readers could be told apart only
by letters that look the same, and a reader could be led to share with, or trust, the
wrong one. Each name is folded to a skeleton — NFKC, case folded, the letters of other
scripts that are drawn like Latin ones mapped to them (Unicode's confusables for Cyrillic
and Greek, the ones that matter for names), marks and invisible characters dropped — and
a new name whose skeleton is another's is refused: a validator of `User.username`, so the
sign-up page, the admin and `createsuperuser` refuse it alike.
"""

import unicodedata

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

# Cyrillic and Greek letters drawn like Latin ones (after case folding), and digits and
# signs that read as letters in a name.
_LOOK_ALIKES = str.maketrans(
    # Cyrillic, then Greek, then digits and signs ...
    "\u0430\u0432\u0435\u0451\u04bb\u0456\u0457\u0458\u043a\u04cf\u043c\u043d"
    "\u043e\u0440\u0441\u0455\u0442\u0443\u0445\u0501\u051b\u051d\u044c\u04af"
    "\u03b1\u03b2\u03b5\u03b7\u03b9\u03ba\u03bd\u03bf\u03c1\u03c4\u03c5\u03c7"
    "\u03c9\u03b6\u03bc01|5",
    # ... and the Latin letter each is drawn like.
    "abeehiijklmhopcstyxdqwbyabenikvoptuxwzuolls",
)


def username_skeleton(name: str) -> str:
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", name).casefold())
    kept = "".join(
        ch for ch in folded if unicodedata.category(ch) not in {"Mn", "Me", "Cf", "Cc", "Zs"}
    )
    # "i" and "l" are told apart by few fonts, nor "rn" from "m".
    return kept.translate(_LOOK_ALIKES).replace("rn", "m").replace("i", "l")


def validate_not_confusable(username: str) -> None:
    """Refuse a name drawn like another reader's (the same name is not another's: saving a
    reader again keeps theirs)."""
    from django.contrib.auth import get_user_model

    skeleton = username_skeleton(username)
    # Every name is read: accounts are made rarely and a server has readers by the hundred
    # at most. (A stored, unique skeleton would be the way for many more.)
    others = get_user_model().objects.exclude(username=username)
    for taken in others.values_list("username", flat=True).iterator():
        if username_skeleton(taken) == skeleton:
            raise ValidationError(
                _("This username looks the same as another reader's. Choose another."),
                code="confusable",
            )
