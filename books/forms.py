from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.utils.formats import number_format
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from books.importing.upload import MEGABYTE
from books.models import NOTE_MAX_LENGTH
from exogram import form_messages


class _Files(forms.ClearableFileInput):
    allow_multiple_selected = True


class _FilesField(forms.FileField):
    """One file or several (a KOReader reader drops a sidecar per book): a list of them."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("widget", _Files())
        super().__init__(**kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile[bytes]]:
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(one, initial) for one in data] or [single(None, initial)]
        return [single(data, initial)]


class ImportForm(forms.Form):
    # Each file is refused on its own, by the page (books.importing.upload: too large,
    # empty, not a file Exogram reads): one bad file of several never refuses the others.
    file = _FilesField(
        label=_("Your clippings file"),
        help_text=_(
            "“My Clippings.txt” from your Kindle's documents folder, or a file (or zip) from "
            "KOReader, a Kobo or Apple Books."
        ),
        error_messages=form_messages.FILE,
        allow_empty_file=True,
    )


class TooLargeForm(forms.Form):
    """A file the browser did not send because it is larger than the upload limit
    (static/js/upload.js): its name and size, to be refused and kept in Past imports."""

    name = forms.CharField(max_length=1000, error_messages=form_messages.TEXT)
    size = forms.IntegerField(min_value=0, error_messages=form_messages.WHOLE_NUMBER)

    def clean_size(self) -> int:
        size: int = self.cleaned_data["size"]
        limit_mb: int = settings.EXOGRAM_MAX_UPLOAD_MB
        if size <= limit_mb * MEGABYTE:
            # Not too large: the browser sends such a file itself.
            raise forms.ValidationError(_("This file is within the limit: upload it."))
        return size


def note_too_long(length: int, *, definition: bool = False) -> str:
    """What the highlight page and the review say of a note over the limit: the limit and
    how long this one is, as the reader's language writes numbers ("10,000"; "10 000")."""
    numbers = {
        "limit": number_format(NOTE_MAX_LENGTH, force_grouping=True),
        "count": number_format(length, force_grouping=True),
    }
    if definition:
        message = gettext("Definitions can be up to %(limit)s characters; this one has %(count)s.")
    else:
        message = gettext("Notes can be up to %(limit)s characters; this one has %(count)s.")
    return message % numbers


class NoteField(forms.CharField):
    """A note (or a word's definition) as the reader typed it, its line breaks as LF: a
    browser sends a textarea's as CRLF but counts each as one character for its
    `maxlength`, so a note the page let through must not be refused for its line breaks."""

    def __init__(self, *, definition: bool = False, **kwargs: Any) -> None:
        self.definition = definition
        kwargs.setdefault("required", False)
        kwargs.setdefault("error_messages", form_messages.TEXT)
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> str:
        text: str = super().to_python(value) or ""
        return text.replace("\r\n", "\n").replace("\r", "\n")

    def validate(self, value: Any) -> None:
        super().validate(value)
        if len(value) > NOTE_MAX_LENGTH:
            message = note_too_long(len(value), definition=self.definition)
            raise forms.ValidationError(message, code="max_length")


class NoteForm(forms.Form):
    note = NoteField(label=_("Your note"))


class TagForm(forms.Form):
    name = forms.CharField(label=_("Add a tag"), max_length=64, error_messages=form_messages.TEXT)

    def clean_name(self) -> str:
        name = " ".join(self.cleaned_data["name"].split())
        if not name:
            raise forms.ValidationError(_("A tag needs a name."))
        return name


class TagRenameForm(TagForm):
    name = forms.CharField(label=_("New name"), max_length=64, error_messages=form_messages.TEXT)


class BookMergeForm(forms.Form):
    """The merge page's POST: the other book, and the book whose title and authors stay
    (the page's book or the other one, checked by the view)."""

    other = forms.UUIDField(error_messages=form_messages.BOOK)
    keep = forms.UUIDField(error_messages=form_messages.BOOK)
