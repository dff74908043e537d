from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.utils.translation import gettext_lazy as _


class ImportForm(forms.Form):
    file = forms.FileField(
        label=_("Your clippings file"),
        help_text=_(
            "“My Clippings.txt” from your Kindle's documents folder, or a file (or zip) from "
            "KOReader, a Kobo or Apple Books."
        ),
    )

    def clean_file(self) -> UploadedFile[bytes]:
        upload: UploadedFile[bytes] = self.cleaned_data["file"]
        limit_mb: int = settings.EXOGRAM_MAX_UPLOAD_MB
        if upload.size is not None and upload.size > limit_mb * 1024 * 1024:
            raise forms.ValidationError(
                f"The file is {upload.size / 1024 / 1024:.1f} MB; the limit is {limit_mb} MB."
            )
        return upload


class NoteForm(forms.Form):
    note = forms.CharField(
        label=_("Your note"),
        required=False,
        max_length=10_000,
        widget=forms.Textarea(attrs={"rows": 3}),
    )


class TagForm(forms.Form):
    name = forms.CharField(label=_("Add a tag"), max_length=64)

    def clean_name(self) -> str:
        name = " ".join(self.cleaned_data["name"].split())
        if not name:
            raise forms.ValidationError(_("A tag needs a name."))
        return name


class TagRenameForm(TagForm):
    name = forms.CharField(label=_("New name"), max_length=64)
