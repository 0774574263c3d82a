"""The openai loop against recorded (synthetic) exchanges: decisions, tools, history, golden."""

from __future__ import annotations

from typing import Any

import pytest
from agent_loop import openai_loop

pytestmark = pytest.mark.fcreplay(contract="contracts/tools.json")

BUG = "Save не працює на мобільному, застосунок падає. Заведи баг."
STATUS = "Дай статус тест-кейсів TC-1 і TC-2."


def test_a_bug_report_files_a_critical_bug(fcreplay: Any, openai_client: Any) -> None:
    answer = openai_loop.run(openai_client, BUG)
    assert "BUG-4213" in answer
    fcreplay.expect(
        {
            "kind": "tool_call",
            "tool": "create_bug",
            "arguments": {
                "title": "Save не працює на мобільному, застосунок падає",
                "severity": "critical",
            },
        },
        index=0,
    )
    fcreplay.expect({"kind": "text", "contains_any": ["BUG-4213"]})
    fcreplay.assert_golden()


def test_the_tools_sent_match_the_contract(fcreplay: Any, openai_client: Any) -> None:
    openai_loop.run(openai_client, BUG)
    fcreplay.assert_tools()


def test_parallel_results_go_back_together(fcreplay: Any, openai_client: Any) -> None:
    answer = openai_loop.run(openai_client, STATUS)
    assert "TC-2" in answer
    first = fcreplay.decisions[0]
    assert sorted(call.arguments["test_id"] for call in first.calls) == ["TC-1", "TC-2"]
    fcreplay.assert_history(max_steps=openai_loop.MAX_STEPS)
    fcreplay.assert_golden()
