from django.apps import AppConfig


class BackupsConfig(AppConfig):
    name = "backups"
    verbose_name = "Backups"
    default_auto_field = "django.db.models.BigAutoField"
