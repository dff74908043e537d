"""A bare JSON-RPC client for `manage.py mcp`, over the subprocess's stdin and stdout.

Bare on purpose: the tests see the wire itself (ids, `error.code`, `isError`), not what an
SDK client makes of it.
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.worker import ROOT, share_model_folder, test_database_url

PROTOCOL_VERSION = "2025-06-18"


class McpProcess:
    def __init__(self, username: str, *, data_dir: Path, extra_env: dict[str, str] | None = None):
        env = {
            **os.environ,
            "DEBUG": "1",
            "DATABASE_URL": test_database_url(),
            "EXOGRAM_DATA_DIR": str(data_dir),
            **(extra_env or {}),
        }
        share_model_folder(data_dir)
        self.stderr = (data_dir / "mcp.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "mcp", "--user", username],
            cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
        )  # fmt: skip
        self._id = 0

    def send(self, message: dict[str, Any] | list[Any]) -> None:
        self.send_line(json.dumps(message).encode())

    def send_line(self, line: bytes) -> None:
        """One line as written, whether or not it is JSON."""
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(f"the server closed stdout; exit code {self.process.poll()}")
        message: dict[str, Any] = json.loads(line)
        return message

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            answer = self.receive()
            if answer.get("id") == self._id:
                return answer

    def initialize(self) -> dict[str, Any]:
        answer = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "exogram-tests", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            code = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.stderr.close()
        return code


def tool_answer(response: dict[str, Any]) -> dict[str, Any]:
    """The structured answer of a successful tools/call."""
    assert "error" not in response, response
    result = response["result"]
    assert not result.get("isError"), result
    answer: dict[str, Any] = result["structuredContent"]
    assert json.loads(result["content"][0]["text"]) == answer
    return answer
