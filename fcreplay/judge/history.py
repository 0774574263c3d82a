"""Tool-loop rules checked on a request's history, in no wire format's terms.

Rules (each problem names its rule, where it is, and the call ids involved):

- `unanswered`: a call no result answers;
- `answered_twice`: a call answered by more than one result;
- `unknown_call`: a result whose call id no earlier call has;
- `split_results`: the results of one turn spread over several messages, where the
  format wants them in one (the seed's example: it teaches the model to stop
  calling in parallel);
- `misplaced_results`: results not where the format wants them (not the next
  message, something between the turn and its results, a result before its call);
- `count_mismatch` / `name_mismatch`: for formats paired by name, the next
  message's results do not match the turn's calls in number or names;
- `too_many_steps`: the conversation has made more model requests than `max_steps`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Literal

from fcreplay.finding import Finding
from fcreplay.history import History, HistoryMessage

HistoryRule = Literal[
    "unanswered",
    "answered_twice",
    "unknown_call",
    "split_results",
    "misplaced_results",
    "count_mismatch",
    "name_mismatch",
    "too_many_steps",
]
RULES: tuple[HistoryRule, ...] = HistoryRule.__args__  # type: ignore[attr-defined]
_RESULTS = attrgetter("results")


@dataclass(frozen=True)
class HistoryProblem:
    """One broken tool-loop rule in one request's history."""

    rule: HistoryRule
    pointer: str
    """Where in the request body: the assistant turn concerned, or the result."""
    call_ids: tuple[str, ...]
    message: str


def history_of(adapter: object, body: Any) -> History | None:
    """A request body's history read by the adapter's optional `read_history`, else None."""
    # What `isinstance(adapter, HistoryReader)` checks, without walking the protocol's
    # members on every turn of every attempt.
    read_history = getattr(adapter, "read_history", None)
    if read_history is None:
        return None
    history: History = read_history(body)
    return history


def history_finding(problem: HistoryProblem) -> Finding:
    """A history problem as a `broken_history` finding (expected: nothing; actual: the ids)."""
    return Finding(
        "broken_history",
        problem.pointer,
        None,
        list(problem.call_ids),
        f"{problem.rule}: {problem.message}",
    )


def check_history(history: History, *, max_steps: int | None = None) -> list[HistoryProblem]:
    """Every rule the history breaks; [] when the tool loop is well formed."""
    turns = history.turns
    if not turns and not any(map(_RESULTS, history.messages)):
        # No call and no result (a conversation's first request, most often): no rule
        # of either pairing has anything to look at.
        problems: list[HistoryProblem] = []
    elif history.pairing == "name":
        problems = _by_name(history, turns)
    else:
        problems = _by_id(history, turns)
    steps = len(turns) + 1  # the turns replayed, plus the request itself
    if max_steps is not None and steps > max_steps:
        problems.append(
            HistoryProblem(
                "too_many_steps",
                turns[-1].pointer if turns else "",
                (),
                f"this is model request {steps} of the conversation; max_steps is {max_steps}",
            )
        )
    return problems


def _by_id(history: History, turns: tuple[HistoryMessage, ...]) -> list[HistoryProblem]:
    problems: list[HistoryProblem] = []
    called: dict[str, HistoryMessage] = {}
    answers: dict[str, list[HistoryMessage]] = {}
    for message in history.messages:
        for call in message.calls:
            if call.call_id is not None:
                called[call.call_id] = message
        for result in message.results:
            if result.call_id is None:
                continue
            turn = called.get(result.call_id)
            if turn is None:
                problems.append(
                    HistoryProblem(
                        "unknown_call",
                        message.pointer,
                        (result.call_id,),
                        f"{message.pointer} answers call {result.call_id}, which no earlier "
                        "assistant turn made",
                    )
                )
                continue
            answers.setdefault(result.call_id, []).append(message)
    for turn in turns:
        # One pass over the turn's ids: which have no result, which more than one, and
        # where their results stand.
        missing: list[str] = []
        twice: list[str] = []
        answered: list[str] = []
        indexes: set[int] = set()
        for call in turn.calls:
            i = call.call_id
            if i is None:
                continue
            got = answers.get(i)
            if got is None:
                missing.append(i)
                continue
            answered.append(i)
            if len(got) > 1:
                twice.append(i)
            indexes.update([m.index for m in got])
        if missing:
            problems.append(
                HistoryProblem(
                    "unanswered",
                    turn.pointer,
                    tuple(missing),
                    f"the assistant turn at {turn.pointer} made calls no result answers: "
                    + ", ".join(missing),
                )
            )
        if twice:
            problems.append(
                HistoryProblem(
                    "answered_twice",
                    turn.pointer,
                    tuple(twice),
                    f"calls of the assistant turn at {turn.pointer} are answered more than "
                    "once: " + ", ".join(twice),
                )
            )
        if indexes:
            problems += _placement(history, turn, tuple(answered), sorted(indexes))
    return problems


