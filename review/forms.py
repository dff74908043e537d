from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from books.forms import NoteField
from exogram import form_messages
from review.models import MAX_CARDS_PER_DAY, MAX_WORDS_PER_DAY, ReviewSettings
from review.scheduler import Answer
from review.services import review_settings_update


class ReviewSettingsForm(forms.Form):
    cards_per_day = forms.IntegerField(
        label=_("Highlights a day"),
        min_value=1,
        max_value=MAX_CARDS_PER_DAY,
        error_messages=form_messages.WHOLE_NUMBER,
    )
    words_per_day = forms.IntegerField(
        label=_("Words a day"),
        min_value=0,
        max_value=MAX_WORDS_PER_DAY,
        help_text=_("Your looked-up words, in a deck of their own. 0 turns the words deck off."),
        error_messages=form_messages.WHOLE_NUMBER,
    )
    daily_email = forms.BooleanField(
        label=_("Send me the day's highlights by e-mail each morning"), required=False
    )
    email = forms.EmailField(
        label=_("E-mail address"),
        required=False,
        help_text=_("Also where a password reset link goes."),
        error_messages=form_messages.EMAIL,
    )

    password = forms.CharField(
        label=_("Your password (to change the address)"),
        required=False,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
        error_messages=form_messages.PASSWORD,
    )

    def __init__(self, *args: Any, reader: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reader = reader

    def clean(self) -> dict[str, object]:
        cleaned = super().clean() or {}
        if cleaned.get("daily_email") and not cleaned.get("email"):
            self.add_error("email", _("The daily e-mail needs an address to go to."))
        changed = "email" in cleaned and cleaned["email"] != self.reader.email
        if changed and not self.reader.check_password(str(cleaned.get("password") or "")):
            # As in Settings: a session left open is not enough to redirect the mail.
            self.add_error("password", _("Type your password to change the address."))
        return cleaned

    def save(self) -> ReviewSettings:
        """Save what the form checked: the Settings page and `manage.py review_settings` both."""
        data = self.cleaned_data
        return review_settings_update(
            reader=self.reader,
            cards_per_day=data["cards_per_day"],
            words_per_day=data["words_per_day"],
            daily_email=data["daily_email"],
            email=data["email"],
        )


class AnswerForm(forms.Form):
    answer = forms.ChoiceField(
        choices=[(a.value, a.value) for a in (Answer.KEEP, Answer.LESS_OFTEN, Answer.FAVOURITE)]
        + [(Answer.OPEN.value, Answer.OPEN.value)],
        error_messages=form_messages.CHOICE,
    )


class WordAnswerForm(forms.Form):
    answer = forms.ChoiceField(
        choices=[(a.value, a.value) for a in (Answer.KNOW, Answer.AGAIN, Answer.OPEN)],
        error_messages=form_messages.CHOICE,
    )


class CardNoteForm(forms.Form):
    note = NoteField(label=_("Your note"))


class WordNoteForm(forms.Form):
    note = NoteField(label=_("Your definition"), definition=True)
