"""``EvalResult.agreement`` (``osmosis eval agreement``): a run's grader against the people
who reviewed it — and, named, a candidate grader on the same reviewed attempts, or a judge
graded again to see how often it agrees with itself (the attempts are graded again here,
through ``run/regrade/rescore.py``; the statistics are ``results/agreement*.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from osmosis_client.errors import InvalidInputError


def agreement(
    source: Path,
    reviews: Sequence[Any],
    fn: str | None,
    against: str | None,
    repeat: int | None,
    dataset: str | Path | None,
    cache: bool = False,
) -> dict[str, Any]:
    """See :meth:`EvalResult.agreement <osmosis_local_runner.api.results.EvalResult.agreement>`."""
    from osmosis_local_runner.results.documents.documents import ResultsFile
    from osmosis_local_runner.results.reviews.agreement import grader_agreement, reviewed_attempts

    document = ResultsFile(source)
    if against is None:
        if repeat is not None:
            raise InvalidInputError(
                "a judge graded again is named: give the grader to repeat (against)",
                code="USAGE",
            )
        return grader_agreement(document, reviews, fn)
    if repeat is not None and repeat < 2:
        raise InvalidInputError("repeat grades the attempts 2 times or more", code="USAGE")
    from osmosis_local_runner.results.statistics.scoring import passed
    from osmosis_local_runner.run.regrade.rescore import regrade_attempts

    keys = {one.key for one in reviewed_attempts(document, reviews, fn)}
    name, graded = regrade_attempts(
        source,
        against,
        keys,
        times=repeat or 1,
        dataset=Path(dataset) if dataset is not None else None,
        cache=cache,
    )
    threshold = document.pass_threshold
    verdicts = [{k: passed(r, name, threshold) for k, r in once.items()} for once in graded]
    return grader_agreement(
        document,
        reviews,
        fn,
        candidate=(name, verdicts[0]),
        repeats=verdicts if repeat else (),
    )


__all__ = ["agreement"]
