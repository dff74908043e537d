import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.core.cache import cache
from django.test import Client, override_settings
from django.urls import reverse

from accounts.models import User
from accounts.views import SIGNUP_TRIES_PER_ACCOUNT
from tests.conftest import PASSWORD


def _login(client: Client, username: str, password: str, address: str = "10.0.0.1"):  # type: ignore[no-untyped-def]
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every password hash computed during the test (what a guesser costs the server)."""
    seen: list[str] = []
    original = PBKDF2PasswordHasher.encode

    def counting(self: PBKDF2PasswordHasher, password: str, salt: str, iterations=None) -> str:  # type: ignore[no-untyped-def]
        seen.append(password)
        return original(self, password, salt, iterations)

    monkeypatch.setattr(PBKDF2PasswordHasher, "encode", counting)
    return seen


@pytest.mark.django_db
class LoginThrottleTests:
    def test_it_locks_an_account_after_five_failures_without_checking_more(
        self, client: Client, alice: User, hashes: list[str]
    ) -> None:
        for attempt in range(5):
            response = _login(client, "alice", f"wrong {attempt}")
        assert response.status_code == 429
        assert "Too many failed logins for this account" in response.content.decode()
        assert "15 minutes" in response.content.decode()
        checked = len(hashes)
        for _ in range(45):
            response = _login(client, "alice", "another guess")
            assert response.status_code == 429
        assert len(hashes) == checked  # 45 more guesses, not one more hash
        # Even the right password waits: the guesser must not learn it was right.
        assert _login(client, "alice", PASSWORD).status_code == 429
        assert client.get(reverse("library")).status_code == 302

    def test_a_refused_login_is_the_login_page_in_the_readers_language(
        self, client: Client, alice: User
    ) -> None:
        for attempt in range(5):
            _login(client, "alice", f"wrong {attempt}")
        refused = client.post(
            reverse("login"),
            {"username": "alice", "password": "again"},
            headers={"Accept-Language": "es"},
            REMOTE_ADDR="10.0.0.1",
        )
        assert refused.status_code == 429
        page = refused.content.decode()
        assert "Demasiados intentos fallidos para esta cuenta desde tu dirección de red." in page
        assert "15 minutos" in page
        assert 'class="errorlist' in page
        assert '<header class="site">' in page
        assert 'name="username" value="alice"' in page

    def test_a_right_password_from_an_address_that_has_not_failed_is_never_refused(
        self, client: Client, alice: User
    ) -> None:
        for _ in range(5):
            _login(client, "alice", "wrong", address="203.0.113.9")  # anyone, anywhere
        assert _login(client, "alice", PASSWORD, address="203.0.113.9").status_code == 429
        # The owner, from home: not locked out by a stranger's guesses.
        assert _login(client, "alice", PASSWORD, address="198.51.100.7").status_code == 302

    def test_an_account_being_guessed_gives_each_further_address_one_guess(
        self, client: Client, alice: User, hashes: list[str]
    ) -> None:
        for _ in range(5):
            _login(client, "alice", "wrong", address="203.0.113.9")
        checked = len(hashes)
        _login(client, "alice", "guess", address="203.0.113.10")
        assert len(hashes) == checked + 1  # its one guess was checked
        checked = len(hashes)
        refused = _login(client, "alice", PASSWORD, address="203.0.113.10")
        assert refused.status_code == 429
        assert "Too many failed logins for this account" in refused.content.decode()
        assert len(hashes) == checked  # no hash for the second guess
        assert _login(client, "alice", PASSWORD, address="192.0.2.1").status_code == 302

    def test_it_counts_the_username_in_any_case(self, client: Client, alice: User) -> None:
        for name in ["alice", "ALICE", "Alice ", "aLice", "alicE"]:
            _login(client, name, "wrong")
        assert _login(client, "alice", PASSWORD).status_code == 429

    def test_it_lets_the_reader_in_again_once_the_window_passes(
        self, client: Client, alice: User
    ) -> None:
        for _ in range(5):
            _login(client, "alice", "wrong")
        cache.clear()  # what the cache does when the lockout's timeout expires
        assert _login(client, "alice", PASSWORD).status_code == 302

    def test_it_forgets_earlier_failures_after_a_success(self, client: Client, alice: User) -> None:
        for _ in range(4):
            _login(client, "alice", "wrong")
        assert _login(client, "alice", PASSWORD).status_code == 302
        client.post(reverse("logout"))
        for _ in range(4):
            assert _login(client, "alice", "wrong").status_code == 200
        assert _login(client, "alice", PASSWORD).status_code == 302

    def test_it_does_not_lock_bob_out_for_alices_failures(
        self, client: Client, alice: User, bob: User
    ) -> None:
        for _ in range(5):
            _login(client, "alice", "wrong")
        assert _login(client, "bob", PASSWORD).status_code == 302

    @override_settings(EXOGRAM_LOGIN_FAILURES_PER_IP=8)
    def test_it_limits_one_address_across_many_accounts(
        self, client: Client, alice: User, bob: User
    ) -> None:
        for number in range(8):
            _login(client, f"someone{number}", "wrong", address="203.0.113.9")
        response = _login(client, "bob", PASSWORD, address="203.0.113.9")
        assert response.status_code == 429
        assert "from your network address" in response.content.decode()
        # Another address is not held back by this one.
        assert _login(client, "bob", PASSWORD, address="198.51.100.7").status_code == 302

    @override_settings(EXOGRAM_LOGIN_FAILURES_PER_IP=3, EXOGRAM_TRUST_X_FORWARDED_FOR=True)
    def test_it_counts_the_address_the_proxy_appended(self, client: Client, bob: User) -> None:
        for number in range(3):
            client.post(
                reverse("login"),
                {"username": f"x{number}", "password": "wrong"},
                REMOTE_ADDR="127.0.0.1",
                HTTP_X_FORWARDED_FOR=f"1.2.3.{number}, 203.0.113.9",  # first part is forged
            )
        held = client.post(
            reverse("login"),
            {"username": "bob", "password": PASSWORD},
            REMOTE_ADDR="127.0.0.1",
            HTTP_X_FORWARDED_FOR="9.9.9.9, 203.0.113.9",
        )
        assert held.status_code == 429

    def test_it_throttles_the_admin_login_too(self, client: Client) -> None:
        User.objects.create_superuser("root", password=PASSWORD)
        for _ in range(5):
            client.post(reverse("admin:login"), {"username": "root", "password": "wrong"})
        response = client.post(reverse("admin:login"), {"username": "root", "password": PASSWORD})
        assert "Too many failed logins for this account" in response.content.decode()
        assert client.get(reverse("admin:index")).status_code == 302


@pytest.mark.django_db
class PasswordValidationTests:
    @pytest.mark.parametrize(
        ("password", "message"),
        [
            ("short1", "too short"),
            ("password123", "too common"),
            ("38472910573829", "entirely numeric"),
            ("carolcarol", "too similar to the username"),
        ],
    )
    def test_it_refuses_a_weak_password_at_signup(
        self, client: Client, password: str, message: str
    ) -> None:
        response = client.post(
            reverse("signup"),
            {"username": "carolcarol", "password1": password, "password2": password},
        )
        assert response.status_code == 200
        assert message in response.content.decode()
        assert not User.objects.filter(username="carolcarol").exists()


@pytest.mark.django_db
class ClosedSignupTests:
    @override_settings(EXOGRAM_SIGNUP="closed")
    def test_it_refuses_new_accounts_and_says_whom_to_ask(self, client: Client) -> None:
        page = client.get(reverse("signup"))
        assert page.status_code == 403
        assert "Sign-up is closed" in page.content.decode()
        response = client.post(
            reverse("signup"), {"username": "carol", "password1": PASSWORD, "password2": PASSWORD}
        )
        assert response.status_code == 403
        assert not User.objects.filter(username="carol").exists()
        assert reverse("signup") not in client.get(reverse("login")).content.decode()

    def test_it_is_open_by_default(self, client: Client) -> None:
        assert client.get(reverse("signup")).status_code == 200
        assert reverse("signup") in client.get(reverse("login")).content.decode()


@pytest.mark.django_db
class SignupLimitsTests:
    @override_settings(EXOGRAM_SIGNUPS_PER_HOUR=2)
    def test_it_limits_the_accounts_one_address_makes(self, client: Client) -> None:
        for number in range(2):
            made = Client().post(
                reverse("signup"),
                {"username": f"reader{number}", "password1": PASSWORD, "password2": PASSWORD},
                REMOTE_ADDR="203.0.113.9",
            )
            assert made.status_code == 302
        refused = client.post(
            reverse("signup"),
            {"username": "reader9", "password1": PASSWORD, "password2": PASSWORD},
            REMOTE_ADDR="203.0.113.9",
        )
        assert refused.status_code == 429
        assert not User.objects.filter(username="reader9").exists()

    @override_settings(EXOGRAM_SIGNUPS_PER_HOUR=1)
    def test_a_refused_sign_up_is_the_sign_up_page_again_with_why_and_what_was_typed(
        self, client: Client
    ) -> None:
        # It was a bare text page, unstyled, with no way back and the form lost.
        address = {"REMOTE_ADDR": "203.0.113.9"}
        data = {"username": "lectora", "password1": PASSWORD, "password2": PASSWORD}
        Client().post(reverse("signup"), {**data, "username": "first"}, **address)
        for language, said in (
            ("en", "Too many accounts were made from your network address in the last hour."),
            ("es", "Se han creado demasiadas cuentas desde tu dirección de red en la última hora."),
        ):
            refused = client.post(
                reverse("signup"), data, headers={"Accept-Language": language}, **address
            )
            assert refused.status_code == 429
            assert refused["Content-Type"].startswith("text/html")
            page = refused.content.decode()
            assert 'class="errorlist' in page
            assert said in page
            assert 'name="username" value="lectora"' in page
            assert '<header class="site">' in page
            assert reverse("login") in page
        assert not User.objects.filter(username="lectora").exists()

    @override_settings(EXOGRAM_SIGNUPS_PER_HOUR=2)
    def test_only_accounts_made_count_not_attempts_that_failed(self, client: Client) -> None:
        address = {"REMOTE_ADDR": "203.0.113.9"}
        for _ in range(3):  # a mistyped second password, three times
            failed = client.post(
                reverse("signup"),
                {"username": "reader0", "password1": PASSWORD, "password2": "other"},
                **address,
            )
            assert failed.status_code == 200
        for number in range(2):
            made = Client().post(
                reverse("signup"),
                {"username": f"reader{number}", "password1": PASSWORD, "password2": PASSWORD},
                **address,
            )
            assert made.status_code == 302
        assert User.objects.filter(username__startswith="reader").count() == 2

    @override_settings(EXOGRAM_SIGNUPS_PER_HOUR=1)
    def test_tries_are_limited_too_before_the_form_says_a_username_is_taken(
        self, client: Client, alice: User
    ) -> None:
        # Only accounts made count against the limit, so "that username is taken" answered
        # any number of guesses (found by review): every try counts against a looser one.
        address = {"REMOTE_ADDR": "203.0.113.9"}
        guess = {"username": "alice", "password1": PASSWORD, "password2": PASSWORD}
        for _ in range(SIGNUP_TRIES_PER_ACCOUNT):
            assert client.post(reverse("signup"), guess, **address).status_code == 200
        refused = client.post(reverse("signup"), guess, **address)
        assert refused.status_code == 429
        page = refused.content.decode()
        assert "Too many sign-up attempts from your network address" in page
        assert "already exists" not in page  # the guess is not answered
        assert 'name="username" value="alice"' in page
        spanish = client.post(
            reverse("signup"), guess, headers={"Accept-Language": "es"}, **address
        ).content.decode()
        assert "Demasiados intentos de registro desde tu dirección de red" in spanish
        other = Client().post(reverse("signup"), guess, REMOTE_ADDR="198.51.100.4")
        assert other.status_code == 200  # another address is not held back

    @pytest.mark.parametrize(
        "lookalike",
        ["\u0430lice", "al\u0456ce", "\u0430l\u0456\u0441\u0435", "alic\u0435\u200b"],
    )
    def test_it_refuses_a_username_that_looks_like_another(
        self, client: Client, alice: User, lookalike: str
    ) -> None:
        response = client.post(
            reverse("signup"),
            {"username": lookalike, "password1": PASSWORD, "password2": PASSWORD},
        )
        assert response.status_code == 200
        assert "looks the same as another reader" in response.content.decode()
        assert User.objects.count() == 1

    def test_it_takes_a_username_that_only_shares_letters(
        self, client: Client, alice: User
    ) -> None:
        response = client.post(
            reverse("signup"),
            {"username": "alicia", "password1": PASSWORD, "password2": PASSWORD},
        )
        assert response.status_code == 302
