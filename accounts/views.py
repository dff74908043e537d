from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import translation
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods

from accounts.email_verification import (
    email_is_verified,
    email_verification_confirm,
    email_verification_send,
)
from accounts.forms import (
    DeleteAccountForm,
    EmailForm,
    LanguageForm,
    LoginForm,
    SignupForm,
    VerifiedPasswordResetForm,
)
from accounts.login_throttle import client_address
from accounts.models import User
from accounts.services import reader_delete_request
from exogram.rate_limits import rate_limited

TOO_MANY = gettext_lazy("Too many requests from your network address. Try again in an hour.")
TOO_MANY_SIGNUPS = gettext_lazy(
    "Too many accounts were made from your network address in the last hour. Try again in an hour."
)
TOO_MANY_SIGNUP_TRIES = gettext_lazy(
    "Too many sign-up attempts from your network address in the last hour. Try again in an hour."
)
# Every sign-up post counts against this many an hour per address, checked before the form
# is read: only accounts made count against EXOGRAM_SIGNUPS_PER_HOUR, and "that username is
# taken" must not answer an unlimited number of guesses (found by review).
SIGNUP_TRIES_PER_ACCOUNT = 6


class LoginView(auth_views.LoginView):
    form_class = LoginForm
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), "signup_open": _signup_open()}

    def form_invalid(self, form: LoginForm) -> HttpResponse:  # type: ignore[override]
        response = super().form_invalid(form)
        if form.has_error(NON_FIELD_ERRORS, "throttled"):
            response.status_code = 429
        return response


def landing(request: HttpRequest) -> HttpResponse:
    """The home page of a visitor who is not logged in: what Exogram does, and the way in.
    (books.views.home shows it; a reader logged in gets their library there.)"""
    return render(request, "accounts/landing.html", {"signup_open": _signup_open()})


def _signup_open() -> bool:
    return bool(settings.EXOGRAM_SIGNUP == "open")


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("home")
    if not _signup_open():
        return render(request, "accounts/signup_closed.html", status=403)
    form = SignupForm(request.POST or None)
    if request.method == "POST" and rate_limited(
        kind="signup-try",
        key=client_address(request),
        limit=settings.EXOGRAM_SIGNUPS_PER_HOUR * SIGNUP_TRIES_PER_ACCOUNT,
        window_seconds=3600,
    ):
        # The form unread (its errors would answer the guess), with what was typed.
        form = SignupForm(initial={"username": request.POST.get("username", "")})
        context = {"form": form, "refused": TOO_MANY_SIGNUP_TRIES}
        return render(request, "accounts/signup.html", context, status=429)
    if request.method == "POST" and form.is_valid():
        # Only an account about to be made counts (EXOGRAM_SIGNUPS_PER_HOUR is a limit on
        # accounts): a reader who tries three taken usernames is not refused for it. A
        # refused one is shown the page again, with what they typed.
        if rate_limited(
            kind="signup",
            key=client_address(request),
            limit=settings.EXOGRAM_SIGNUPS_PER_HOUR,
            window_seconds=3600,
        ):
            form.add_error(None, forms.ValidationError(TOO_MANY_SIGNUPS, code="throttled"))
            return render(request, "accounts/signup.html", {"form": form}, status=429)
        user = form.save()
        login(request, user)
        messages.success(
            request, gettext("Welcome to Exogram, %(name)s.") % {"name": user.username}
        )
        if user.email and email_verification_send(reader=user, request=request):
            messages.info(
                request,
                gettext(
                    "Follow the link mailed to %(email)s to confirm it is yours: until then "
                    "no password reset link goes there."
                )
                % {"email": user.email},
            )
        return redirect("home")
    return render(request, "accounts/signup.html", {"form": form})


def _settings(
    request: HttpRequest,
    reader: User,
    *,
    delete_form: DeleteAccountForm | None = None,
    email_form: EmailForm | None = None,
    language_form: LanguageForm | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        "language_form": language_form or LanguageForm(initial={"language": reader.language}),
        "delete_form": delete_form or DeleteAccountForm(reader=reader),
        "email_form": email_form or EmailForm(reader=reader, initial={"email": reader.email}),
        "email_verified": email_is_verified(reader),
    }
    return render(request, "accounts/settings.html", context, status=status)


