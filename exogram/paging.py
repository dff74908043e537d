"""The pages of a reader's lists, in one place.

Django's `Paginator.get_page` shows the last page for a number below 1: `?page=0` or
`?page=-1` (a hand-edited link) opened page 120 of 120 of the connections. Here, as on the
search page, it is the first; a page past the last is still the last, and a page that is
no number (`?page=abc`) the first.
"""

from typing import TypeVar

from django.core.paginator import Page, Paginator

_T = TypeVar("_T")


class ListPaginator(Paginator[_T]):
    def get_page(self, number: int | float | str | None) -> Page[_T]:
        try:
            below_first = number is not None and int(number) < 1
        except (ValueError, OverflowError):
            below_first = False  # not a number: Django's own answer, the first page
        return super().get_page(1 if below_first else number)
