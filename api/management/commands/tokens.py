from contextlib import suppress
from typing import Any
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q

from accounts.commands import reader_named
from accounts.models import User
from api.models import ApiToken
from api.services import api_token_create, api_token_revoke
from exogram.counting import counted


def token_named(reader: User, code_or_prefix: str) -> ApiToken:
    """The reader's one token with this code, or whose prefix (as listed) starts so."""
    text = code_or_prefix.strip()
    match = Q(prefix__startswith=text) if text else Q(pk__in=[])
    with suppress(ValueError):
        match |= Q(code=UUID(text))
    found = list(ApiToken.objects.filter(match, reader=reader)[:2])
    if not found:
        raise CommandError(f"{reader.username} has no token {text!r}.")
    if len(found) > 1:
        raise CommandError(f"More than one of {reader.username}'s tokens starts {text!r}.")
    return found[0]


class Command(BaseCommand):
    help = (
        "List a reader's API tokens, make one (shown this once) or revoke one, as their API "
        "tokens page does."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the reader's username")
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--create", metavar="LABEL", help="make a token named LABEL")
        action.add_argument(
            "--revoke", metavar="CODE_OR_PREFIX", help="revoke the token with this code or prefix"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        reader = reader_named(options["user"])
        if options["create"] is not None:
            token, raw = api_token_create(reader=reader, name=options["create"])
            self.stdout.write(f"Made “{token.name}” for {reader.username} (code {token.code}).")
            self.stdout.write("The token, shown this once (only its hash is kept):")
            self.stdout.write(raw)
            return
        if options["revoke"] is not None:
            token = token_named(reader, options["revoke"])
            if not token.active:
                self.stdout.write(f"“{token.name}” ({token.prefix}…) was revoked already.")
                return
            api_token_revoke(token=token)
            self.stdout.write(
                f"Revoked “{token.name}” ({token.prefix}…): tools using it can no longer "
                f"read {reader.username}'s library."
            )
            return
        tokens = list(ApiToken.objects.filter(reader=reader))
        self.stdout.write(f"{reader.username} has {counted(len(tokens), 'API token')}.")
        for token in tokens:
            state = "active" if token.active else f"revoked {token.revoked_at:%Y-%m-%d %H:%M}"
            used = f"{token.last_used_at:%Y-%m-%d %H:%M}" if token.last_used_at else "never"
            self.stdout.write(
                f"  {token.prefix}…  {token.name}  made {token.created:%Y-%m-%d}  "
                f"last used {used}  {state}  code {token.code}"
            )
