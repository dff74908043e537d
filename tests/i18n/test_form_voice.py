"""The forms' errors speak to a Spanish reader as "tú", like the pages around them, never in
Django's own formal Spanish ("Su contraseña…", "introduzca…", "Asegúrese de que…")."""

import gettext
import importlib
import importlib.util
import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django import forms
from django.apps import apps
from django.conf import settings
from django.contrib.auth import password_validation
from django.contrib.auth.forms import AuthenticationForm, BaseUserCreationForm, SetPasswordForm
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from django.urls import get_resolver, reverse
from django.utils import translation

from accounts.forms import AdminLoginForm, ThrottleMessageMixin
from accounts.models import User
from exogram import form_messages
from tests.books.library import library_of
from tests.conftest import PASSWORD

SPANISH = {"Accept-Language": "es-ES,es;q=0.9"}
# Words of Django's formal Spanish: "usted" and its imperatives and possessive.
FORMAL = re.compile(
    r"\b(usted|Su |[Ss]u contraseña|[Ii]ntroduzca|[Aa]segúrese|[Ee]scoja|[Ss]eleccione|"
    r"[Pp]or favor|[Vv]uelva a introducir|[Ii]ngrese|[Cc]ompruebe|[Cc]orrija|[Ee]nvíe)"
)


def _formal(page: str) -> list[str]:
    return FORMAL.findall(page)


@pytest.fixture
def lectora(alice: User) -> User:
    alice.language = "es"
    alice.save(update_fields=["language"])
    return alice


@pytest.mark.django_db
class PasswordFormTests:
    def test_it_asks_for_a_new_password_in_the_pages_voice(
        self, lectora: User, alice_client: Client
    ) -> None:
        page = alice_client.get(reverse("password_change")).content.decode()
        assert "Al menos 8 caracteres" in page  # the one-line hint, not Django's rules
        assert "Repite la nueva contraseña" in page
        assert _formal(page) == []

    def test_it_refuses_a_wrong_current_password_as_tu(
        self, lectora: User, alice_client: Client
    ) -> None:
        response = alice_client.post(
            reverse("password_change"),
            {"old_password": "nope", "new_password1": "x", "new_password2": "y"},
        )
        page = response.content.decode()
        assert "Esa no es tu contraseña actual; vuelve a escribirla." in page
        assert "Las dos contraseñas no coinciden." in page
        assert _formal(page) == []

    def test_it_keeps_english_for_an_english_reader(self, alice_client: Client) -> None:
        response = alice_client.post(
            reverse("password_change"),
            {"old_password": "nope", "new_password1": "x", "new_password2": "y"},
        )
        page = response.content.decode()
        assert "That is not your current password; try it again." in page
        assert "The two passwords are not the same." in page

    def test_it_still_changes_the_password(self, lectora: User, alice_client: Client) -> None:
        new = PASSWORD + " renewed"
        response = alice_client.post(
            reverse("password_change"),
            {"old_password": PASSWORD, "new_password1": new, "new_password2": new},
        )
        assert response.status_code == 302
        lectora.refresh_from_db()
        assert lectora.check_password(new)

    def test_it_refuses_a_username_as_tu_at_sign_up(self, client: Client) -> None:
        response = client.post(
            reverse("signup"),
            {"username": "una lectora!", "password1": PASSWORD, "password2": PASSWORD},
            headers=SPANISH,
        )
        page = response.content.decode()
        assert "Escribe un nombre de usuario válido" in page
        assert _formal(page) == []


@pytest.mark.django_db
class SearchFormTests:
    def test_it_refuses_a_bad_date_and_note_filter_as_tu(
        self, lectora: User, alice_client: Client
    ) -> None:
        response = alice_client.get(
            reverse("search"), {"q": "sentence", "added_from": "ayer", "has_note": "quizá"}
        )
        page = response.content.decode()
        assert "Escribe la fecha como año-mes-día, por ejemplo 2024-03-01." in page
        assert "«quizá» no es una de las opciones." in page
        assert _formal(page) == []

    def test_it_searches_a_query_past_the_limit_cut_to_it(
        self, lectora: User, alice_client: Client
    ) -> None:
        library_of(lectora, 2)
        long_query = "something " * 60  # 600 characters; the limit is 500
        response = alice_client.get(reverse("search"), {"q": long_query, "mode": "keyword"})
        page = response.content.decode()
        assert page.count("<mark>something</mark> of its own") == 2
        # Not refused ("at most 500 characters"): searched, and the page says it was cut.
        notice = "Tu búsqueda se ha acortado a sus primeros 500 caracteres."
        assert notice in page
        assert "500" not in re.sub(r"<[^>]+>", "", page).replace(notice, "")
        assert _formal(page) == []
        found = alice_client.get(reverse("search_json"), {"q": long_query, "mode": "keyword"})
        assert found.status_code == 200
        assert len(found.json()) == 2


