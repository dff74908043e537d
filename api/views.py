"""/api/: the five reads as JSON for tools, authenticated by a reader's token only.

The session cookie is never looked at: a page open in the browser gives no tool access,
and a token gives no access to the pages. The reads are books.library_api's, the same as
the MCP server's.
"""

from collections.abc import Callable
from functools import wraps
from typing import Any
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from accounts.models import User
from api.forms import TokenForm
from api.models import ApiToken
from api.schema import openapi_schema
from api.services import api_token_create, api_token_reader, api_token_revoke
from books import library_api
from books.access import reader_of
from exogram.errors import json_error
from exogram.reader_slots import ReaderBusy

ApiView = Callable[..., dict[str, Any]]
NEW_TOKEN_SESSION_KEY = "new_api_token"
NUMBER_MAX_DIGITS = 12


def _error(status: int, message: str) -> JsonResponse:
    response = json_error(status, message)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="exogram"'
    return response


def _int(request: HttpRequest, name: str, default: int, *, lowest: int, highest: int) -> int:
    raw = request.GET.get(name, "")
    if raw == "":
        return default
    # Digits only, and few: int() reads "١٢" and " 12 " too, and a 5,000-digit one is an error.
    # The range said is the parameter's own; library_api refuses a number outside it.
    if not raw.isascii() or not raw.isdigit() or len(raw) > NUMBER_MAX_DIGITS:
        shown = raw if len(raw) <= 20 else f"{raw[:20]}…"
        raise library_api.BadArgument(
            f"{name} must be a whole number from {lowest} to {highest:,}, not {shown!r}."
        )
    return int(raw)


def _limit(request: HttpRequest, default: int, highest: int) -> int:
    return _int(request, "limit", default, lowest=1, highest=highest)


def _offset(request: HttpRequest) -> int:
    return _int(request, "offset", 0, lowest=0, highest=library_api.OFFSET_MAX)


def reads_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """GET (and HEAD) only, and any other method told so in JSON, as every API answer.

    Exempt from CSRF: the API reads a token, never the session cookie, so a forged request
    from another site carries nothing it would accept. Checked, a POST with a good token
    got Django's HTML "CSRF verification failed" page instead of this 405."""

    @csrf_exempt
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method not in ("GET", "HEAD"):
            response = _error(405, f"The API only reads: send GET, not {request.method}.")
            response["Allow"] = "GET, HEAD"
            return response
        return view(request, *args, **kwargs)

    return wrapper


def token_required(view: ApiView) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        scheme, _, raw = request.headers.get("Authorization", "").partition(" ")
        if scheme.casefold() != "bearer" or not raw.strip():
            return _error(
                401, "Send a token: 'Authorization: Bearer exo_…' (Settings → API tokens)."
            )
        reader = api_token_reader(raw=raw.strip())
        if reader is None:
            return _error(401, "This token is unknown or has been revoked.")
        try:
            answer = view(request, reader, *args, **kwargs)
        except library_api.NotFound as error:
            return _error(404, str(error))
        except library_api.BadArgument as error:
            return _error(400, str(error))
        except ReaderBusy:
            response = _error(429, "Your other searches are still running. Try again shortly.")
            response["Retry-After"] = "2"
            return response
        response = JsonResponse(answer, json_dumps_params={"ensure_ascii": False})
        response["Cache-Control"] = "private, no-store"
        return response

    return reads_only(wrapper)


@token_required
def search(request: HttpRequest, reader: User) -> dict[str, Any]:
    return library_api.library_search(
        reader,
        query=request.GET.get("q", ""),
        mode=request.GET.get("mode", "auto"),
        limit=_limit(request, 10, library_api.SEARCH_MAX_LIMIT),
        offset=_offset(request),
        book=request.GET.get("book") or None,
        query_name="q",
    )


@token_required
def highlight(request: HttpRequest, reader: User, code: str) -> dict[str, Any]:
    return library_api.library_highlight(reader, code=code)


@token_required
def connections(request: HttpRequest, reader: User, code: str) -> dict[str, Any]:
    limit = _limit(request, 10, library_api.CONNECTIONS_MAX_LIMIT)
    return library_api.library_connections_of(reader, code=code, limit=limit)


@token_required
def books(request: HttpRequest, reader: User) -> dict[str, Any]:
    return library_api.library_books(reader, query=request.GET.get("q") or None)


@token_required
def book_highlights(request: HttpRequest, reader: User, code: str) -> dict[str, Any]:
    return library_api.library_book_highlights(
        reader,
        book_code=code,
        offset=_offset(request),
        limit=_limit(request, 50, library_api.BOOK_HIGHLIGHTS_MAX_LIMIT),
    )


@reads_only
def schema(request: HttpRequest) -> HttpResponse:
    """Public: it describes the API, and holds nothing of anyone's."""
    return JsonResponse(openapi_schema(server_url=request.build_absolute_uri("/api")))


# --- the reader's tokens, in settings ------------------------------------------------------


def _get_token_for_user(request: HttpRequest, code: UUID) -> ApiToken:
    return get_object_or_404(ApiToken, code=code, reader=reader_of(request))


@never_cache
@require_http_methods(["GET", "POST"])
@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        _, raw = api_token_create(reader=reader_of(request), name=form.cleaned_data["name"])
        # Post/redirect/get: a reload must not make a second token. The raw token rides in
        # the session for the one page that shows it, and leaves it there.
        request.session[NEW_TOKEN_SESSION_KEY] = raw
        return redirect("api_tokens")
    new_token = request.session.pop(NEW_TOKEN_SESSION_KEY, "") if request.method == "GET" else ""
    context = {
        "form": form,
        "new_token": new_token,
        "tokens": ApiToken.objects.filter(reader=reader_of(request)),
        "schema_url": request.build_absolute_uri("/api/schema/"),
    }
    status = 400 if form.is_bound and form.errors else 200
    return render(request, "api/tokens.html", context, status=status)


@require_POST
@login_required
def token_revoke(request: HttpRequest, code: UUID) -> HttpResponse:
    token = _get_token_for_user(request, code)
    api_token_revoke(token=token)
    messages.success(
        request,
        gettext("Revoked “%(name)s”: tools using it can no longer read your library.")
        % {"name": token.name},
    )
    return redirect("api_tokens")
