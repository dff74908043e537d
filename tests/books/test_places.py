"""One way to write where a highlight is, on the highlight pages and the import report."""

import pytest
from django.template import Context, Template

from books.places import location_span


@pytest.mark.parametrize(
    ("start", "end", "written"),
    [
        (1201, None, "1201"),
        (1201, 1201, "1201"),
        ("1201", "1201", "1201"),
        ("1201", "", "1201"),
        (1201, 1205, "1201\N{EN DASH}1205"),
        (None, None, ""),
    ],
)
def test_a_location_is_one_number_unless_it_is_a_range(
    start: object, end: object, written: str
) -> None:
    assert location_span(start, end) == written


def test_the_template_filter_writes_the_same() -> None:
    template = Template("{% load places %}{{ start|location_span:end }}")
    assert template.render(Context({"start": 1201, "end": 1201})) == "1201"
    assert template.render(Context({"start": 7, "end": 9})) == "7\N{EN DASH}9"
