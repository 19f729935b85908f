"""Short pronounceable English nonwords, built one syllable at a time.

Hall Maudslay & Cotterell take their pseudowords from the ARC Nonword Database
(Rastle et al., 2002): monosyllables that follow English phonotactics, filtered for
plausibility. That list is not distributed with any package brittle can install, so
the stems are built here from the same ingredients, spelled as English spells them:

- an onset (a consonant or an English consonant cluster: ``bl``, ``str``, ``th``...,
  or none);
- a rhyme, one of three English spelling patterns whose inflection is regular:
  a short vowel closed by a coda (``blap``, ``drisk``, ``smunt``), a vowel digraph
  with a single consonant (``gleab``, ``froon``, ``snoat``) or a long vowel spelt
  with a silent ``e`` (``blate``, ``drike``, ``smope``).

No stem ends in ``s`` (a noun slot would then read as plural), in ``y``, ``w``, ``x``
or a vowel other than the silent ``e``, so the regular rules of
:func:`~brittle.search.generators.inflection.regular_inflection` spell every form:
``blap`` -> ``blaps``, ``blapped``, ``blapping``, ``blapper``; ``blate`` -> ``blated``,
``blating``. The inventory is hand-written because it is small and fixed (English
graphotactics), not data: about 40 onsets and 60 rhymes, some 2,400 stems, of which
the real-word filter of the generator keeps about half.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["ONSETS", "RHYMES", "SyllableStems"]

#: Word-initial consonants and clusters of English, as spelt ("" = a vowel start).
ONSETS: tuple[str, ...] = (
    "b", "bl", "br", "ch", "cl", "cr", "d", "dr", "f", "fl", "fr", "g", "gl", "gr",
    "h", "j", "k", "l", "m", "n", "p", "pl", "pr", "r", "s", "sc", "sh", "sk", "sl",
    "sm", "sn", "sp", "st", "str", "sw", "t", "th", "tr", "tw", "v", "w", "z", "",
)  # fmt: skip

#: Short vowels closed by a coda that takes regular suffixes.
_SHORT_RHYMES = tuple(
    vowel + coda
    for vowel in "aeiou"
    for coda in ("b", "d", "g", "m", "n", "p", "t", "ck", "ft", "lk", "mp", "nd", "nk", "nt",
                 "sh", "sk", "sp", "st", "tch")
)  # fmt: skip
#: Vowel digraphs with one consonant after them (no doubling before a suffix).
_DIGRAPH_RHYMES = tuple(
    vowel + coda
    for vowel in ("ai", "ea", "ee", "oa", "oo")
    for coda in ("b", "d", "k", "l", "m", "n", "p", "t", "sh", "th")
)
#: Long vowels spelt with a silent e (dropped before -ed, -ing, -er, -est).
_SILENT_E_RHYMES = tuple(
    vowel + coda + "e"
    for vowel in ("a", "i", "o", "u")
    for coda in ("b", "d", "k", "l", "m", "n", "p", "t", "v", "z")
)
#: Every rhyme a stem may have.
RHYMES: tuple[str, ...] = _SHORT_RHYMES + _DIGRAPH_RHYMES + _SILENT_E_RHYMES


@dataclass(frozen=True)
class SyllableStems:
    """Samples monosyllabic nonword stems (lowercase a-z), uniformly over the inventory.

    ``sample`` has the shape of
    :meth:`~brittle.search.generators.charlm.CharNgramModel.sample`, so a generator can
    draw from either.
    """

    @cached_property
    def stems(self) -> tuple[str, ...]:
        """Every onset + rhyme, in a fixed order (duplicates dropped)."""
        seen: dict[str, None] = {}
        for onset in ONSETS:
            for rhyme in RHYMES:
                stem = onset + rhyme
                if not _awkward(onset, rhyme):
                    seen.setdefault(stem, None)
        return tuple(seen)

    def sample(
        self, rng: np.random.Generator, *, min_length: int = 1, max_length: int = 64
    ) -> str | None:
        """One stem of ``min_length``..``max_length`` letters, or ``None`` when a draw
        falls outside them (the caller draws again, as for the n-gram model)."""
        stem = self.stems[int(rng.integers(len(self.stems)))]
        return stem if min_length <= len(stem) <= max_length else None


def _awkward(onset: str, rhyme: str) -> bool:
    """Spellings English avoids: a doubled letter across the join (``shh``), ``w``
    before ``oo``/``u`` (read as in *wool*, *wunt* is a poor guide), ``qu``-less
    ``kw``, and an empty onset before a silent-e rhyme (``ate``, ``ome``: mostly
    real words or their look-alikes)."""
    if onset and onset[-1] == rhyme[0]:
        return True
    if onset.endswith("w") and rhyme.startswith(("oo", "u")):
        return True
    return not onset and rhyme.endswith("e")
