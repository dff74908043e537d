import pytest

from books.text import author_sort_key, title_sort_key


class TitleSortKeyTests:
    @pytest.mark.parametrize(
        ("title", "key"),
        [
            ("The Name of the Rose", "name of the rose"),
            ("A Death in the Family", "death in the family"),
            ("An Essay", "essay"),
            ("El túnel", "tunel"),
            ("La casa de los espíritus", "casa de los espiritus"),
            ("Los detectives salvajes", "detectives salvajes"),
            ("Las batallas en el desierto", "batallas en el desierto"),
            ("Der Zauberberg", "zauberberg"),
            ("Die Verwandlung", "verwandlung"),
            ("Das Parfum", "parfum"),
            ("Le Petit Prince", "petit prince"),
            ("Les Misérables", "miserables"),
            ("L'Étranger", "etranger"),
            ("I, Robot", "i, robot"),
            ("The", "the"),
            ("Ficciones", "ficciones"),
        ],
    )
    def test_it_ignores_a_leading_article(self, title: str, key: str) -> None:
        assert title_sort_key(title) == key


class AuthorSortKeyTests:
    def test_it_sorts_by_family_name(self) -> None:
        assert author_sort_key("robert greene") == "greene robert"
        assert author_sort_key("jorge luis borges") == "borges jorge luis"

    def test_it_uses_the_first_of_several_authors(self) -> None:
        assert author_sort_key("ann druyan; carl sagan") == "druyan ann"

    def test_it_takes_an_empty_author(self) -> None:
        assert author_sort_key("") == ""
