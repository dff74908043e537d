import pytest
from django.core import mail
from django.core.management import CommandError, call_command
from django.test import Client

from accounts.models import User
from review.models import ReviewSettings
from tests.books.library import library_of


@pytest.mark.django_db
class SendReviewEmailsCommandTests:
    def test_it_sends_the_days_email_and_its_link_unsubscribes(
        self, alice: User, client: Client
    ) -> None:
        alice.email = "alice@example.org"
        alice.verified_email = alice.email  # she followed the mailed link
        alice.save()
        ReviewSettings.objects.create(reader=alice, daily_email=True)
        library_of(alice, 6)
        call_command("send_review_emails", "--date", "2026-03-02")
        call_command("send_review_emails", "--date", "2026-03-02")
        assert len(mail.outbox) == 1
        link = next(
            line.split("Stop it: ")[1]
            for line in mail.outbox[0].body.splitlines()
            if "Stop it:" in line
        )
        client.post(link.replace("http://localhost:8000", ""))
        assert not ReviewSettings.objects.get(reader=alice).daily_email

    def test_it_refuses_a_bad_date(self) -> None:
        with pytest.raises(CommandError, match="YYYY-MM-DD"):
            call_command("send_review_emails", "--date", "yesterday")
