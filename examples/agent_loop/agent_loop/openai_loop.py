"""The same tool loop on the OpenAI SDK: each result a `tool` message right after the turn."""

from __future__ import annotations

import json
from typing import Any

from agent_loop.tools import openai_tools, run_tool

MAX_STEPS = 10
MODEL = "agent-sim"


def run(client: Any, user_input: str) -> str:
    """Answer the user, calling tools until the model stops (or MAX_STEPS runs out)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": user_input}]
    for _ in range(MAX_STEPS):
        response = client.chat.completions.create(
            model=MODEL, tools=openai_tools(), messages=messages
        )
        message = response.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content or ""
        for call in message.tool_calls:
            content, _failed = run_tool(call.function.name, json.loads(call.function.arguments))
            # Chat Completions has no error flag: the failure is said in the content.
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return "stopped: too many steps"
