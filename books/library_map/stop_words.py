"""Stop words of the languages readers highlight in (en, es, fr, de, pt, it, ru), for naming
the map's regions. Pure, no Django.

A region named "pour · plus · comme" says nothing: every language's filler must go. But a
word that is filler in one language can be the subject in another (English "sea", "die",
"war", "son", "pour"; French "dire"): so a text's own language is guessed from the filler it
uses, and the words that are stop words only elsewhere are dropped only when that text is in
the other language. Words shorter than three letters never reach these lists (labels._WORD).
"""

# The Russian list is Cyrillic, whose letters ruff takes for Latin look-alikes: they are
# the words themselves (and a Cyrillic "его" read as "ero" is what the list is for).
# ruff: noqa: RUF001, RUF003

from __future__ import annotations

import hashlib

from books.text import fold

_BY_LANGUAGE_TEXT = {
    "en": """
        the and for are but not you all any can had her was one our out has him his how new
        now old see two way who did its let put say she too use that with have this will
        your from they know want been good much some time very when come here just like
        long make many more only over such take than them well were what into also back
        after first even most where which while would there their these those then because
        about could should other being every never always again might must through before
        without within upon shall yet nor thing things people something nothing anything
        everything someone anyone everyone until still ever though although whether enough
        toward towards among across since often quite rather perhaps almost else onto off
        down why whom whose itself himself herself themselves myself ourselves yourself each
        both few same own less least another per via don doesn didn isn aren wasn weren won
        wouldn couldn shouldn haven hasn hadn does doing done made makes get gets got going
        goes went give gives given may mean means much way ways lot lots really actually
        just also able ago yes either neither however therefore thus instead around behind
        during under above below between against whole part kind sort seem seems seemed
        think thought said says tell told look looked use used using find found keep kept
        let lets put puts become became becomes came comes take takes took year years day
        days man men woman women great little big small right left last next
        mostly ones three four five different chapter chapters page pages
        """,
    "es": """
        los las del una uno unos unas por con para como pero sus mas este esta esto estos
        estas ese esa eso esos esas aquel aquella aquello que quien cual cuales cuando
        donde porque sin sobre entre hasta desde muy tambien tan tanto tanta tantos todo
        toda todos todas otro otra otros otras mismo misma mismos mismas ser estar hay han
        has hemos fue fueron era eran sea sean esta estan estaba soy eres somos son nos
        les mis tus nuestro nuestra nuestros vuestro ella ellos ellas usted ustedes algo
        nada cada asi aun ahora antes despues siempre nunca poco mucho mucha muchos muchas
        tiene tienen tener tenia hace hacer hacia puede pueden poder debe deben sino segun
        durante mientras menos mejor peor ademas luego entonces donde alli aqui cosa cosas
        vez veces dia dias tiempo forma manera parte alguien nadie alguno alguna
        algunos algunas ninguno ninguna cuyo cuya contra tras ante bajo sido siendo estado
        habia haber habra dijo dice decir solo sola cual quiza dos tres capitulo pagina
        """,
    "fr": """
        les des une est pas avec dans sur qui que quoi mais ses leur leurs nous vous ils
        elles elle cette ces cet tous tout toute toutes aussi moins tres bien etre avoir
        pour plus comme par sont ont fait faire peut peuvent son sans dont donc car ainsi
        alors encore meme deja toujours jamais rien chose choses autre autres entre sous
        vers chez avant apres depuis pendant quand comment pourquoi ici lui eux moi toi
        notre nos votre vos mon mes ton tes celui celle ceux celles cela ceci quel quelle
        quels quelles quelque quelques chaque avait etait etaient sera serait seront suis
        sommes etes avons avez fois temps jour jours peu beaucoup trop tant assez puis
        dire dit faut ete aux une non oui bon point lorsque parce tandis selon afin deux
        trois chapitre page pages
        """,
    "de": """
        der die das dem den des ein eine einer einem einen eines und oder aber nicht ist
        sind mit von fur auf aus bei nach uber unter vor durch auch noch nur schon sehr wie
        was wer wenn dass als sich ich sie wir ihr ihm ihn ihnen sein seine seiner seinem
        seinen ihre ihrer ihrem ihren mein meine unser euer dieser diese dieses diesem
        diesen jener jede jeder jedes kein keine keinen man hat haben hatte hatten wird
        werden wurde wurden war waren bin bist kann konnen muss mussen soll sollen will
        wollen mehr immer wieder dann denn doch hier dort da zum zur vom beim bis ohne gegen
        um zwischen etwas nichts alle alles viel viele wenig ganz selbst zeit mal
        also eben gar hin her ob weil sondern zwei drei kapitel seite
        """,
    "pt": """
        nao uma umas uns com mais mas seu sua seus suas ele ela eles elas isso isto esse
        essa esses essas este esta estes estas aquele aquela que quem qual quais quando onde
        porque por para pelo pela pelos pelas dos das nos nas num numa como sem sobre entre
        ate desde muito muita muitos muitas tambem tao tanto todo toda todos todas outro
        outra outros outras mesmo mesma ser estar ter tem tinha foi era sao estao esta
        somos voce voces meu minha meus minhas nosso nossa lhe lhes algo nada cada assim
        ainda agora antes depois sempre nunca pouco pode podem fazer faz coisa coisas vez
        tempo ja seja sejam sido tudo dois tres capitulo pagina
        """,
    "it": """
        che non per sono come piu anche questo questa questi queste quello quella quelli
        della delle degli dello dei del dal dalla dalle dai nel nella nelle negli nei sul
        sulla sui con una uno gli lei lui loro suo sua suoi sue mio mia miei nostro nostra
        vostro essere avere ha hanno aveva era erano stato stata fare fatto cosa cose tutto
        tutti tutte tutta molto molti molta poco sempre mai ancora gia poi quando dove
        perche mentre senza sopra sotto tra fra cui ogni altro altra altri altre stesso
        stessa solo tempo volta volte anni sia siamo siete noi voi due tre capitolo pagina
        """,
    # Russian: without it a region of a reader's Russian books was named "его" ("him",
    # "his"), which reads as the non-word "ero" beside "god · universe". Folded as the
    # labels fold (й is и, ё is е).
    "ru": """
        что как его или это для все всё она они оно был была было были быть есть эти этот
        эта эту этом этого этой этих этим тот того той тех тем том так где когда тогда
        если хотя чтобы потому почему только даже еще ещё уже очень тоже также чем кто
        кого чего ему ней неё нее него ним ними них нас вас нам вам мне меня тебя тебе
        себя себе сам сама само свой своя свое своё свои своих своим свою своего моя мой
        мои твой наш нашего ваш который которая которое которые которых которого котором
        которым более менее больше между перед после через под над при про без около вот
        вдруг ведь нет ничего никогда можно надо нужно будет будут будто может мог могла
        стал стало стала сказал сказала один одна одно два три раз всего всех всем весь
        вся здесь там тут теперь потом сейчас всегда опять снова лишь именно например
        другой другие другого несколько каждый глава страница
        """,
}

