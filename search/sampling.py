"""Random draws of word-substitution perturbations from a substitution table.

This is the sampling step of La Malfa et al.'s Algorithm 1: for one sentence, draw
``b`` perturbations that each replace ``tau`` words by candidates of the table. The
randomness comes in as a seeded ``numpy.random.Generator``; the same table, ``tau``,
``b`` and generator state give the same perturbations.
"""

from __future__ import annotations

from math import comb
from typing import Literal

import numpy as np

from brittle.engine.core.perturbation import Perturbation
from brittle.search.table import SubstitutionTable

__all__ = ["count_substitutions", "sample_substitutions"]


def count_substitutions(table: SubstitutionTable, size: int) -> int:
    """Number of distinct perturbations of exactly ``size`` positions the table allows."""
    counts = [len(opts) for _, opts in table.entries]
    if size < 0 or size > len(counts):
        return 0
    # Elementary symmetric polynomial of the option counts, by dynamic programming.
    e = [1] + [0] * size
    for c in counts:
        for j in range(size, 0, -1):
            e[j] += e[j - 1] * c
    return e[size]


def sample_substitutions(
    table: SubstitutionTable,
    *,
    tau: int,
    b: int,
    rng: np.random.Generator,
    sizes: Literal["exact", "up_to"] = "exact",
    distinct_positions: bool = False,
    max_tries: int | None = None,
) -> list[Perturbation]:
    """Up to ``b`` distinct random perturbations of at most ``tau`` words.

    Each perturbation picks a set of distinct positions uniformly among the table's
    positions, then one option uniformly at each picked position; its Hamming distance to
    the original FORMs is therefore its number of positions, never more than ``tau``
    (options never equal the original form).

    Args:
        table: candidates of one sentence.
        tau: the budget: most words changed per perturbation (>= 1).
        b: how many perturbations to draw (>= 0).
        rng: the seeded generator; it is advanced.
        sizes: ``"exact"`` changes ``min(tau, positions)`` words every time; ``"up_to"``
            draws the number of changed words uniformly in ``1..min(tau, positions)``.
        distinct_positions: also require that no two perturbations change the same set
            of positions (fewer than ``b`` come back when there are not enough sets).
        max_tries: draws attempted before giving up on finding ``b`` distinct ones
            (default ``20 * b + 100``).

    Returns:
        At most ``b`` perturbations, in the order drawn; fewer when the table allows
        fewer distinct ones; empty when the table is empty.
    """
    if tau < 1:
        raise ValueError(f"tau must be at least 1, got {tau}")
    if b < 0:
        raise ValueError(f"b must be non-negative, got {b}")
    n_pos = len(table.entries)
    if n_pos == 0 or b == 0:
        return []
    top = min(tau, n_pos)
    size_choices = [top] if sizes == "exact" else list(range(1, top + 1))
    if distinct_positions:
        available = sum(comb(n_pos, s) for s in size_choices)
    else:
        available = sum(count_substitutions(table, s) for s in size_choices)
    target = min(b, available)
    tries = 20 * b + 100 if max_tries is None else max_tries

    counts = np.array([len(opts) for _, opts in table.entries], dtype=np.int64)
    seen: set[tuple[tuple[int, ...], ...]] = set()
    seen_sets: set[tuple[int, ...]] = set()
    out: list[Perturbation] = []
    while len(out) < target and tries > 0:
        tries -= 1
        size = size_choices[int(rng.integers(len(size_choices)))]
        rows = np.sort(rng.choice(n_pos, size=size, replace=False))
        picks = rng.integers(0, counts[rows])
        positions = tuple(table.entries[r][0] for r in rows.tolist())
        if distinct_positions and positions in seen_sets:
            continue
        key = (positions, tuple(picks.tolist()))
        if key in seen:
            continue
        seen.add(key)
        seen_sets.add(positions)
        chosen = [
            table.entries[r][1][k] for r, k in zip(rows.tolist(), picks.tolist(), strict=True)
        ]
        out.append(
            Perturbation(
                sentence_id=table.sentence_id,
                method=table.method,
                positions=positions,
                replacements=tuple(form for form, _ in chosen),
                lemmas=tuple(lemma for _, lemma in chosen),
            )
        )
    return out
