"""What a cut stream had delivered: its parse is a retryable failure holding the partial turn."""

from __future__ import annotations

from fcreplay.decision import Decision, ProviderError


def arrived(result: Decision | ProviderError) -> Decision:
    """The partial turn of a stream that ended before its terminal event."""
    assert isinstance(result, ProviderError), result
    assert (result.type, result.retryable) == ("incomplete_stream", True)
    assert isinstance(result.raw, Decision)
    return result.raw
