"""Every URL the project serves, tried by a second reader and by an anonymous visitor.

The URL resolver is enumerated, so a view added without a case here fails this file: each
named pattern needs an entry in OWN_ROWS (the URL names alice's rows: bob gets a 404),
READER_PAGES (the URL shows the requester's own library: bob sees only his), API_ROWS
(token-authenticated JSON: a session never reaches it) or PUBLIC.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.apps import apps
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from accounts.models import User
from affinity.models import SharingProfile
from affinity.services import sharing_profile_for, sharing_update
from api.services import api_token_create
from books.embedding.pipeline import highlights_embed
from books.importing.services import clippings_import
from books.library_map.services import library_map_refresh
from books.models import Book, Deletion, Highlight, Import, Tag
from books.services import (
    highlight_delete,
    highlight_favourite_toggle,
    highlight_note_update,
    highlight_tag,
)
from review.services import review_queue, word_queue
from tests.books.kindle import MEMORY_LIBRARY, Entry, clippings_file

# A word nothing but alice's library contains: her titles, text, notes, tags, file names.
SECRET = "Quaxolotl"
SECRET_BOOK = f"The {SECRET} Papers (Ibarra, Lucía)"


@dataclass
class AliceLibrary:
    book_code: str
    highlight_code: str
    deleted_code: str
    deletion_code: str
    import_code: str
    tag_id: int
    tag_name: str
    profile_code: str
    tag_count: int
    spare_tags: dict[str, str]
    card_code: str
    word_card_code: str
    token_code: str
    other_book_code: str


def _walk(
    patterns: list[URLPattern | URLResolver], namespace: str = "", prefix: str = ""
) -> Iterator[tuple[str, str]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = ":".join(part for part in (namespace, pattern.namespace) if part)
            yield from _walk(pattern.url_patterns, inner, prefix + str(pattern.pattern))
        else:
            name = f"{namespace}:{pattern.name}" if namespace and pattern.name else pattern.name
            yield name or "", prefix + str(pattern.pattern)


ALL_PATTERNS = sorted(set(_walk(get_resolver().url_patterns)))

# URL name -> the kwargs naming one of alice's rows.
OWN_ROWS: dict[str, Any] = {
    "tag": lambda lib: {"name": lib.tag_name},
    "book": lambda lib: {"code": lib.book_code},
    "highlight": lambda lib: {"code": lib.highlight_code},
    "highlight_note": lambda lib: {"code": lib.highlight_code},
    "highlight_tag_add": lambda lib: {"code": lib.highlight_code},
    "highlight_tag_remove": lambda lib: {"code": lib.highlight_code, "tag_id": lib.tag_id},
    "highlight_favourite": lambda lib: {"code": lib.highlight_code},
    "highlight_delete": lambda lib: {"code": lib.highlight_code},
    "highlight_undo": lambda lib: {"code": lib.deleted_code},
    "import_report": lambda lib: {"code": lib.import_code},
    "import_progress": lambda lib: {"code": lib.import_code},
    "reader_profile": lambda lib: {"code": lib.profile_code},
    "book_export": lambda lib: {"code": lib.book_code},
    "book_words": lambda lib: {"code": lib.book_code},
    "map_point": lambda lib: {"index": 0},
    "review_card_answer": lambda lib: {"code": lib.card_code},
    "review_card_note": lambda lib: {"code": lib.card_code},
    "review_word_answer": lambda lib: {"code": lib.word_card_code},
    "review_word_note": lambda lib: {"code": lib.word_card_code},
    "api_token_revoke": lambda lib: {"code": lib.token_code},
    # Each tag action gets a tag of its own: alice renaming, merging and deleting hers must
    # not take the tag the other URLs name.
    "tag_rename": lambda lib: {"name": lib.spare_tags["rename"]},
    "tag_merge": lambda lib: {"name": lib.spare_tags["merge"]},
    "tag_delete": lambda lib: {"name": lib.spare_tags["delete"]},
    # Alice's POST without the other book merges nothing (the form sends her back).
    "book_merge_choose": lambda lib: {"code": lib.book_code},
    "book_merge_confirm": lambda lib: {"code": lib.book_code, "other": lib.other_book_code},
    "book_merge": lambda lib: {"code": lib.book_code},
    # Last: alice deleting her book and her import, then bringing them back.
    "book_delete": lambda lib: {"code": lib.book_code},
    "book_bring_back": lambda lib: {"code": lib.book_code},
    "import_delete": lambda lib: {"code": lib.import_code},
    "import_bring_back": lambda lib: {"code": lib.import_code},
    "highlight_bring_back": lambda lib: {"code": lib.deleted_code},
    "deletion_bring_back": lambda lib: {"code": lib.deletion_code},
}
OWN_ROW_QUERIES = {"book_export": "?format=json"}
# Pages of the requester's own library, with a query that finds alice's rows for her (a
# page may echo the query itself, so it is not the secret word).
READER_PAGES: dict[str, str] = {
    "home": "",
    "library": "?q=Papers",
    "map": "",
    "tags": "",
    "connections": "",
    "library_progress": "",
    "import": "",
    # A refusal of a file too large to send, kept as the requester's own import.
    "import_too_large": "",
    "search": "?q=counsel",
    "search_json": "?q=counsel&mode=keyword",
    "kindred": "",
    "sharing_settings": "",
    "settings": "",
    "delete_account": "",
    "words": "",
    "map_data": "",
    "library_export": "?format=json",
    "email_change": "",
    "language_change": "",
    "email_verification_resend": "",
    "password_change": "",
    "password_change_done": "",
    "review": "",
    "review_settings": "",
    "review_words": "",
    "api_tokens": "",
    "deleted": "",
}
# Pages for staff only (the instance's backups): another reader gets a 403 that says whose
# page it is and shows nothing of it.
STAFF_PAGES = {"status"}
# Token-authenticated reads (api/): without a token, 401 for everyone; a reader's session
# never authenticates them. Their ownership by token is tested in tests/api/.
API_ROWS: dict[str, Any] = {
    "api_search": lambda lib: {},
    "api_books": lambda lib: {},
    "api_highlight": lambda lib: {"code": lib.highlight_code},
    "api_connections": lambda lib: {"code": lib.highlight_code},
    "api_book_highlights": lambda lib: {"code": lib.book_code},
}
PUBLIC = {
    "login", "signup", "logout", "healthz", "favicon", "admin:login", "admin:logout", "api_schema",
    "password_reset", "password_reset_done", "password_reset_complete",
    "password_reset_confirm", "review_unsubscribe", "email_verify",
}  # fmt: skip
# Pages that show a logged-out visitor something of their own (the landing), and a reader
# their library.
LANDING = {"home"}
# Public URLs that carry a token of their own (a forged one here).
PUBLIC_KWARGS: dict[str, dict[str, str]] = {
    "password_reset_confirm": {"uidb64": "MQ", "token": "set-password"},
    "review_unsubscribe": {"token": f"{SECRET}-forged"},
    "email_verify": {"token": f"{SECRET}-forged"},
}

# What a hostile second reader posts to every URL: every field any form reads.
BOBS_POST = {
    "note": "bob was here",
    "name": "bob-tag",
    "confirm": "alice",
    "display_name": "Bob",
    "discoverable": "on",
    "answer": "keep",
    "into": "bob-tag",
}


@pytest.fixture
def alice_library(alice: User) -> AliceLibrary:
    data = clippings_file(
        *MEMORY_LIBRARY,
        Entry(SECRET_BOOK, f"Every {SECRET} keeps its own counsel.", location="10-11"),
        Entry(SECRET_BOOK, f"The {SECRET} forgets nothing it was told.", location="20-21"),
        Entry(SECRET_BOOK, "ostensibly", location="30"),  # a word: her words deck
    )
    the_import = clippings_import(reader=alice, data=data, file_name=f"{SECRET}.txt")
    highlight = Highlight.objects.get(reader=alice, location_start=10)
    highlight_note_update(highlight=highlight, note=f"My {SECRET} note")
    tag = highlight_tag(highlight=highlight, name=f"{SECRET}-tag")
    deleted = Highlight.objects.get(reader=alice, location_start=20)
    highlight_delete(highlight=deleted)
    # A delete of a whole book, as Recently deleted groups it (its row is enough here).
    deletion = Deletion.objects.create(
        reader=alice, kind=Deletion.Kind.BOOK, book=deleted.book, at=timezone.now()
    )
    Highlight.objects.filter(pk=deleted.pk).update(deletion=deletion)
    profile = sharing_profile_for(alice)  # not discoverable: nobody may see it
    spare_tags = {}
    for action in ("rename", "merge", "delete"):
        spare_tags[action] = highlight_tag(highlight=highlight, name=f"{action}-me").name
    # Her map and her day's review: rows a URL names by position or by card.
    highlights_embed(ids=list(Highlight.objects.filter(reader=alice).values_list("pk", flat=True)))
    library_map_refresh(reader=alice)
    # A card of another highlight than the one the URLs above delete.
    cards = review_queue(reader=alice, today=timezone.localdate())
    card = next(card for card in cards if card.highlight_id != highlight.pk)
    (word_card,) = word_queue(reader=alice, today=timezone.localdate())
    token, _raw = api_token_create(reader=alice, name=f"{SECRET} token")
    return AliceLibrary(
        book_code=str(highlight.book.code),
        highlight_code=str(highlight.code),
        deleted_code=str(deleted.code),
        deletion_code=str(deletion.code),
        import_code=str(the_import.code),
        tag_id=tag.pk,
        tag_name=tag.name,
        profile_code=str(profile.code),
        tag_count=Tag.objects.filter(reader=alice).count(),
        spare_tags=spare_tags,
        card_code=str(card.code),
        word_card_code=str(word_card.code),
        token_code=str(token.code),
        other_book_code=str(
            Book.objects.filter(reader=alice).exclude(pk=highlight.book_id)[0].code
        ),
    )


def _admin_kwargs(name: str) -> dict[str, Any]:
    action = name.removeprefix("admin:")
    if action == "app_list":
        return {"app_label": "books"}
    if action == "view_on_site":
        highlight = Highlight.objects.filter(text__contains=SECRET).first()
        assert highlight is not None
        content_type = ContentType.objects.get_for_model(Highlight)
        return {"content_type_id": content_type.pk, "object_id": highlight.pk}
    if action == "auth_user_password_change":
        return {"id": User.objects.get(username="alice").pk}
    if action.count("_") >= 2 and action.endswith(("_change", "_delete", "_history")):
        app_label, model_name, _ = action.split("_", 2)
        model = apps.get_model(app_label, model_name)
        row = model.objects.order_by("pk").first()
        return {"object_id": row.pk if row is not None else 1}
    return {}


def _url(name: str, lib: AliceLibrary) -> str:
    if name in OWN_ROWS:
        return reverse(name, kwargs=OWN_ROWS[name](lib)) + OWN_ROW_QUERIES.get(name, "")
    if name in API_ROWS:
        return reverse(name, kwargs=API_ROWS[name](lib))
    if name in PUBLIC:
        return reverse(name, kwargs=PUBLIC_KWARGS.get(name))
    if name in READER_PAGES:
        return reverse(name) + READER_PAGES[name]
    if name in STAFF_PAGES:
        return reverse(name)
    return reverse(name, kwargs=_admin_kwargs(name))


def _unnamed_url(route: str, lib: AliceLibrary) -> str:
    # Django's admin has two unnamed kinds: a model's old-style object URL, which
    # redirects to its change page, and the catch-all.
    if "<path:object_id>" in route:
        return "/" + route.replace("<path:object_id>", "1")
    assert route.startswith("admin/"), f"an unnamed URL pattern outside the admin: {route}"
    return f"/admin/no-such-page-{SECRET}/"


def _bob_sees_nothing(response: Any, lib: AliceLibrary, *, echoed: str = "") -> None:
    """Neither alice's words nor her codes, except in `echoed`: a login redirect's next=
    carries back the URL the visitor asked for, codes and all."""
    body = response.content.decode(errors="replace")
    location = response.get("Location", "").replace(echoed, "")
    assert SECRET not in body
    for code in (lib.book_code, lib.highlight_code, lib.import_code, lib.profile_code):
        assert code not in body
        assert code not in location


def _alice_is_untouched(alice: User, lib: AliceLibrary) -> None:
    assert User.objects.filter(pk=alice.pk).exists()
    highlight = Highlight.objects.get(code=lib.highlight_code)
    assert highlight.deleted_at is None
    assert highlight.note == f"My {SECRET} note"
    assert not highlight.favourite
    assert lib.tag_name in highlight.tags.values_list("name", flat=True)
    assert Highlight.objects.get(code=lib.deleted_code).deleted_at is not None
    assert Import.objects.filter(code=lib.import_code).exists()
    assert Tag.objects.filter(reader=alice).count() == lib.tag_count
    assert not SharingProfile.objects.get(reader=alice).discoverable


@pytest.mark.django_db
class EveryUrlTests:
    def test_it_knows_every_named_pattern(self) -> None:
        unknown = [
            name
            for name, _route in ALL_PATTERNS
            if name
            and name not in OWN_ROWS
            and name not in READER_PAGES
            and name not in API_ROWS
            and name not in PUBLIC
            and name not in STAFF_PAGES
            and not name.startswith("admin:")
        ]
        assert not unknown, f"add a privacy case in tests/test_privacy.py for: {unknown}"

    def test_alice_reaches_every_row_of_her_own(
        self, alice_library: AliceLibrary, alice_client: Client
    ) -> None:
        # Without this, bob's 404s below could come from codes that name nothing.
        for name in OWN_ROWS:
            url = _url(name, alice_library)
            response = alice_client.get(url)
            if name == "reader_profile":  # hers is not shared: she is sent to sharing
                assert SharingProfile.objects.filter(code=alice_library.profile_code).exists()
                assert response.status_code == 302
            elif response.status_code == 405:  # a POST-only action
                assert alice_client.post(url, BOBS_POST | {"discoverable": ""}).status_code in {
                    200,
                    302,
                }, name
            else:
                assert response.status_code == 200, name

    def test_bob_gets_404_for_alices_rows_and_sees_only_his_own_pages(
        self, alice: User, bob: User, alice_library: AliceLibrary, bob_client: Client
    ) -> None:
        # Bob shares his reading: alice's profile is then hidden by her choice, not his.
        sharing_update(reader=bob, discoverable=True, display_name="Bob", excluded_books=[])
        for name, route in ALL_PATTERNS:
            if name in PUBLIC:
                continue
            url = _url(name, alice_library) if name else _unnamed_url(route, alice_library)
            for method in ("get", "post"):
                response = getattr(bob_client, method)(url, BOBS_POST)
                context = f"bob {method.upper()} {url} ({name or route})"
                if name in OWN_ROWS:
                    assert response.status_code in {404, 405}, context
                elif name in STAFF_PAGES:
                    assert response.status_code in {403, 405}, context
                elif name in API_ROWS:
                    assert response.status_code in {401, 405}, context
                elif name.startswith("admin:") or not name:
                    assert response.status_code == 302, context
                    assert response["Location"].startswith(reverse("admin:login")), context
                else:
                    assert response.status_code in {200, 302, 400, 405}, context
                _bob_sees_nothing(response, alice_library)
        _alice_is_untouched(alice, alice_library)

    def test_anonymous_is_sent_to_login_for_every_page(
        self, alice: User, alice_library: AliceLibrary, client: Client
    ) -> None:
        for name, route in ALL_PATTERNS:
            if name in PUBLIC:
                continue
            url = _url(name, alice_library) if name else _unnamed_url(route, alice_library)
            login = reverse("admin:login") if name.startswith("admin:") or not name else "/login/"
            for method in ("get", "post"):
                response = getattr(client, method)(url, BOBS_POST)
                context = f"anonymous {method.upper()} {url} ({name or route})"
                if response.status_code == 405:  # refused before the login check
                    continue
                if name in API_ROWS:  # no token: refused, never redirected to a page
                    assert response.status_code == 401, context
                    _bob_sees_nothing(response, alice_library)
                    continue
                if name in LANDING and method == "get":  # what Exogram is, for anyone
                    assert response.status_code == 200, context
                    _bob_sees_nothing(response, alice_library)
                    continue
                assert response.status_code == 302, context
                assert response["Location"].startswith(login + "?next="), context
                _bob_sees_nothing(response, alice_library, echoed=response["Location"])
        _alice_is_untouched(alice, alice_library)

    def test_the_public_pages_show_no_reader_data(
        self, alice_library: AliceLibrary, client: Client
    ) -> None:
        for name in sorted(PUBLIC):
            response = client.get(_url(name, alice_library))
            # 400: a forged token (an unsubscribe link) is refused with a message.
            assert response.status_code in {200, 302, 400, 405}, name
            _bob_sees_nothing(response, alice_library)

    def test_the_export_pages_without_a_format_show_only_the_readers_own_book(
        self, alice_library: AliceLibrary, alice_client: Client, bob_client: Client
    ) -> None:
        # The walk above asks for a file (?format=json); without a format, or with one
        # Exogram does not write, the same URLs are pages, a book's naming the book.
        book_url = reverse("book_export", kwargs={"code": alice_library.book_code})
        assert SECRET in alice_client.get(book_url).content.decode()
        for query in ("", "?format=pdf"):
            response = bob_client.get(book_url + query)
            assert response.status_code == 404
            _bob_sees_nothing(response, alice_library)
            response = bob_client.get(reverse("library_export") + query)
            assert response.status_code == (400 if query else 200)
            _bob_sees_nothing(response, alice_library)

    def test_search_json_gives_bob_nothing_of_alices(
        self, alice_library: AliceLibrary, alice_client: Client, bob_client: Client
    ) -> None:
        url = reverse("search_json")
        for query in ("counsel", "think forget differences", "narrative life-story"):
            for mode in ("keyword", "meaning", "auto"):
                found = json.loads(bob_client.get(url, {"q": query, "mode": mode}).content)
                assert found == [], (query, mode)
        mine = json.loads(alice_client.get(url, {"q": "counsel", "mode": "keyword"}).content)
        assert mine  # the same query finds alice's own
        by_book = bob_client.get(url, {"q": "counsel", "book": alice_library.book_code})
        assert by_book.status_code in {200, 400, 404}
        _bob_sees_nothing(by_book, alice_library)


@pytest.mark.django_db
class CsrfTests:
    def test_every_post_without_a_token_is_refused(
        self, alice: User, alice_library: AliceLibrary
    ) -> None:
        client = Client(enforce_csrf_checks=True)
        client.force_login(alice)
        for name, _route in ALL_PATTERNS:
            if not name:
                continue
            url = _url(name, alice_library)
            response = client.post(url, BOBS_POST)
            if name in API_ROWS or name == "api_schema":
                # Read with a token, never the cookie, and nothing to write: no CSRF check,
                # the API's own refusal in JSON (a tool cannot read Django's HTML page).
                assert response.status_code == 405, f"POST {url} ({name})"
                assert response["Allow"] == "GET, HEAD", name
                continue
            assert response.status_code == 403, f"POST {url} ({name}) without a CSRF token"
            assert b"CSRF" in response.content, name
        _alice_is_untouched(alice, alice_library)
        alice_library_highlight = Highlight.objects.get(code=alice_library.highlight_code)
        assert alice_library_highlight.note == f"My {SECRET} note"

    def test_the_token_in_the_htmx_header_is_accepted(
        self, alice: User, alice_library: AliceLibrary
    ) -> None:
        # The counter-test: the 403s above are the CSRF check, not a broken view.
        client = Client(enforce_csrf_checks=True)
        client.force_login(alice)
        page = client.get(reverse("highlight", kwargs={"code": alice_library.highlight_code}))
        token = page.cookies["csrftoken"].value
        url = reverse("highlight_favourite", kwargs={"code": alice_library.highlight_code})
        response = client.post(url, HTTP_X_CSRFTOKEN=token, HTTP_HX_REQUEST="true")
        assert response.status_code == 200
        assert Highlight.objects.get(code=alice_library.highlight_code).favourite


@pytest.mark.django_db
def test_a_favourite_toggle_is_alices_own(alice_library: AliceLibrary) -> None:
    # _alice_is_untouched checks favourite stays off; make sure it can turn on at all.
    highlight = Highlight.objects.get(code=alice_library.highlight_code)
    assert highlight_favourite_toggle(highlight=highlight) is True
