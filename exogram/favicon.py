"""`GET /favicon.ico`: the site's icon for a page that names none.

Every page of the site links its icon (`static/favicon.svg`, templates/base.html), but a
browser asks for /favicon.ico on a page without that link (the Django admin's, a file it
shows on its own) and whenever one opens /favicon.ico directly: a 404 each time, in the
log and in the browser's console. This sends it to the same icon. A temporary redirect,
not a permanent one: the icon's static URL carries a hash of its content, and a browser
that kept a permanent redirect would ask for the old file after the icon changed.
"""

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.templatetags.static import static
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_safe

ICON = "favicon.svg"
# A day: a browser asks again now and then, and so follows the icon when it changes.
CACHE_SECONDS = 24 * 60 * 60


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    response = HttpResponseRedirect(static(ICON))
    patch_cache_control(response, public=True, max_age=CACHE_SECONDS)
    return response
