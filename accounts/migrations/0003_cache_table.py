# The table of Django's database cache (CACHES in settings: LOCATION "exogram_cache"), the
# same schema `manage.py createcachetable` makes. Created by a migration so that every
# installation has it after `migrate`, the one step every deployment already runs; it
# stays empty where CACHE_URL points the cache at Redis.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial")]

    operations = [
        migrations.RunSQL(
            sql=[
                'CREATE TABLE IF NOT EXISTS "exogram_cache" ('
                '"cache_key" varchar(255) NOT NULL PRIMARY KEY, '
                '"value" text NOT NULL, '
                '"expires" timestamp with time zone NOT NULL)',
                'CREATE INDEX IF NOT EXISTS "exogram_cache_expires" ON "exogram_cache" ("expires")',
            ],
            reverse_sql=['DROP TABLE IF EXISTS "exogram_cache"'],
        )
    ]
