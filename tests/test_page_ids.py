"""Every page names each element id once: a label's `for`, a link's `#fragment` and a
screen reader all find the element by its id, and with two of one name they find the first
(on /settings/, "Your password" of the delete-account form focused the e-mail form's field).

The pages are those of tests/test_privacy.py's walk of the URL resolver, as alice sees
them with her library and as an anonymous visitor sees the public ones, in English and in
Spanish.
"""

from collections import Counter
from html.parser import HTMLParser

import pytest
from django.test import Client

from tests.test_privacy import (  # noqa: F401  (alice_library: the fixture)
    OWN_ROWS,
    PUBLIC,
    READER_PAGES,
    AliceLibrary,
    _url,
    alice_library,
)

SPANISH = {"Accept-Language": "es-ES,es;q=0.9"}


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: Counter[str] = Counter()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value is not None:
                self.ids[value] += 1


def _repeated_ids(page: str) -> list[str]:
    parser = _Ids()
    parser.feed(page)
    return sorted(name for name, count in parser.ids.items() if count > 1)


def _html_pages(client: Client, names: list[str], lib: AliceLibrary) -> dict[str, str]:
    pages = {}
    for name in names:
        for headers in ({}, SPANISH):
            url = _url(name, lib)
            response = client.get(url, headers=headers)
            if response.status_code == 200 and response["Content-Type"].startswith("text/html"):
                pages[f"{url} {headers}"] = response.content.decode()
    return pages


@pytest.mark.django_db
class PageIdsTests:
    def test_the_settings_page_gives_each_form_its_own_ids(
        self,
        alice_library: AliceLibrary,  # noqa: F811
        alice_client: Client,
    ) -> None:
        page = alice_client.get("/settings/").content.decode()
        assert _repeated_ids(page) == []
        assert 'for="id_email_password"' in page
        assert 'for="id_delete_password"' in page

    def test_every_page_names_each_id_once(
        self,
        alice_library: AliceLibrary,  # noqa: F811
        alice_client: Client,
        client: Client,
    ) -> None:
        pages = _html_pages(alice_client, [*READER_PAGES, *OWN_ROWS], alice_library)
        pages |= _html_pages(client, sorted(PUBLIC), alice_library)
        # The walk reaches the settings area and the pages of many forms.
        for path in (
            "/settings/ ",
            "/settings/password/ ",
            "/settings/api-tokens/ ",
            "/review/settings/ ",
        ):
            assert any(url.startswith(path) for url in pages), path
        repeated = {url: ids for url, page in pages.items() if (ids := _repeated_ids(page))}
        assert repeated == {}
