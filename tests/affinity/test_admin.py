import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from affinity.models import ReaderCentroid, SharingProfile


@pytest.mark.django_db
class AffinityAdminTests:
    def test_it_loads_every_page_and_never_renders_a_vector(self, client: Client) -> None:
        admin = User.objects.create_superuser("admin", password="x")
        profile = SharingProfile.objects.create(
            reader=admin, discoverable=True, display_name="The Admin"
        )
        centroid = ReaderCentroid.objects.create(
            reader=admin, vector=[0.05] * 384, highlight_count=3
        )
        client.force_login(admin)
        for model, obj in [("sharingprofile", profile), ("readercentroid", centroid)]:
            listing = client.get(reverse(f"admin:affinity_{model}_changelist"))
            assert listing.status_code == 200
            change = client.get(reverse(f"admin:affinity_{model}_change", args=[obj.pk]))
            assert change.status_code == 200
            assert b"0.05, 0.05" not in change.content
        assert (
            b"The Admin" in client.get(reverse("admin:affinity_sharingprofile_changelist")).content
        )

    def test_it_refuses_a_reader_who_is_not_staff(self, alice_client: Client) -> None:
        response = alice_client.get(reverse("admin:affinity_sharingprofile_changelist"))
        assert response.status_code == 302
