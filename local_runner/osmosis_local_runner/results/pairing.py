"""What a comparison keeps of each row (never its transcripts), and how the rows of two
runs pair: by content, the k-th duplicate of a row in A with the k-th in B."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from osmosis_local_runner.results.documents import Row, excerpt, majority_passes
from osmosis_local_runner.results.slices import slice_value


@dataclass
class RowStats:
    """What a comparison keeps of one row (not its transcripts)."""

    index: int
    digest: str
    means: dict[str, float | None]
    passes: dict[str, tuple[int, int]]  # fn → (attempts, passing attempts)
    prompt: str
    #: fn → (the answer of its best-scoring attempt, of its worst-scoring attempt)
    answers: dict[str, tuple[str, str]]
    #: column → the row's value, for the columns a comparison is sliced by
    slices: dict[str, str] = field(default_factory=dict)
    expected: str | None = None

    @classmethod
    def of(
        cls, row: Row, fns: Sequence[str], threshold: float, by: Sequence[str] = ()
    ) -> RowStats:
        runs = row.scored()
        answers = {}
        for fn in fns:
            ranked = sorted(runs, key=lambda r: (r.scores.get(fn, 0.0), -r.run_index))
            answers[fn] = (
                (excerpt(ranked[-1].answer), excerpt(ranked[0].answer)) if ranked else ("", "")
            )
        return cls(
            index=row.index,
            digest=row.digest,
            means={fn: row.mean_score(fn) for fn in fns},
            passes={fn: row.passes(fn, threshold) for fn in fns},
            prompt=excerpt(row.prompt()),
            answers=answers,
            slices={column: slice_value(row.metadata, column) for column in by},
            expected=excerpt(row.expected),
        )

    def majority_passes(self, fn: str) -> bool:
        """A row passes when more than half of its attempts pass."""
        return majority_passes(*self.passes[fn])


def pair_rows(
    a: Sequence[RowStats], b: Sequence[RowStats]
) -> tuple[list[tuple[RowStats, RowStats]], int, int]:
    """Pairs by content digest (duplicates in row order); rows without a digest pair by
    row index — all rows do when one side has no digests at all (e.g. a hosted run whose
    dataset is not here). Returns (pairs in A's row order, unpaired in A, unpaired in B)."""
    by_digest = any(r.digest for r in a) and any(r.digest for r in b)

    def key_of(row: RowStats) -> str:
        return row.digest if by_digest and row.digest else f"#{row.index}"

    waiting: dict[str, list[RowStats]] = defaultdict(list)
    for row in sorted(b, key=lambda r: r.index):
        waiting[key_of(row)].append(row)
    taken: dict[str, int] = defaultdict(int)
    pairs = []
    for row in sorted(a, key=lambda r: r.index):
        key = key_of(row)
        candidates = waiting.get(key, [])
        if taken[key] < len(candidates):
            pairs.append((row, candidates[taken[key]]))
            taken[key] += 1
    return pairs, len(a) - len(pairs), len(b) - len(pairs)
