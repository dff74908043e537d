from collections.abc import Mapping
from typing import Any

from django import forms
from django.db.models import QuerySet
from django.http import QueryDict
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from affinity.models import SharingProfile
from books.models import Book
from exogram import form_messages

# The two buttons of the books' list that tick every book or none, then save: a library of
# hundreds of books is not ticked one by one, and they work without JavaScript.
KEEP_ALL = "all"
KEEP_NONE = "none"


class SharingForm(forms.Form):
    discoverable = forms.BooleanField(
        label=_("Share my reading with other readers who share theirs"),
        required=False,
        help_text=_("Off by default. Turned off, you leave everyone's kindred readers at once."),
    )
    display_name = forms.CharField(
        label=_("Display name"),
        max_length=60,
        required=False,
        help_text=_("The only name other readers see. Your username and email are never shown."),
        error_messages=form_messages.TEXT,
    )
    excluded_books = forms.ModelMultipleChoiceField(
        label=_("Books to keep to yourself"),
        queryset=Book.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Never counted in where your reading sits, never shown to anyone."),
        error_messages=form_messages.BOOKS,
    )

    def __init__(
        self, data: Mapping[str, Any] | None = None, *args: Any, reader: User, **kwargs: Any
    ) -> None:
        # Only the reader's own books can be chosen: another reader's book id is invalid.
        books: QuerySet[Book] = Book.objects.filter(reader=reader).order_by("title_sort", "pk")
        asked = data.get("keep", "") if isinstance(data, QueryDict) else ""
        self.keep = asked if asked in (KEEP_ALL, KEEP_NONE) else ""  # any other: a plain save
        if isinstance(data, QueryDict) and self.keep:
            data = data.copy()
            chosen = books.values_list("pk", flat=True) if self.keep == KEEP_ALL else []
            data.setlist("excluded_books", [str(pk) for pk in chosen])
        super().__init__(data, *args, **kwargs)
        self.reader = reader
        field = self.fields["excluded_books"]
        assert isinstance(field, forms.ModelMultipleChoiceField)
        field.queryset = books

    def clean_display_name(self) -> str:
        name: str = " ".join(self.cleaned_data["display_name"].split())
        return name

    def clean(self) -> dict[str, Any] | None:
        cleaned = super().clean()
        if cleaned is None:
            return None
        name = cleaned.get("display_name", "")
        if cleaned.get("discoverable"):
            if not name:
                self.add_error("display_name", _("Choose a display name to share your reading."))
            elif (
                SharingProfile.objects.filter(discoverable=True, display_name__iexact=name)
                .exclude(reader=self.reader)
                .exists()
            ):
                self.add_error("display_name", _("Another reader shares under this name already."))
        return cleaned
