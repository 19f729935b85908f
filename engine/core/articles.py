"""Which indefinite article, ``a`` or ``an``, a word takes: decided by its first sound.

The sound is guessed from the spelling (no pronouncing dictionary is needed):

- a word starting with a vowel letter takes ``an`` (``an apple``), any other ``a``;
- silent ``h``: ``hour``, ``honest``, ``honour``/``honor``, ``heir`` and words built
  on them take ``an`` (``an hourly``, ``an honorable``);
- a vowel letter read as a consonant: ``u``/``eu``/``ew`` read *yu* (``a university``,
  ``a user``, ``a European``, ``a ewe``; but ``an umbrella``, ``an unidentified``), and
  ``one``/``once`` read *w* (``a one-off``; but ``an onerous``);
- letters and acronyms read letter by letter take the article of the first letter's
  name (``an MBA``, ``an FBI agent``, ``a UN report``, ``an x-ray``, ``a U-turn``);
  capitalised words that can be read as a word (``NASA``, ``NATO``, ``OPEC``) follow
  the word rules;
- words whose article is disputed (``herb``) and words not starting with a letter
  (``8``, ``"quoted``) give ``None``: the article is left as it is.
"""

from __future__ import annotations

import re

__all__ = ["agreeing_article", "indefinite_article"]

#: Letters whose name starts with a vowel sound (``an F``, ``an S``).
_AN_LETTERS = frozenset("aefhilmnorsx")
_SILENT_H = ("hour", "honest", "honor", "honour", "heir")
_DISPUTED = ("herb",)
# u/e read "yu" at the start of these words (checked after the exceptions below).
_YU_PREFIXES = (
    "eu", "ewe", "use", "usu", "usa", "usur", "uti", "ute", "uto", "ura", "uri", "ure",
    "uro", "uku", "ubi", "ukr", "ufo", "uga", "uvu", "unanim",
    "unic", "unif", "unil", "unio", "unip", "uniq", "unis", "unit", "univ",
)  # fmt: skip
# Capitals read letter by letter although they look like a syllable.
_LETTER_ACRONYMS = frozenset({"hiv", "suv", "sos", "mit", "nih", "led", "faq", "hud", "rsvp"})
_ONSETS = frozenset(
    [
        "bl",
        "br",
        "ch",
        "cl",
        "cr",
        "dr",
        "dw",
        "fl",
        "fr",
        "gl",
        "gn",
        "gr",
        "kn",
        "ph",
        "pl",
        "pr",
        "ps",
        "qu",
        "sc",
        "sh",
        "sk",
        "sl",
        "sm",
        "sn",
        "sp",
        "st",
        "sw",
        "th",
        "tr",
        "tw",
        "wh",
        "wr",
    ]
)
_VOWELS = frozenset("aeiou")
_CONSONANT_RUN = re.compile(r"[^aeiouy]{4,}")


def _letter_article(letter: str) -> str:
    return "an" if letter.lower() in _AN_LETTERS else "a"


def _read_as_letters(caps: str) -> bool:
    """Whether an all-capitals word is read letter by letter (``FBI``, ``HTML``)."""
    low = caps.lower()
    if len(low) <= 2 or low in _LETTER_ACRONYMS:
        return True
    if len(low) == 3:  # only consonant-vowel-consonant reads as a word ("SON", "CAR")
        return not (low[0] not in _VOWELS and low[1] in _VOWELS and low[2] not in _VOWELS)
    if not any(ch in _VOWELS or ch == "y" for ch in low):
        return True
    if _CONSONANT_RUN.search(low):  # "UNHCR"; "APPLE", "CHILDREN" are words
        return True
    head = low[:2]
    return head[0] not in _VOWELS and head[1] not in _VOWELS and head not in _ONSETS


def _word_article(word: str) -> str | None:
    """The article of a lowercase word read as a word."""
    if word.startswith(_DISPUTED):
        return None
    if word.startswith(_SILENT_H):
        return "an"
    if word in ("one", "ones", "once", "oneself") or word.startswith(("one-", "once-")):
        return "a"
    if word.startswith(_YU_PREFIXES):
        return "a"
    return "an" if word[0] in _VOWELS else "a"


def indefinite_article(word: str) -> str | None:
    """``"a"`` or ``"an"`` for the word that follows the article, or ``None`` (undecided).

    See the module docstring for the rules.
    """
    if not word or not word[0].isalpha() or not word[0].isascii():
        return None
    head = re.match(r"[A-Za-z]+", word)
    assert head is not None
    letters = head.group(0)
    # A lone letter: "an x-ray", "a U-turn", "an F".
    if len(letters) == 1:
        return _letter_article(letters)
    caps = re.match(r"[A-Z]+", letters)
    if caps is not None and len(caps.group(0)) >= 2:
        run = caps.group(0)
        if len(run) < len(letters) and len(run) >= 2 and letters[len(run) :] == "s":
            letters = run  # "MBAs"
        elif len(run) < len(letters):
            run = ""  # "McDonald": not an acronym
        if run and _read_as_letters(run):
            return _letter_article(run[0])
    return _word_article(letters.lower())


def agreeing_article(article: str, following: str) -> str | None:
    """The form ``article`` (``a``/``an`` in any case) must take before ``following``, or
    ``None`` when it already agrees or the right article cannot be told.

    The case pattern is kept: ``A`` -> ``An``, ``AN`` -> ``A``; a lone capital ``A``
    before a word written in capitals and read as a word gives ``AN`` (``A CAR`` ->
    ``AN APPLE``), before an acronym ``An`` (``An FBI agent``).
    """
    if article.lower() not in ("a", "an"):
        return None
    wanted = indefinite_article(following)
    if wanted is None or wanted == article.lower():
        return None
    if article.isupper() and (len(article) > 1 or _capitals_word(following)):
        return wanted.upper()
    if article[:1].isupper():
        return wanted.capitalize()
    return wanted


def _capitals_word(word: str) -> bool:
    """An all-capitals word of two letters or more that is read as a word."""
    letters = "".join(c for c in word if c.isalpha())
    return len(letters) > 1 and letters.isupper() and not _read_as_letters(letters)
