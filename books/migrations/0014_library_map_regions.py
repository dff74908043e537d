from django.db import migrations, models


def forget_old_maps(apps, schema_editor):
    # Maps stored before this migration hold a list of points with texts, a format the
    # new page cannot draw; each is laid out again on the reader's next visit.
    apps.get_model("books", "LibraryMap").objects.all().delete()


class Migration(migrations.Migration):

    dependencies = [
        ("books", "0011_import_in_background_and_queue_leases"),
    ]

    operations = [
        migrations.RunPython(forget_old_maps, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="librarymap",
            name="points",
            field=models.JSONField(default=dict),
        ),
        migrations.AddField(
            model_name="librarymap",
            name="regions",
            field=models.JSONField(default=list),
        ),
        migrations.AddField(
            model_name="librarymap",
            name="refreshing_since",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
