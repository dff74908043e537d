from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.utils.formats import number_format
from django.utils.translation import gettext_lazy as _

from books.importing.upload import MEGABYTE, megabytes
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
    file = _FilesField(
        label=_("Your clippings file"),
        help_text=_(
            "“My Clippings.txt” from your Kindle's documents folder, or a file (or zip) from "
            "KOReader, a Kobo or Apple Books."
        ),
        error_messages=form_messages.FILE,
    )

    def clean_file(self) -> list[UploadedFile[bytes]]:
        uploads: list[UploadedFile[bytes]] = self.cleaned_data["file"]
        limit_mb: int = settings.EXOGRAM_MAX_UPLOAD_MB
        for upload in uploads:
            if upload.size is not None and upload.size > limit_mb * MEGABYTE:
                raise forms.ValidationError(
                    _("The file is %(size)s MB; the limit is %(limit)s MB."),
                    code="too_big",
                    params={"size": _megabytes(upload.size), "limit": number_format(limit_mb)},
                )
        return uploads


def _megabytes(size: int) -> str:
    """A size in MB with one decimal, as the reader's language writes numbers ("1,234.5";
    "1 234,5" in Spanish), rounded up: a file just over a 1 MB limit reads "1.1", not "1.0"."""
    return number_format(megabytes(size), 1, force_grouping=True)


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
