from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.utils.translation import gettext_lazy as _

from books.importing.upload import MEGABYTE
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


class NoteForm(forms.Form):
    note = forms.CharField(
        label=_("Your note"),
        required=False,
        max_length=10_000,
        widget=forms.Textarea(attrs={"rows": 3}),
        error_messages=form_messages.TEXT,
    )


class TagForm(forms.Form):
    name = forms.CharField(label=_("Add a tag"), max_length=64, error_messages=form_messages.TEXT)

    def clean_name(self) -> str:
        name = " ".join(self.cleaned_data["name"].split())
        if not name:
            raise forms.ValidationError(_("A tag needs a name."))
        return name


class TagRenameForm(TagForm):
    name = forms.CharField(label=_("New name"), max_length=64, error_messages=form_messages.TEXT)
