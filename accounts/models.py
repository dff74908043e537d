from django.contrib.auth.models import AbstractUser


class User(AbstractUser):
    """A reader. Custom from the first migration so fields can be added without pain."""
