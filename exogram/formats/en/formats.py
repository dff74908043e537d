# "5 Dec 2026": Django's "M" capitalises the month's abbreviation, as English does.
DATE_FORMAT = "j M Y"
DATETIME_FORMAT = "j M Y, H:i"
