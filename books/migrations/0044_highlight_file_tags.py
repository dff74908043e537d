"""Each highlight keeps the tags the last file that listed its tags named (a Readwise CSV's
column, an Exogram export's list): an import adds only the tags its file names anew, as
with a note's hashtags, so a tag the reader deleted or renamed stays so when the file comes
again (books.importing.enrich). A nullable column, added without rewriting a row; a
highlight imported before has none, and its next such file adds its tags once."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("books", "0043_note_hashtags_tagged"),
    ]

    operations = [
        migrations.AddField(
            model_name="highlight",
            name="file_tags",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
