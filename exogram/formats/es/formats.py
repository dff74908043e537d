# "5 dic 2026": Spanish writes a month's abbreviation in small letters. Django's "M"
# capitalises it ("Dic"); "b" gives it as the catalogue has it.
DATE_FORMAT = "j b Y"
DATETIME_FORMAT = "j b Y, H:i"
