from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from accounts.commands import reader_named


class Command(BaseCommand):
    help = (
        "Serve a reader's library to an AI assistant: a Model Context Protocol server over "
        "stdio (for Claude Code, Cursor, OpenCode, …). See the README for the config snippet."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the reader's username")

    def handle(self, *args: Any, **options: Any) -> None:
        # Imported here: the SDK is only needed by this command.
        from books.mcp_server import serve_stdio

        serve_stdio(reader_named(options["user"]))
