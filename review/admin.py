from django.contrib import admin

from review.models import ReviewSettings


@admin.register(ReviewSettings)
class ReviewSettingsAdmin(admin.ModelAdmin[ReviewSettings]):
    list_display = ["reader", "cards_per_day", "daily_email", "last_emailed_on"]
