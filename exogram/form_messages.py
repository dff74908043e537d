"""Form field errors in the pages' own voice.

Django's Spanish catalogue speaks to the reader formally ("Introduzca una fecha válida",
"Asegúrese de que este valor tenga…", "Su contraseña…"); Exogram's pages say "tú". The
fields a reader can get wrong take their messages from here, per form, rather than by
overriding Django's msgids in the project's catalogue: those msgids are in no source of
the project, so the next `makemessages` would keep them only as obsolete entries and the
formal wording would come back.
"""

from django.utils.translation import gettext_lazy as _

TEXT = {
    "required": _("This can't be empty."),
    "max_length": _("At most %(limit_value)d characters; this has %(show_value)d."),
}
DATE = {"invalid": _("Write the date as year-month-day, such as 2024-03-01.")}
CHOICE = {"invalid_choice": _("“%(value)s” is not one of the choices.")}
BOOK = {"invalid": _("That is not one of your books.")}
WHOLE_NUMBER = {
    "required": _("This needs a number."),
    "invalid": _("Write a whole number."),
    "min_value": _("At least %(limit_value)s."),
    "max_value": _("At most %(limit_value)s."),
}
PASSWORDS = {
    "password_mismatch": _("The two passwords are not the same."),
    "password_incorrect": _("That is not your current password; try it again."),
}
