from django.apps import AppConfig


class BooksConfig(AppConfig):
    name = "books"

    def ready(self) -> None:
        # books.tasks answers what services announce (books.events) by sending tasks: it
        # must listen in every process that imports or embeds, web and worker alike.
        from books import tasks  # noqa: F401