STOP_WORDS_BY_LANGUAGE: dict[str, frozenset[str]] = {
    language: frozenset(fold(word) for word in text.split())
    for language, text in _BY_LANGUAGE_TEXT.items()
}
LANGUAGES = tuple(STOP_WORDS_BY_LANGUAGE)

# Filler in one language, the subject of a highlight in another: dropped only from a text
# read as the language whose filler it is.
AMBIGUOUS = frozenset(
    {"sea", "die", "war", "son", "era", "pour", "dire", "man", "also", "come", "hat", "art"}
    | {"fur", "bin", "will", "gift", "mist", "sole", "done", "case", "fin", "tanto", "bald"}
)
EVERYWHERE = frozenset().union(*STOP_WORDS_BY_LANGUAGE.values()) - AMBIGUOUS

# Which words these lists hold, in eight hex digits: a stored map named by other lists
# (before "его" was Russian filler, say) is drawn again (books.library_map.services).
_LISTED = sorted((language, sorted(words)) for language, words in STOP_WORDS_BY_LANGUAGE.items())
FINGERPRINT = hashlib.sha256(repr([*_LISTED, ("*", sorted(AMBIGUOUS))]).encode()).hexdigest()[:8]


def language_by_filler(words: list[str]) -> str | None:
    """The language whose stop words a text's (folded) words use most, or None for a text
    with no filler to go by, or a tie."""
    counts = {
        language: sum(word in stop for word in words)
        for language, stop in STOP_WORDS_BY_LANGUAGE.items()
    }
    best = max(counts.values())
    leaders = [language for language, count in counts.items() if count == best]
    return leaders[0] if best and len(leaders) == 1 else None


def stop_words_for(language: str | None) -> frozenset[str]:
    """What to drop from a text in `language` (None: unknown, the unambiguous filler)."""
    if language is None:
        return EVERYWHERE
    return EVERYWHERE | STOP_WORDS_BY_LANGUAGE[language]