def _placement(
    history: History, turn: HistoryMessage, answered: tuple[str, ...], places: list[int]
) -> list[HistoryProblem]:
    """Whether the messages holding a turn's results (`places`) stand where they must."""
    if history.placement == "after":
        if places[0] > turn.index:  # sorted: none stands before the call
            return []
        where = [history.messages[index].pointer for index in places]
        return [_misplaced(turn, answered, f"a result stands before its call ({where[0]})")]
    if history.placement == "next_message":
        if len(places) == 1 and places[0] == turn.index + 1:
            return []  # the one message right after the turn, as wanted
        where = [history.messages[index].pointer for index in places]
        if len(places) > 1:
            return [
                HistoryProblem(
                    "split_results",
                    turn.pointer,
                    answered,
                    f"the results of the assistant turn at {turn.pointer} are split over "
                    f"{len(places)} messages ({', '.join(where)}); all results of one turn "
                    f"belong in the next message (call ids {', '.join(answered)})",
                )
            ]
        if places[0] != turn.index + 1:
            return [_misplaced(turn, answered, f"they stand at {where[0]}, not right after it")]
        return []
    # right_after: one message per result, contiguous, directly after the turn.
    expected = list(range(turn.index + 1, turn.index + 1 + len(places)))
    if places != expected:
        where = [history.messages[index].pointer for index in places]
        between = [
            history.messages[i].pointer
            for i in range(turn.index + 1, places[-1])
            if i not in places
        ]
        detail = (
            f"{', '.join(between)} stands between the turn and its results"
            if between
            else f"they stand at {', '.join(where)}, not right after it"
        )
        return [_misplaced(turn, answered, detail)]
    return []


def _misplaced(turn: HistoryMessage, ids: tuple[str, ...], detail: str) -> HistoryProblem:
    return HistoryProblem(
        "misplaced_results",
        turn.pointer,
        ids,
        f"the results of the assistant turn at {turn.pointer} (call ids {', '.join(ids)}) are "
        f"misplaced: {detail}",
    )


def _by_name(history: History, turns: tuple[HistoryMessage, ...]) -> list[HistoryProblem]:
    problems: list[HistoryProblem] = []
    messages = history.messages
    for turn in turns:
        following = messages[turn.index + 1] if turn.index + 1 < len(messages) else None
        ids = tuple(call.call_id or call.name for call in turn.calls)
        if following is None or not following.results:
            problems.append(
                HistoryProblem(
                    "unanswered",
                    turn.pointer,
                    ids,
                    f"the model turn at {turn.pointer} made calls ({', '.join(ids)}) and the "
                    "next message holds no results for them",
                )
            )
            continue
        later = [
            m.pointer
            for m in messages[turn.index + 2 :]
            if m.results and not m.calls and _continues(messages, turn.index, m.index)
        ]
        if later:
            problems.append(
                HistoryProblem(
                    "split_results",
                    turn.pointer,
                    ids,
                    f"the results of the model turn at {turn.pointer} are split over "
                    f"{len(later) + 1} messages ({following.pointer}, {', '.join(later)}); "
                    "all results of one turn belong in the next message",
                )
            )
            continue
        wanted = Counter(call.name for call in turn.calls)
        got = Counter(result.name for result in following.results)
        if sum(got.values()) != sum(wanted.values()):
            problems.append(
                HistoryProblem(
                    "count_mismatch",
                    following.pointer,
                    ids,
                    f"{following.pointer} holds {sum(got.values())} results for the "
                    f"{sum(wanted.values())} calls of the model turn at {turn.pointer}",
                )
            )
        elif got != wanted:
            problems.append(
                HistoryProblem(
                    "name_mismatch",
                    following.pointer,
                    ids,
                    f"{following.pointer} answers {sorted(got.elements(), key=str)} for the calls "
                    f"{sorted(wanted.elements())} of the model turn at {turn.pointer}",
                )
            )
    return problems


def _continues(messages: tuple[HistoryMessage, ...], turn: int, index: int) -> bool:
    """Whether every message from the turn to `index` holds results only (one spread answer)."""
    return all(messages[i].results and not messages[i].calls for i in range(turn + 1, index + 1))
