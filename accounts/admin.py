from collections.abc import Sequence

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.forms import AdminLoginForm
from accounts.models import User
from accounts.services import reader_delete_request
from exogram.counting import counted

# The admin's login says when the throttle holds an account, as the reader's does.
admin.site.login_form = AdminLoginForm


@admin.register(User)
class ReaderAdmin(UserAdmin[User]):
    """Django's user admin, except that deleting a reader is the reader's own account
    delete (accounts.services.reader_delete_request): closed at once, then deleted in
    batches, in the background for a large library. Django's cascade would delete 200,000
    highlights in one request, past the web server's timeout, and its confirmation page
    would first list every one of them."""

    def get_deleted_objects(
        self, objs: Sequence[User] | QuerySet[User], request: HttpRequest
    ) -> tuple[list[str], dict[str, int], set[str], list[str]]:
        # A summary instead of Django's collector, which reads every related row. Deleting
        # users needs only the user delete permission, as the reader's own delete needs none.
        readers = list(objs)
        summary = [
            f"{reader.username}: {counted(reader.highlights.count(), 'highlight')}, "
            f"{counted(reader.books.count(), 'book')}"
            for reader in readers
        ]
        return summary, {"readers": len(readers)}, set(), []

    def delete_model(self, request: HttpRequest, obj: User) -> None:
        reader_delete_request(reader=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        for reader in queryset:
            reader_delete_request(reader=reader)