def _project_forms() -> list[type[forms.BaseForm]]:
    """Every form class in the project's own apps, found by walking Form's subclasses once
    every view (through the URLs) and every app's forms module is imported: a form added
    later is walked without being listed here."""
    get_resolver().url_patterns  # noqa: B018 (imports every view, and so its forms)
    own = [
        config.name
        for config in apps.get_app_configs()
        if Path(config.path).is_relative_to(settings.BASE_DIR)
    ]
    for app in own:
        if importlib.util.find_spec(f"{app}.forms"):
            importlib.import_module(f"{app}.forms")
    found: set[type[forms.BaseForm]] = set()
    to_walk: list[type[forms.BaseForm]] = [forms.BaseForm]
    while to_walk:
        for subclass in to_walk.pop().__subclasses__():
            to_walk.append(subclass)
            if subclass.__module__.split(".")[0] in own and subclass not in NOT_READERS_FORMS:
                found.add(subclass)
    return sorted(found, key=lambda form_class: form_class.__qualname__)


# Not shown to a reader: the admin's sign-in is for staff, in the admin's own (Django's)
# wording, and the throttle's mixin is only a base of the two sign-in forms.
NOT_READERS_FORMS = {AdminLoginForm, ThrottleMessageMixin}
READER_FORMS = _project_forms()
# Every message form_messages gives, in English: a field's message must be one of them.
OWN_MESSAGES = {
    str(message)
    for messages in vars(form_messages).values()
    if isinstance(messages, dict)
    for message in messages.values()
}


def _form(
    form_class: type[forms.BaseForm],
    reader: User,
    data: dict[str, Any] | None = None,
    files: dict[str, Any] | None = None,
) -> forms.BaseForm:
    """The form as its view makes it: Django's auth forms take the request or the user
    first; the project's account forms take the reader by name."""
    if issubclass(form_class, AuthenticationForm):
        return form_class(None, data=data)
    if issubclass(form_class, SetPasswordForm):
        return form_class(reader, data)
    if "reader" in inspect.signature(form_class.__init__).parameters:
        return form_class(data, files, reader=reader)
    return form_class(data, files)


def _wrong_values(field: forms.Field) -> Iterator[tuple[str, object]]:
    """(what is wrong, a value): each something a reader or a hand-made request can send,
    and the field refuses."""
    if isinstance(field, forms.FileField):
        if not field.allow_empty_file:  # the import page refuses an empty file itself
            yield "empty file", SimpleUploadedFile("My Clippings.txt", b"")
        yield "not a file", "My Clippings.txt"
        return
    if isinstance(field, forms.ModelMultipleChoiceField):
        yield "not a list", "1"
        yield "not an id", ["one"]
        yield "not a choice", ["0"]
        return
    if isinstance(field, forms.ChoiceField):
        yield "not a choice", "maybe"
    if isinstance(field, forms.IntegerField):
        yield "not a number", "many"
        if field.min_value is not None:
            yield "too small", str(field.min_value - 1)
        if field.max_value is not None:
            yield "too large", str(field.max_value + 1)
    if isinstance(field, forms.DateField):
        yield "not a date", "ayer"
    if isinstance(field, forms.UUIDField):
        yield "not a code", "not-a-code"
    if isinstance(field, forms.EmailField):
        yield "not an address", "lectora at home"
    if isinstance(field, forms.CharField):
        yield "a null character", "a\x00b"
        if field.max_length is not None:
            yield "too long", "x" * (field.max_length + 1)


def _cases() -> Iterator[Any]:
    for form_class in READER_FORMS:
        for name, field in form_class.base_fields.items():
            for wrong, value in _wrong_values(field):
                sent: dict[str, Any] = {name: value}
                data, files = ({}, sent) if isinstance(field, forms.FileField) else (sent, {})
                case = f"{form_class.__name__}-{name}-{wrong}"
                yield pytest.param(form_class, name, data, files, id=case)


