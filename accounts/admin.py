from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from accounts.forms import AdminLoginForm
from accounts.models import User

# The admin's login says when the throttle holds an account, as the reader's does.
admin.site.login_form = AdminLoginForm

admin.site.register(User, UserAdmin)
