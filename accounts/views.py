from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import translation
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods

from accounts.forms import DeleteAccountForm, EmailForm, LanguageForm, LoginForm, SignupForm
from accounts.models import User
from accounts.services import reader_delete_request


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


def _signup_open() -> bool:
    return bool(settings.EXOGRAM_SIGNUP == "open")


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("home")
    if not _signup_open():
        return render(request, "accounts/signup_closed.html", status=403)
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user)
        messages.success(
            request, gettext("Welcome to Exogram, %(name)s.") % {"name": user.username}
        )
        return redirect("home")
    return render(request, "accounts/signup.html", {"form": form})


@require_GET
@login_required
def settings_page(request: HttpRequest) -> HttpResponse:
    assert isinstance(request.user, User)
    return render(request, "accounts/settings.html", _settings_context(request.user))


def _settings_context(reader: User, **forms: Any) -> dict[str, Any]:
    """The settings page's three forms, each bound to what was posted when it is given."""
    return {
        "delete_form": DeleteAccountForm(username=reader.username),
        "email_form": EmailForm(initial={"email": reader.email}),
        "language_form": LanguageForm(initial={"language": reader.language}),
        **forms,
    }


@require_http_methods(["POST"])
@login_required
def language_change(request: HttpRequest) -> HttpResponse:
    reader = request.user
    assert isinstance(reader, User)
    form = LanguageForm(request.POST)
    if not form.is_valid():
        context = _settings_context(reader, language_form=form)
        return render(request, "accounts/settings.html", context, status=400)
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
    form = EmailForm(request.POST)
    if not form.is_valid():
        context = _settings_context(reader, email_form=form)
        return render(request, "accounts/settings.html", context, status=400)
    reader.email = form.cleaned_data["email"]
    reader.save(update_fields=["email"])
    messages.success(
        request, gettext("E-mail address saved.") if reader.email else "E-mail address removed."
    )
    return redirect("settings")


@require_http_methods(["POST"])
@login_required
def delete_account(request: HttpRequest) -> HttpResponse:
    reader = request.user
    assert isinstance(reader, User)
    form = DeleteAccountForm(request.POST, username=reader.username)
    if not form.is_valid():
        context = _settings_context(reader, delete_form=form)
        return render(request, "accounts/settings.html", context, status=400)
    logout(request)
    if reader_delete_request(reader=reader):
        messages.success(request, gettext("Your account and all its data are deleted."))
    else:
        messages.success(
            request,
            gettext(
                "Your account is closed and is being deleted with all its data; this takes a few "
                "minutes for a large library. It can no longer be used to log in."
            ),
        )
    return redirect("login")
