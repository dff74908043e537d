"""Apply a logged-in reader's chosen language, over the browser's Accept-Language."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import translation


class ReaderLanguageMiddleware:
    """Runs after LocaleMiddleware and AuthenticationMiddleware.

    LocaleMiddleware has already activated the browser's language; a reader who chose one on
    /settings/ gets theirs instead. Its response half still sets Content-Language from the
    language active when the response is built.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        language = getattr(user, "language", "") if user is not None else ""
        if user is not None and user.is_authenticated and language:
            translation.activate(language)
            request.LANGUAGE_CODE = language
        return self.get_response(request)
