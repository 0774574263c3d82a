"""The fail-on rule both checks share: the failing reasons, and the verdict opening the summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def failures(counts: Mapping[str, int], fail_on: Sequence[str]) -> dict[str, int]:
    """The fail-on reasons with a non-zero count, in fail-on order."""
    return {reason: counts[reason] for reason in fail_on if counts[reason]}


def verdict(failed: Mapping[str, int]) -> str:
    """`check passed`, or `check FAILED on` the counts of each failing reason."""
    if not failed:
        return "check passed"
    return "check FAILED on " + ", ".join(f"{n} {reason}" for reason, n in failed.items())
