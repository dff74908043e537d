from django.urls import path

from review import views

urlpatterns = [
    path("review/", views.review, name="review"),
    path("review/settings/", views.review_settings, name="review_settings"),
    path("review/cards/<uuid:code>/", views.card_answer, name="review_card_answer"),
    path("review/cards/<uuid:code>/note/", views.card_note, name="review_card_note"),
    path("review/words/", views.review_words, name="review_words"),
    path("review/words/<uuid:code>/", views.word_card_answer, name="review_word_answer"),
    path("review/words/<uuid:code>/note/", views.word_card_note, name="review_word_note"),
    path("review/unsubscribe/<str:token>/", views.unsubscribe, name="review_unsubscribe"),
]
