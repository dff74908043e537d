from django.apps import AppConfig


class AffinityConfig(AppConfig):
    name = "affinity"
