from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from api.models import ApiToken
from api.services import api_token_revoke
from exogram.counting import counted


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin[ApiToken]):
    """An operator revokes a leaked token here. Nothing is made or edited: a token is made
    by its reader (or `manage.py tokens --create`), which shows the secret that once; only
    its hash is stored, and that is never shown either."""

    list_display = ["prefix", "name", "reader", "created", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["prefix", "name", "reader__username"]
    list_select_related = ["reader"]
    exclude = ["token_hash"]
    readonly_fields = ["reader", "code", "name", "prefix", "created", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Revoke the selected tokens", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        revoked = 0
        for token in queryset.filter(revoked_at__isnull=True):
            api_token_revoke(token=token)
            revoked += 1
        self.message_user(request, f"Revoked {counted(revoked, 'token')}.")
