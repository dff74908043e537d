"""`manage.py check --deploy` under the values of a production server behind TLS."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client, RequestFactory
from django.views.defaults import server_error

from accounts.models import User

ROOT = Path(__file__).resolve().parent.parent

BEHIND_TLS = {
    "SECURE_COOKIES": "1",
    "SECURE_SSL_REDIRECT": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "ALLOWED_HOSTS": "exogram.example.org",
}


def _check_deploy(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        # DJANGO_ALLOW_ASYNC_UNSAFE: set by the browser tests for themselves, never deployed.
        if k not in {"DEBUG", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE", *BEHIND_TLS}
        and not k.startswith("SECURE_")
    }
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={**clean, "EXOGRAM_DATA_DIR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        check=False,
    )


class CheckDeployTests:
    def test_it_is_clean_behind_tls_with_the_generated_key(self, tmp_path: Path) -> None:
        result = _check_deploy(tmp_path, **BEHIND_TLS)
        assert result.returncode == 0, result.stderr
        assert "no issues" in result.stdout

    def test_it_only_asks_for_tls_when_served_over_plain_http(self, tmp_path: Path) -> None:
        # `make run`'s own values: everything but what needs a certificate is in place.
        result = _check_deploy(tmp_path)
        assert result.returncode != 0
        warned = {
            line.split(")")[0].split("(")[-1]
            for line in result.stderr.splitlines()
            if "(security." in line
        }
        assert warned == {"security.W004", "security.W008", "security.W012", "security.W016"}

    def test_it_warns_with_debug_on(self, tmp_path: Path) -> None:
        result = _check_deploy(tmp_path, DEBUG="1", **BEHIND_TLS)
        assert "security.W018" in result.stderr


@pytest.mark.django_db
class ProductionResponseTests:
    def test_it_sends_the_security_headers_on_every_page(self, alice_client: Client) -> None:
        for url in ("/", "/login/", "/library/", "/no-such-page/"):
            response = alice_client.get(url)
            policy = response["Content-Security-Policy"]
            assert "script-src 'self'" in policy
            assert "style-src 'self'" in policy
            assert "'unsafe-inline'" not in policy
            assert "frame-ancestors 'none'" in policy
            assert response["X-Frame-Options"] == "DENY"
            assert response["X-Content-Type-Options"] == "nosniff"
            assert response["Referrer-Policy"] == "same-origin"

    def test_a_signed_in_readers_pages_are_not_stored_by_any_cache(
        self, alice_client: Client
    ) -> None:
        # Found by a hostile walk: no Cache-Control, so Back after logging out showed them.
        for url in ("/", "/library/", "/tags/", "/map/", "/import/"):
            response = alice_client.get(url)
            assert response.status_code == 200, url
            assert response["Cache-Control"] == "private, no-store", url
            assert "camera=()" in response["Permissions-Policy"]

    def test_a_response_with_its_own_cache_control_keeps_it(self, alice_client: Client) -> None:
        # never_cache's own header, left as it is.
        response = alice_client.get("/healthz")
        assert (
            response["Cache-Control"] == "max-age=0, no-cache, no-store, must-revalidate, private"
        )

    def test_an_export_keeps_its_own_headers(self, alice: User, alice_client: Client) -> None:
        export = alice_client.get("/export/?format=csv")
        assert export.status_code == 200
        assert export["Content-Disposition"].startswith("attachment")
        assert "no-store" in export["Cache-Control"]

    def test_an_anonymous_page_is_left_to_the_browser(self, client: Client) -> None:
        response = client.get("/no-such-page/")
        assert "Cache-Control" not in response
        assert "microphone=()" in response["Permissions-Policy"]

    def test_it_shows_its_own_404_page_not_the_technical_one(self, alice_client: Client) -> None:
        response = alice_client.get("/highlights/00000000-0000-0000-0000-000000000000/")
        assert response.status_code == 404
        body = response.content.decode()
        assert "Nothing here" in body
        assert "URLconf" not in body  # Django's DEBUG page lists every URL pattern

    def test_it_shows_its_own_500_page(self, rf: RequestFactory) -> None:
        response = server_error(rf.get("/"))
        assert response.status_code == 500
        assert "Something went wrong" in response.content.decode()
        assert "Traceback" not in response.content.decode()

    def test_its_templates_hold_no_inline_script_or_style(self) -> None:
        inline = re.compile(r"<script(?![^>]*\bsrc=)|\son[a-z]+=|\sstyle=|javascript:", re.I)
        offenders = [
            f"{path.relative_to(ROOT)}: {match.group(0)!r}"
            for path in sorted((ROOT / "templates").rglob("*.html"))
            for match in inline.finditer(path.read_text())
        ]
        assert offenders == []


@pytest.mark.django_db
class HealthzTests:
    def test_it_answers_ok_when_the_database_and_broker_answer(self, client: Client) -> None:
        response = client.get("/healthz")
        assert response.status_code == 200
        assert response.json() == {"database": "ok", "broker": "ok", "worker": "never seen"}
        assert "no-cache" in response["Cache-Control"]

    def test_it_names_a_broker_that_does_not_answer(self, client: Client) -> None:
        from exogram.celery import app

        saved = (app.conf.broker_url, app.conf.broker_transport_options)
        # A Redis port with nothing listening on this machine.
        app.conf.update(broker_url="redis://127.0.0.1:9/0", broker_transport_options={})
        try:
            response = client.get("/healthz")
        finally:
            app.conf.update(broker_url=saved[0], broker_transport_options=saved[1])
        assert response.status_code == 503
        assert response.json() == {
            "database": "ok",
            "broker": "unavailable",
            "worker": "never seen",
        }


class EnvExampleTests:
    def test_it_trusts_no_forwarded_header_when_no_proxy_is_in_front(self) -> None:
        # The compose file publishes the web server itself: a client's own X-Forwarded-For
        # would choose the address the login throttle counts.
        compose = (ROOT / "docker" / "docker-compose.yml").read_text()
        services = re.findall(r"^  ([a-z-]+):$", compose, re.MULTILINE)
        assert not {"nginx", "caddy", "traefik", "proxy"} & set(services)
        values = dict(
            line.split("=", 1)
            for line in (ROOT / "docker" / ".env.example").read_text().splitlines()
            if "=" in line and not line.startswith("#")
        )
        assert values["TRUST_X_FORWARDED_FOR"] == "0"
        assert values["TRUST_X_FORWARDED_PROTO"] == "0"
        # Plain HTTP on the published port: a redirect to HTTPS would lead nowhere.
        assert values["SECURE_SSL_REDIRECT"] == "0"
        # Published to the network: nobody can make an account but whom the admin adds.
        assert values["EXOGRAM_SIGNUP"] == "closed"