def _messages(form: forms.BaseForm) -> list[str]:
    return [error["message"] for errors in form.errors.get_json_data().values() for error in errors]


@pytest.mark.django_db
class EveryFormTests:
    """Every form a reader can submit: each field's errors are the project's own, and none
    reaches a Spanish reader in Django's formal Spanish."""

    def test_it_walks_the_forms_readers_submit(self) -> None:
        names = {form_class.__name__ for form_class in READER_FORMS}
        assert {
            "LoginForm", "SignupForm", "ReaderPasswordChangeForm", "ReaderSetPasswordForm",
            "VerifiedPasswordResetForm", "EmailForm", "DeleteAccountForm", "LanguageForm",
            "ImportForm", "NoteForm", "TagForm", "TagRenameForm", "SearchForm",
            "ReviewSettingsForm", "AnswerForm", "WordAnswerForm", "CardNoteForm",
            "SharingForm", "TokenForm",
        } <= names  # fmt: skip
        assert not names & {"AdminLoginForm", "ThrottleMessageMixin"}

    @pytest.mark.parametrize("form_class", READER_FORMS, ids=lambda c: c.__name__)
    def test_every_field_message_is_the_projects_own(
        self, alice: User, form_class: type[forms.BaseForm]
    ) -> None:
        form = _form(form_class, alice)
        for name, field in form.fields.items():
            # A validator's message gives way to the field's message of the same code.
            codes = {getattr(v, "code", None) for v in field.validators} - {None}
            assert codes <= set(field.error_messages), (name, codes)
            for code, message in field.error_messages.items():
                if code == "required" and not field.required:
                    continue  # an optional field never says it
                with translation.override("en"):
                    assert str(message) in OWN_MESSAGES, (name, code, str(message))
                with translation.override("es"):
                    assert not FORMAL.search(str(message)), (name, code, str(message))
        for code, message in getattr(form, "error_messages", {}).items():
            with translation.override("es"):
                assert not FORMAL.search(str(message)), (code, str(message))

    @pytest.mark.parametrize("form_class", READER_FORMS, ids=lambda c: c.__name__)
    def test_an_empty_form_asks_for_its_fields_as_tu(
        self, alice: User, form_class: type[forms.BaseForm]
    ) -> None:
        with translation.override("es"):
            form = _form(form_class, alice, data={}, files={})
            form.is_valid()
            messages = _messages(form)
        required = [name for name, field in form.fields.items() if field.required]
        assert set(required) <= set(form.errors)
        assert [m for m in messages if FORMAL.search(m)] == []

    @pytest.mark.parametrize(("form_class", "name", "data", "files"), list(_cases()))
    def test_a_wrong_value_is_refused_as_tu(
        self,
        alice: User,
        form_class: type[forms.BaseForm],
        name: str,
        data: dict[str, Any],
        files: dict[str, Any],
    ) -> None:
        with translation.override("es"):
            form = _form(form_class, alice, data=data, files=files)
            form.is_valid()
            messages = _messages(form)
        assert name in form.errors
        assert [m for m in messages if FORMAL.search(m)] == []


@pytest.mark.django_db
class ImportFormTests:
    @override_settings(EXOGRAM_MAX_UPLOAD_MB=1)
    def test_it_says_the_size_as_the_language_writes_numbers(self, alice_client: Client) -> None:
        # The page refuses each file on its own (one of several never refuses the rest).
        upload = b"x" * (1024 * 1024 + 100)  # 1.0001 MB reads 1.1, never the limit itself
        said = {}
        for language in ("en", "es"):
            response = alice_client.post(
                reverse("import"),
                {"file": SimpleUploadedFile("My Clippings.txt", upload)},
                HTTP_ACCEPT_LANGUAGE=language,
            )
            said[language] = response.content.decode()
        assert "The file is 1.1 MB; the limit is 1 MB." in said["en"]
        assert "El archivo ocupa 1,1 MB; el límite es 1 MB." in said["es"]

    @override_settings(EXOGRAM_MAX_UPLOAD_MB=1)
    def test_the_upload_page_refuses_a_large_file_in_spanish(
        self, lectora: User, alice_client: Client
    ) -> None:
        upload = SimpleUploadedFile("My Clippings.txt", b"x" * (1024 * 1024 + 100))
        response = alice_client.post(reverse("import"), {"file": upload})
        page = response.content.decode()
        assert "El archivo ocupa 1,1 MB; el límite es 1 MB." in page
        assert _formal(page) == []


