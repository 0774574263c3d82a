"""The tool loop on the Anthropic SDK: MAX_STEPS, `is_error` results, all results in one message."""

from __future__ import annotations

from typing import Any

from agent_loop.tools import anthropic_tools, run_tool

MAX_STEPS = 10
MODEL = "agent-sim"


def run(client: Any, user_input: str) -> str:
    """Answer the user, calling tools until the model stops (or MAX_STEPS runs out)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": user_input}]
    for _ in range(MAX_STEPS):
        response = client.messages.create(
            model=MODEL, max_tokens=512, tools=anthropic_tools(), messages=messages
        )
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            return "".join(block.text for block in response.content if block.type == "text")
        results = []
        for call in (block for block in response.content if block.type == "tool_use"):
            content, is_error = run_tool(call.name, call.input)
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": call.id,
                    "content": content,
                    "is_error": is_error,
                }
            )
        messages.append({"role": "user", "content": results})  # all results in one message
    return "stopped: too many steps"