@require_GET
@login_required
def settings_page(request: HttpRequest) -> HttpResponse:
    assert isinstance(request.user, User)
    return _settings(request, request.user)


@require_http_methods(["POST"])
@login_required
def language_change(request: HttpRequest) -> HttpResponse:
    reader = request.user
    assert isinstance(reader, User)
    form = LanguageForm(request.POST)
    if not form.is_valid():
        return _settings(request, reader, language_form=form, status=400)
    reader.language = form.cleaned_data["language"]
    reader.save(update_fields=["language"])
    # The message is read on the next page, in the language just chosen.
    translation.activate(reader.language or translation.get_language_from_request(request))
    messages.success(request, gettext("Language saved."))
    return redirect("settings")


@require_http_methods(["POST"])
@login_required
def email_change(request: HttpRequest) -> HttpResponse:
    reader = request.user
    assert isinstance(reader, User)
    form = EmailForm(request.POST, reader=reader)
    if not form.is_valid():
        return _settings(request, reader, email_form=form, status=400)
    reader.email = form.cleaned_data["email"]
    reader.save(update_fields=["email"])
    if not reader.email:
        messages.success(request, gettext("E-mail address removed."))
    elif email_is_verified(reader):
        messages.success(request, gettext("E-mail address saved."))
    else:
        email_verification_send(reader=reader, request=request)
        messages.success(
            request,
            gettext(
                "E-mail address saved. Follow the link mailed to it to confirm it is yours: "
                "until then no e-mail goes there."
            ),
        )
    return redirect("settings")


@require_http_methods(["POST"])
@login_required
def email_verification_resend(request: HttpRequest) -> HttpResponse:
    reader = request.user
    assert isinstance(reader, User)
    if email_verification_send(reader=reader, request=request):
        messages.success(request, f"A new link was mailed to {reader.email}.")
    else:
        messages.error(request, gettext("No link was sent: wait an hour, or check the address."))
    return redirect("settings")


@require_GET
def email_verify(request: HttpRequest, token: str) -> HttpResponse:
    reader = email_verification_confirm(token=token)
    if reader is None:
        return render(request, "accounts/email_verify_failed.html", status=400)
    messages.success(request, f"{reader.email} is confirmed as your e-mail address.")
    return redirect("settings" if request.user.is_authenticated else "login")


class PasswordResetView(auth_views.PasswordResetView):
    """Django's, with the link built by exogram.links (the form's), mail only to a
    verified address, and a limit on how many mails an address can ask for."""

    form_class = VerifiedPasswordResetForm

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        limit = settings.EXOGRAM_RESET_MAILS_PER_HOUR
        asked_for = str(request.POST.get("email", "")).strip().casefold()
        if rate_limited(
            kind="reset-from", key=client_address(request), limit=limit, window_seconds=3600
        ) or rate_limited(kind="reset-to", key=asked_for, limit=limit, window_seconds=3600):
            # The form again, with what was typed and why nothing was sent.
            form = self.get_form()
            form.add_error(None, forms.ValidationError(TOO_MANY, code="throttled"))
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)


@require_http_methods(["POST"])
@login_required
def delete_account(request: HttpRequest) -> HttpResponse:
    reader = request.user
    assert isinstance(reader, User)
    form = DeleteAccountForm(request.POST, reader=reader)
    if not form.is_valid():
        return _settings(request, reader, delete_form=form, status=400)
    logout(request)
    deleted_now = reader_delete_request(reader=reader)
    # Said on the login page, in its language: the browser's now that nobody is logged in,
    # not the deleted reader's setting (a Spanish line above an English form).
    with translation.override(translation.get_language_from_request(request)):
        if deleted_now:
            messages.success(request, gettext("Your account and all its data are deleted."))
        else:
            messages.success(
                request,
                gettext(
                    "Your account is closed and is being deleted with all its data in the "
                    "background, within a minute or so. It can no longer be used to log in; its "
                    "username is free again once that is done."
                ),
            )
    return redirect("login")
