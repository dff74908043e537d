from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import (
    AuthenticationForm,
    PasswordChangeForm,
    PasswordResetForm,
    SetPasswordForm,
    UserCreationForm,
)
from django.http import HttpRequest
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from accounts.email_verification import email_is_verified
from accounts.login_throttle import client_address, lockout_message, login_lockout
from accounts.models import User
from exogram import form_messages
from exogram.links import site_link_to


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
    # Django's own wording is formal in Spanish ("introduzca"); the pages speak as "tú".
    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": _("No account has that username and password. Both are case-sensitive."),
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].error_messages.update(form_messages.TEXT)
        self.fields["password"].error_messages.update(form_messages.PASSWORD)


class AdminLoginForm(ThrottleMessageMixin, AdminAuthenticationForm):
    pass


# AUTH_PASSWORD_VALIDATORS in one sentence.
PASSWORD_HINT = _("At least 8 characters; not all digits, not a common password, not your name.")


class SignupForm(UserCreationForm[User]):
    """Django's sign-up, worded for a reader: one short line under each field instead of
    Django's list of password rules."""

    error_messages = {**UserCreationForm.error_messages, **form_messages.PASSWORDS}

    # Optional, and only for password resets: without it a reader who forgets the
    # password can only ask whoever runs the server. Not refused when another account has
    # it, as in the settings: that would tell anyone which addresses have accounts here;
    # the address is the reader's once they follow the link mailed to it.
    email = forms.EmailField(
        label=_("E-mail address (optional)"),
        required=False,
        help_text=_(
            "Only for password resets: without it, a forgotten password means asking the "
            "person who runs this Exogram. A link to confirm it is mailed to it. Never shown."
        ),
        error_messages=form_messages.EMAIL,
    )

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    field_order = ["username", "password1", "password2", "email"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].help_text = _("Letters, digits and @ . + - _ only.")
        # The username validator's own message is formal in Spanish ("Introduzca…").
        self.fields["username"].error_messages.update(form_messages.USERNAME)
        self.fields["username"].widget.attrs.update({"autocomplete": "username"})
        self.fields["email"].widget.attrs.update({"autocomplete": "email"})
        self.fields["password1"].help_text = PASSWORD_HINT
        self.fields["password1"].error_messages.update(form_messages.NEW_PASSWORD)
        self.fields["password2"].error_messages.update(form_messages.NEW_PASSWORD_AGAIN)
        self.fields["password2"].label = _("Password again")
        self.fields["password2"].help_text = ""


if TYPE_CHECKING:
    _SetPasswordForm = SetPasswordForm[User]
else:  # generic in django-stubs only: no __class_getitem__ at run time
    _SetPasswordForm = SetPasswordForm


class ReaderSetPasswordForm(_SetPasswordForm):
    """Django's new-password form (a reset link), in the pages' voice: one short hint under
    the new password instead of Django's list of rules, whose Spanish is formal ("Su
    contraseña…", "introduzca…")."""

    error_messages = {**SetPasswordForm.error_messages, **form_messages.PASSWORDS}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["new_password1"].help_text = PASSWORD_HINT
        self.fields["new_password1"].error_messages.update(form_messages.NEW_PASSWORD)
        self.fields["new_password2"].error_messages.update(form_messages.NEW_PASSWORD_AGAIN)
        self.fields["new_password2"].label = _("New password again")
        self.fields["new_password2"].help_text = ""


class ReaderPasswordChangeForm(ReaderSetPasswordForm, PasswordChangeForm):
    """Django's password change, worded like the rest of the pages."""

    error_messages = {**PasswordChangeForm.error_messages, **form_messages.PASSWORDS}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["old_password"].error_messages.update(form_messages.PASSWORD)


class _PasswordConfirmed(forms.Form):
    """A form that changes the account: the reader's password confirms it is them (a
    session left open on a shared computer is not enough).

    Two of them share /settings/: each names its fields' ids after itself
    (`id_email_password`, `id_delete_password`), so that a label never points into the
    other form. The fields' names stay the same."""

    id_prefix = ""

    password = forms.CharField(
        label=_("Your password"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
        error_messages=form_messages.PASSWORD,
    )

    def __init__(self, *args: Any, reader: User, **kwargs: Any) -> None:
        if self.id_prefix:
            kwargs.setdefault("auto_id", f"id_{self.id_prefix}_%s")
        super().__init__(*args, **kwargs)
        self.reader = reader

    def clean_password(self) -> str:
        password: str = self.cleaned_data["password"]
        if not self.reader.check_password(password):
            raise forms.ValidationError(_("That is not your password; nothing was changed."))
        return password


class DeleteAccountForm(_PasswordConfirmed):
    id_prefix = "delete"
    confirm = forms.CharField(
        label=_("Type your username to confirm"),
        help_text=_("This deletes your account and every book, highlight, note and import in it."),
        error_messages=form_messages.TEXT,
    )
    field_order = ["confirm", "password"]

    def clean_confirm(self) -> str:
        confirm: str = self.cleaned_data["confirm"].strip()
        if confirm != self.reader.username:
            raise forms.ValidationError(_("That is not your username; nothing was deleted."))
        return confirm


class EmailForm(_PasswordConfirmed):
    id_prefix = "email"
    email = forms.EmailField(
        label=_("E-mail address"),
        required=False,
        help_text=_(
            "Where a password reset link and the daily review e-mail go, once you follow "
            "the link mailed to it. Never shown."
        ),
        error_messages=form_messages.EMAIL,
    )
    field_order = ["email", "password"]


class LanguageForm(forms.Form):
    language = forms.ChoiceField(
        label=_("Language"),
        required=False,
        choices=[("", _("Your browser's language")), *settings.LANGUAGES],
        help_text=_("The language of every page and of the e-mails Exogram sends you."),
        error_messages=form_messages.CHOICE,
    )


class VerifiedPasswordResetForm(PasswordResetForm):
    """Django's reset form, mailing only addresses their reader verified, in the reader's
    chosen language (without one, in the language of the page that asked for it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Django's "Email": the settings and the sign-up say "E-mail address".
        self.fields["email"].label = _("E-mail address")
        self.fields["email"].error_messages.update(form_messages.EMAIL)

    def get_users(self, email: str) -> Iterator[Any]:
        for user in super().get_users(email):
            if email_is_verified(user):
                yield user

    def save(self, *args: Any, **kwargs: Any) -> None:
        # For the link's host while EXOGRAM_BASE_URL is unset (PasswordResetView passes it).
        self._request: HttpRequest | None = kwargs.get("request")
        super().save(*args, **kwargs)

    def send_mail(self, *args: Any, **kwargs: Any) -> None:
        context = kwargs.get("context", args[2] if len(args) > 2 else {})
        context["reset_url"] = site_link_to(
            "password_reset_confirm",
            kwargs={"uidb64": context["uid"], "token": context["token"]},
            request=getattr(self, "_request", None),
        )
        language = getattr(context.get("user"), "language", "") or translation.get_language()
        with translation.override(language):
            super().send_mail(*args, **kwargs)
