from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile


class ImportForm(forms.Form):
    file = forms.FileField(
        label="Your clippings file",
        help_text="'My Clippings.txt' from your Kindle's documents folder.",
    )

    def clean_file(self) -> UploadedFile[bytes]:
        upload: UploadedFile[bytes] = self.cleaned_data["file"]
        limit_mb: int = settings.EXOGRAM_MAX_UPLOAD_MB
        if upload.size is not None and upload.size > limit_mb * 1024 * 1024:
            raise forms.ValidationError(
                f"The file is {upload.size / 1024 / 1024:.1f} MB; the limit is {limit_mb} MB."
            )
        return upload
