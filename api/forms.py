from django import forms


class TokenForm(forms.Form):
    name = forms.CharField(
        label="Name", max_length=100, help_text="Where you will use it, e.g. “laptop scripts”."
    )
