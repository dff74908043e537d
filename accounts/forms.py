from typing import Any

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm

from accounts.login_throttle import client_address, lockout_message, login_lockout
from accounts.models import User


class ThrottleMessageMixin(AuthenticationForm):
    """Says why a login is refused once the throttle holds it, instead of "wrong password"."""

    def get_invalid_login_error(self) -> forms.ValidationError:
        lockout = login_lockout(
            username=self.cleaned_data.get("username") or "", address=client_address(self.request)
        )
        if lockout:
            return forms.ValidationError(lockout_message(*lockout), code="throttled")
        return super().get_invalid_login_error()


class LoginForm(ThrottleMessageMixin, AuthenticationForm):
    pass


class AdminLoginForm(ThrottleMessageMixin, AdminAuthenticationForm):
    pass


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


class LanguageForm(forms.Form):
    language = forms.ChoiceField(
        label="Language",
        required=False,
        choices=[("", "Your browser's language"), *settings.LANGUAGES],
        help_text="The language of every page and of the e-mails Exogram sends you.",
    )
