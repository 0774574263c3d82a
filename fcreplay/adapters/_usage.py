"""Token usage as each wire format reports it, read into one normalized `Usage`.

See `fcreplay.decision.Usage` for what the fields count: input with cached tokens
included, output with reasoning included, whatever the provider splits apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fcreplay.adapters._wire import as_dict
from fcreplay.decision import Decision, ProviderError, Usage
from fcreplay.neutral import StreamEvent


def with_usage(result: Decision | ProviderError, usage: Usage | None) -> Decision | ProviderError:
    """The decision with its usage set; errors and unknown usage pass unchanged."""
    if isinstance(result, Decision) and usage is not None:
        return result.with_usage(usage)
    return result


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _sum(*values: int | None) -> int | None:
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def _usage(inputs: Any, outputs: Any, cached: Any = None, reasoning: Any = None) -> Usage | None:
    counts = (_whole(inputs), _whole(outputs), _whole(cached), _whole(reasoning))
    # None when nothing was reported (what `Usage()` holds), without making one to compare.
    return None if counts == (None, None, None, None) else Usage(*counts)


def openai_chat(block: Any) -> Usage | None:
    """Chat Completions `usage` (prompt_tokens include cached, completion_tokens reasoning)."""
    usage = as_dict(block)
    return _usage(
        usage.get("prompt_tokens"),
        usage.get("completion_tokens"),
        as_dict(usage.get("prompt_tokens_details")).get("cached_tokens"),
        as_dict(usage.get("completion_tokens_details")).get("reasoning_tokens"),
    )


def openai_chat_stream(events: Sequence[StreamEvent]) -> Usage | None:
    """The usage chunk of a stream (sent when `stream_options.include_usage` asks)."""
    for event in reversed(events):  # the last chunk that has one
        data = event.data
        if isinstance(data, dict) and isinstance(block := data.get("usage"), dict):
            return openai_chat(block)
    return None


def openai_responses(block: Any) -> Usage | None:
    """Responses `usage` (input_tokens include cached, output_tokens reasoning)."""
    usage = as_dict(block)
    return _usage(
        usage.get("input_tokens"),
        usage.get("output_tokens"),
        as_dict(usage.get("input_tokens_details")).get("cached_tokens"),
        as_dict(usage.get("output_tokens_details")).get("reasoning_tokens"),
    )


def openai_responses_stream(events: Sequence[StreamEvent]) -> Usage | None:
    """The usage of the terminal event's response."""
    for event in reversed(events):
        response = as_dict(event.data).get("response") if isinstance(event.data, dict) else None
        if isinstance(response, dict) and isinstance(response.get("usage"), dict):
            return openai_responses(response["usage"])
    return None


def _cache_apart(block: Any, fresh: str, read: str, written: str, output: str) -> Usage | None:
    """A usage block that counts cache reads and writes apart from fresh input: all added."""
    usage = as_dict(block)
    reads = _whole(usage.get(read))
    inputs = _sum(_whole(usage.get(fresh)), reads, _whole(usage.get(written)))
    return _usage(inputs, usage.get(output), reads)


def anthropic(block: Any) -> Usage | None:
    """Messages `usage`: input_tokens exclude cache reads and writes, which are added."""
    return _cache_apart(
        block,
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "output_tokens",
    )


def gemini(block: Any) -> Usage | None:
    """`usageMetadata`: candidatesTokenCount excludes thoughts, which are added."""
    usage = as_dict(block)
    thoughts = _whole(usage.get("thoughtsTokenCount"))
    outputs = _sum(_whole(usage.get("candidatesTokenCount")), thoughts)
    return _usage(
        usage.get("promptTokenCount"), outputs, usage.get("cachedContentTokenCount"), thoughts
    )


def gemini_chunks(chunks: Sequence[Any]) -> Usage | None:
    """The last chunk's usageMetadata (each chunk carries the running totals)."""
    for chunk in reversed(chunks):
        if isinstance(chunk, dict) and isinstance(chunk.get("usageMetadata"), dict):
            return gemini(chunk["usageMetadata"])
    return None


