"""Optimal one-to-one matching of two lists under a cost (the Hungarian method)."""

from __future__ import annotations

from collections.abc import Sequence


def assign(costs: Sequence[Sequence[float]]) -> list[int]:
    """Return, for each row of a square cost matrix, the column of a minimum-cost matching.

    O(n^3) shortest augmenting paths (Jonker-Volgenant style potentials); ties
    are broken by the lowest index, so equal inputs give equal matchings.
    """
    size = len(costs)
    if size == 0:
        return []
    inf = float("inf")
    row_potential = [0.0] * (size + 1)
    col_potential = [0.0] * (size + 1)
    owner = [0] * (size + 1)  # owner[col] = row matched to col (1-based), 0 = free
    way = [0] * (size + 1)
    for row in range(1, size + 1):
        owner[0] = row
        free_col = 0
        min_to = [inf] * (size + 1)
        used = [False] * (size + 1)
        while True:
            used[free_col] = True
            current_row = owner[free_col]
            delta = inf
            next_col = 0
            for col in range(1, size + 1):
                if used[col]:
                    continue
                reduced = (
                    costs[current_row - 1][col - 1]
                    - row_potential[current_row]
                    - col_potential[col]
                )
                if reduced < min_to[col]:
                    min_to[col] = reduced
                    way[col] = free_col
                if min_to[col] < delta:
                    delta = min_to[col]
                    next_col = col
            for col in range(size + 1):
                if used[col]:
                    row_potential[owner[col]] += delta
                    col_potential[col] -= delta
                else:
                    min_to[col] -= delta
            free_col = next_col
            if owner[free_col] == 0:
                break
        while free_col:
            previous = way[free_col]
            owner[free_col] = owner[previous]
            free_col = previous
    match = [0] * size
    for col in range(1, size + 1):
        match[owner[col] - 1] = col - 1
    return match


def match_pairs(
    costs: Sequence[Sequence[float]],
    cols: int,
    unmatched_row: float,
    unmatched_col: float,
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Match rows to columns of a rectangular cost matrix, allowing either to stay alone.

    `costs` has one row per item on the left, each of `cols` entries.
    Returns (pairs, lone rows, lone columns) minimizing the total cost, where a
    lone row costs `unmatched_row` and a lone column `unmatched_col`.
    """
    rows = len(costs)
    size = rows + cols
    big = [[0.0] * size for _ in range(size)]
    for r in range(size):
        for c in range(size):
            if r < rows and c < cols:
                big[r][c] = costs[r][c]
            elif r < rows:  # row r alone (its private dummy column)
                big[r][c] = unmatched_row if c - cols == r else float("inf")
            elif c < cols:  # column c alone
                big[r][c] = unmatched_col if r - rows == c else float("inf")
    # Replace inf by a finite bound so the potentials stay finite.
    bound = 1 + sum(max(v for v in row if v != float("inf")) for row in big)
    finite = [[bound if v == float("inf") else v for v in row] for row in big]
    match = assign(finite)
    pairs = [(r, match[r]) for r in range(rows) if match[r] < cols]
    lone_rows = [r for r in range(rows) if match[r] >= cols]
    matched_cols = {c for _, c in pairs}
    lone_cols = [c for c in range(cols) if c not in matched_cols]
    return pairs, lone_rows, lone_cols
