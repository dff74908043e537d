from django import forms
from django.utils.translation import gettext_lazy as _

from exogram import form_messages


class TokenForm(forms.Form):
    name = forms.CharField(
        label=_("Name"),
        max_length=100,
        help_text=_("Where you will use it, e.g. “laptop scripts”."),
        error_messages=form_messages.TEXT,
    )