def bedrock(block: Any) -> Usage | None:
    """Converse `usage`: inputTokens exclude cache reads and writes, which are added."""
    return _cache_apart(
        block, "inputTokens", "cacheReadInputTokens", "cacheWriteInputTokens", "outputTokens"
    )


def bedrock_stream(events: Sequence[StreamEvent]) -> Usage | None:
    """The `metadata` event's usage."""
    for event in reversed(events):
        if event.event == "metadata" and isinstance(event.data, dict):
            return bedrock(event.data.get("usage"))
    return None


def ollama(block: Any) -> Usage | None:
    """The final object's prompt_eval_count and eval_count (thinking tokens included)."""
    final = as_dict(block)
    return _usage(final.get("prompt_eval_count"), final.get("eval_count"))


# --- writing (the simulator's answers) ------------------------------------------------


def _n(value: int | None) -> int:
    return value or 0


def openai_chat_block(usage: Usage) -> dict[str, Any]:
    """`usage` of a Chat Completions body."""
    block: dict[str, Any] = {
        "prompt_tokens": _n(usage.input_tokens),
        "completion_tokens": _n(usage.output_tokens),
        "total_tokens": _n(usage.input_tokens) + _n(usage.output_tokens),
    }
    if usage.cached_tokens is not None:
        block["prompt_tokens_details"] = {"cached_tokens": usage.cached_tokens}
    if usage.reasoning_tokens is not None:
        block["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens}
    return block


def openai_responses_block(usage: Usage) -> dict[str, Any]:
    """`usage` of a Responses body."""
    return {
        "input_tokens": _n(usage.input_tokens),
        "input_tokens_details": {
            "cached_tokens": _n(usage.cached_tokens),
            "cache_write_tokens": 0,
        },
        "output_tokens": _n(usage.output_tokens),
        "output_tokens_details": {"reasoning_tokens": _n(usage.reasoning_tokens)},
        "total_tokens": _n(usage.input_tokens) + _n(usage.output_tokens),
    }


def _cache_apart_block(usage: Usage, fresh: str, read: str, output: str) -> dict[str, Any]:
    """Fresh input, output, and cache reads (when known) counted apart."""
    block: dict[str, Any] = {
        fresh: _n(usage.input_tokens) - _n(usage.cached_tokens),
        output: _n(usage.output_tokens),
    }
    if usage.cached_tokens is not None:
        block[read] = usage.cached_tokens
    return block


def anthropic_block(usage: Usage) -> dict[str, Any]:
    """`usage` of a Messages body: cache reads counted apart from input_tokens."""
    return _cache_apart_block(usage, "input_tokens", "cache_read_input_tokens", "output_tokens")


def gemini_block(usage: Usage) -> dict[str, Any]:
    """`usageMetadata`: thoughts counted apart from candidatesTokenCount."""
    block: dict[str, Any] = {
        "promptTokenCount": _n(usage.input_tokens),
        "candidatesTokenCount": _n(usage.output_tokens) - _n(usage.reasoning_tokens),
        "totalTokenCount": _n(usage.input_tokens) + _n(usage.output_tokens),
    }
    if usage.cached_tokens is not None:
        block["cachedContentTokenCount"] = usage.cached_tokens
    if usage.reasoning_tokens is not None:
        block["thoughtsTokenCount"] = usage.reasoning_tokens
    return block


def bedrock_block(usage: Usage) -> dict[str, Any]:
    """`usage` of a Converse body or of its stream's metadata event."""
    block = _cache_apart_block(usage, "inputTokens", "cacheReadInputTokens", "outputTokens")
    block["totalTokens"] = _n(usage.input_tokens) + _n(usage.output_tokens)
    return block


def ollama_counts(usage: Usage) -> dict[str, int]:
    """The counts of an `/api/chat` final object."""
    return {"prompt_eval_count": _n(usage.input_tokens), "eval_count": _n(usage.output_tokens)}