@pytest.mark.django_db
class EmailFieldTests:
    def test_review_settings_refuse_a_bad_address_as_tu(
        self, lectora: User, alice_client: Client
    ) -> None:
        response = alice_client.post(
            reverse("review_settings"),
            {"cards_per_day": "0", "words_per_day": "10", "email": "lectora at home"},
        )
        page = response.content.decode()
        assert "Escribe una dirección de correo, por ejemplo lectora@example.com." in page
        assert "Como mínimo 1." in page
        assert _formal(page) == []


def _own_spanish() -> list[re.Pattern[str]]:
    """Every Spanish message of the project's own catalogue, its placeholders matching
    any value: what a message a reader gets must be one of."""
    with (settings.BASE_DIR / "locale/es/LC_MESSAGES/django.mo").open("rb") as compiled:
        catalogue = gettext.GNUTranslations(compiled)
    placeholder = re.compile(r"%(?:\([^)]*\))?[sd]")
    return [
        re.compile(".+".join(re.escape(part) for part in placeholder.split(message)))
        for message in catalogue._catalog.values()  # the standard library keeps no other list
        if message
    ]


OWN_SPANISH = _own_spanish()


def _from_own_catalogue(message: str) -> bool:
    return any(pattern.fullmatch(message) for pattern in OWN_SPANISH)


# Forms that take a new password, and so run settings.AUTH_PASSWORD_VALIDATORS.
NEW_PASSWORD_FORMS = [
    form_class
    for form_class in READER_FORMS
    if issubclass(form_class, SetPasswordForm | BaseUserCreationForm)
]


def _weak_passwords(username: str) -> dict[str, str]:
    """A password each validator refuses, by the code it refuses it with."""
    return {
        "password_too_short": "k9$x",
        "password_too_common": "password",
        "password_entirely_numeric": "83920174655",
        # Within 0.7 of the username by SequenceMatcher's quick ratio.
        "password_too_similar": f"{username}-x9q",
    }


@pytest.mark.django_db
class PasswordRuleTests:
    """The password validators' messages are Django's: the project's catalogue words them
    in "tú" (Django's Spanish: "Su contraseña no puede…", "Debe contener…")."""

    def test_it_walks_the_forms_that_take_a_new_password(self) -> None:
        names = {form_class.__name__ for form_class in NEW_PASSWORD_FORMS}
        assert names == {"SignupForm", "ReaderSetPasswordForm", "ReaderPasswordChangeForm"}

    @pytest.mark.parametrize("form_class", NEW_PASSWORD_FORMS, ids=lambda c: c.__name__)
    def test_every_rule_refuses_a_password_as_tu(
        self, alice: User, form_class: type[forms.BaseForm]
    ) -> None:
        username = "lectora" if issubclass(form_class, BaseUserCreationForm) else alice.username
        refused = {}
        for code, password in _weak_passwords(username).items():
            data = {"username": username, "old_password": PASSWORD}
            for field in ("password1", "password2", "new_password1", "new_password2"):
                data[field] = password
            with translation.override("es"):
                form = _form(form_class, alice, data=data)
                assert not form.is_valid()
                errors = form.errors.get_json_data()
            for error in (error for errors in errors.values() for error in errors):
                refused[error["code"]] = error["message"]
            assert code in refused, (code, errors)
        assert [m for m in refused.values() if not _from_own_catalogue(m)] == []
        assert [m for m in refused.values() if FORMAL.search(m)] == []

    def test_the_rules_themselves_are_worded_as_tu(self) -> None:
        with translation.override("es"):
            rules = password_validation.password_validators_help_texts()
        assert len(rules) == len(settings.AUTH_PASSWORD_VALIDATORS)
        assert [rule for rule in rules if not _from_own_catalogue(rule)] == []
        assert [rule for rule in rules if FORMAL.search(rule)] == []

    def test_the_sign_up_page_says_a_weak_password_as_tu(self, client: Client) -> None:
        response = client.post(
            reverse("signup"),
            {"username": "lectora", "password1": "83920174655", "password2": "83920174655"},
            headers=SPANISH,
        )
        page = response.content.decode()
        assert "Esa contraseña son solo números: añade alguna letra." in page
        assert _formal(page) == []
