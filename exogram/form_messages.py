"""Form field errors in the pages' own voice.

Django's Spanish catalogue speaks to the reader formally ("Introduzca una fecha válida",
"Asegúrese de que este valor tenga…", "Su contraseña…"); Exogram's pages say "tú". The
fields a reader can get wrong take their messages from here, per form, rather than by
overriding Django's msgids in the project's catalogue: those msgids are in no source of
the project, so the next `makemessages` would keep them only as obsolete entries and the
formal wording would come back.

Each dict covers every error its kind of field can raise, its validators' included (a
validator's message gives way to the field's message of the same code), so a field given
one says nothing in Django's words. `tests/i18n/test_form_voice.py` walks every form a
reader can submit and fails on a message that is not from here.

The password validators' messages are the exception: the validators raise them whatever the
field, so their Spanish is in the project's catalogue under Django's msgids (read before
Django's own, LOCALE_PATHS), and the same test (PasswordRuleTests) fails if it is lost.
"""

from django.utils.translation import gettext_lazy as _

_REQUIRED = _("This can't be empty.")

TEXT = {
    "required": _REQUIRED,
    "max_length": _("At most %(limit_value)d characters; this has %(show_value)d."),
    # Every CharField refuses U+0000 (PostgreSQL cannot store it).
    "null_characters_not_allowed": _("This has a null character in it, which cannot be kept."),
}
USERNAME = {**TEXT, "invalid": _("Enter a valid username: letters, digits and @ . + - _ only.")}
PASSWORD = {**TEXT, "required": _("Type your password.")}
NEW_PASSWORD = {**TEXT, "required": _("Choose a password.")}
NEW_PASSWORD_AGAIN = {**TEXT, "required": _("Type the password again.")}
EMAIL = {**TEXT, "invalid": _("Write an e-mail address, such as reader@example.com.")}
DATE = {
    "required": _REQUIRED,
    "invalid": _("Write the date as year-month-day, such as 2024-03-01."),
}
CHOICE = {
    "required": _("Choose one of the options."),
    "invalid_choice": _("“%(value)s” is not one of the choices."),
}
_NOT_YOUR_BOOK = _("That is not one of your books.")
# A book's code (UUIDField, a CharField): its null-character check never runs past the
# UUID parse, but it is worded too.
BOOK = {
    "required": _REQUIRED,
    "invalid": _NOT_YOUR_BOOK,
    "null_characters_not_allowed": _NOT_YOUR_BOOK,
}
# A list of the reader's books (ModelMultipleChoiceField): a wrong one is named by its
# database id, which means nothing to a reader, so the message does not repeat it.
BOOKS = {
    "required": _("Choose at least one book."),
    "invalid_list": _("Choose books from the list."),
    "invalid_choice": _("One of those is not one of your books."),
    "invalid_pk_value": _("One of those is not one of your books."),
}
WHOLE_NUMBER = {
    "required": _("This needs a number."),
    "invalid": _("Write a whole number."),
    "min_value": _("At least %(limit_value)s."),
    "max_value": _("At most %(limit_value)s."),
}
FILE = {
    "required": _("Choose a file."),
    "invalid": _("No file came with the form; choose the file again."),
    "missing": _("No file came with the form; choose the file again."),
    "empty": _("That file is empty."),
    "max_length": _("The file's name is too long: at most %(max)d characters; it has %(length)d."),
    "contradiction": _("Choose a file or clear the field, not both."),
}
PASSWORDS = {
    "password_mismatch": _("The two passwords are not the same."),
    "password_incorrect": _("That is not your current password; try it again."),
}
