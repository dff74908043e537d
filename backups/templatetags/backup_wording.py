"""`{{ run.error|backup_error }}`: a failed backup's reason, in the staff member's language."""

from django import template

from backups.wording import translated

register = template.Library()


@register.filter
def backup_error(message: object) -> str:
    return translated(str(message)) if message else ""
