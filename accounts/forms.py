from typing import Any

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm, UserCreationForm
from django.utils import translation
from django.utils.translation import gettext_lazy as _

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
        label=_("Type your username to confirm"),
        help_text=_("This deletes your account and every book, highlight, note and import in it."),
    )

    def __init__(self, *args: Any, username: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.username = username

    def clean_confirm(self) -> str:
        confirm: str = self.cleaned_data["confirm"].strip()
        if confirm != self.username:
            raise forms.ValidationError(_("That is not your username; nothing was deleted."))
        return confirm


class EmailForm(forms.Form):
    email = forms.EmailField(
        label=_("E-mail address"),
        required=False,
        help_text=_("Where a password reset link and the daily review e-mail go. Never shown."),
    )


class LanguageForm(forms.Form):
    language = forms.ChoiceField(
        label=_("Language"),
        required=False,
        choices=[("", "Your browser's language"), *settings.LANGUAGES],
        help_text=_("The language of every page and of the e-mails Exogram sends you."),
    )


class ReaderPasswordResetForm(PasswordResetForm):
    """Sends the reset link in the reader's chosen language; without one, in the language
    of the page that asked for it."""

    def send_mail(self, *args: Any, **kwargs: Any) -> None:
        context = kwargs.get("context", args[2] if len(args) > 2 else {})
        language = getattr(context.get("user"), "language", "") or translation.get_language()
        with translation.override(language):
            super().send_mail(*args, **kwargs)
