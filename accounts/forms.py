from typing import Any

from django import forms
from django.contrib.auth.forms import UserCreationForm

from accounts.models import User


class SignupForm(UserCreationForm[User]):
    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username",)


class DeleteAccountForm(forms.Form):
    confirm = forms.CharField(
        label="Type your username to confirm",
        help_text="This deletes your account and every book, highlight, note and import in it.",
    )

    def __init__(self, *args: Any, username: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.username = username

    def clean_confirm(self) -> str:
        confirm: str = self.cleaned_data["confirm"].strip()
        if confirm != self.username:
            raise forms.ValidationError("That is not your username; nothing was deleted.")
        return confirm


class EmailForm(forms.Form):
    email = forms.EmailField(
        label="E-mail address",
        required=False,
        help_text="Where a password reset link and the daily review e-mail go. Never shown.",
    )
