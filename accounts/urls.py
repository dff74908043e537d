from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views
from accounts.forms import ReaderPasswordChangeForm, ReaderSetPasswordForm

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("settings/", views.settings_page, name="settings"),
    path("settings/delete-account/", views.delete_account, name="delete_account"),
    path("settings/email/", views.email_change, name="email_change"),
    path("settings/language/", views.language_change, name="language_change"),
    path(
        "settings/email/verify/",
        views.email_verification_resend,
        name="email_verification_resend",
    ),
    path("settings/email/verify/<str:token>/", views.email_verify, name="email_verify"),
    # Django's own views for passwords; the templates are in templates/registration/.
    path(
        "settings/password/",
        auth_views.PasswordChangeView.as_view(form_class=ReaderPasswordChangeForm),
        name="password_change",
    ),
    path(
        "settings/password/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("password-reset/", views.PasswordResetView.as_view(), name="password_reset"),
    path(
        "password-reset/sent/",
        auth_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "password-reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(form_class=ReaderSetPasswordForm),
        name="password_reset_confirm",
    ),
    path(
        "password-reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
]
