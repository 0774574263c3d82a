"""Rules the package keeps: imports run one way (no cycles); modules are small and documented."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from .conftest import ROOT

PACKAGE = ROOT / "fcreplay"
MAX_LINES = 400
"""Every module stays under this many lines."""
INITS_WITH_CODE = frozenset({"fcreplay"})
"""The lazy public face; every other __init__ is its docstring only."""
WIRE_WORDS = (
    "tool_use",
    "tool_calls",
    "function_call",
    "input_schema",
    "functionDeclarations",
    "functionCall",
    "functionResponse",
    "parametersJsonSchema",
    "stop_reason",
    "finishReason",
    "content_block",
    "output_text",
    "alt=sse",
)
"""Provider wire vocabulary: only fcreplay/adapters/ speaks it."""
BUILT_IN_NAMES = ("openai_chat", "openai_responses", "anthropic", "gemini")
WIRE_EXCEPTIONS = frozenset({"fcreplay/cassettes/redaction.py"})
"""Credential scrubbing names provider headers on purpose: it must also clean cassettes
of formats no registered adapter speaks."""


def modules(package: Path) -> dict[str, Path]:
    """Every module of `package` by dotted name, a package named by its __init__.py."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported_names(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The dotted names one import statement reaches, relative imports resolved.

    `from a.b import c` reaches both `a.b` and `a.b.c`: `c` may be a submodule,
    and `a.b` runs either way.
    """
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        base = parts[: len(parts) - node.level + 1]
        prefix = ".".join([*base, *([node.module] if node.module else [])])
    else:
        prefix = node.module or ""
    return [prefix, *(f"{prefix}.{alias.name}" for alias in node.names)]


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, wherever the import stands.

    Module level, inside functions and under TYPE_CHECKING all count: each is an
    arrow a reader has to follow, and a lazy import only hides a cycle. A name
    counts as an edge to the longest module prefix that exists.
    """
    known = modules(package)
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in imported_names(name, is_package, node):
                parts = target.split(".")
                while parts and ".".join(parts) not in known:
                    parts.pop()
                if parts:
                    graph[name].add(".".join(parts))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: strongly connected components of two or more modules, and
    modules that import themselves; each sorted, in sorted order (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def docstring_problems(package: Path) -> list[str]:
    """Modules without a docstring that opens with a one-line summary."""
    problems = []
    for name, path in modules(package).items():
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
        lines = (docstring or "").split("\n")
        if not lines[0].strip():
            problems.append(f"{name}: no docstring, or it opens with a blank line")
        elif len(lines) > 1 and lines[1].strip():
            problems.append(f"{name}: the docstring's summary runs over more than one line")
    return problems


def long_modules(package: Path) -> list[str]:
    """Modules of MAX_LINES lines or more, with their length."""
    lengths = {
        name: len(path.read_text(encoding="utf-8").splitlines())
        for name, path in modules(package).items()
    }
    return [f"{name}: {n} lines" for name, n in lengths.items() if n >= MAX_LINES]


def inits_with_code(package: Path, allowed: frozenset[str]) -> list[str]:
    """Package __init__ files holding more than their docstring (their imports make cycles)."""
    return [
        name
        for name, path in modules(package).items()
        if path.name == "__init__.py"
        and name not in allowed
        and len(ast.parse(path.read_text(encoding="utf-8")).body) != 1
    ]


# --- the rules, on fcreplay ---------------------------------------------------------------


def test_fcreplay_has_no_import_cycles() -> None:
    found = cycles(import_graph(PACKAGE))
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_every_module_opens_with_a_one_line_docstring() -> None:
    assert docstring_problems(PACKAGE) == []


def test_every_module_is_under_400_lines() -> None:
    assert long_modules(PACKAGE) == []


def test_package_inits_hold_only_their_docstring() -> None:
    assert inits_with_code(PACKAGE, INITS_WITH_CODE) == []


def test_no_module_outside_the_adapters_speaks_a_wire_format() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("fcreplay/adapters/") or relative in WIRE_EXCEPTIONS:
            continue
        text = path.read_text(encoding="utf-8")
        offenders += [
            f"{relative}: {word}" for word in WIRE_WORDS if re.search(rf"\b{word}\b", text)
        ]
        offenders += [
            f"{relative}: the adapter name {name!r}"
            for name in BUILT_IN_NAMES
            if f'"{name}"' in text or f"'{name}'" in text
        ]
    assert offenders == []


# --- the checks themselves, on a package made to break them -------------------------------


def write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_every_kind_of_import_closes_a_cycle(tmp_path: Path) -> None:
    package = write(
        tmp_path,
        {
            "pkg/__init__.py": '"""Top."""\n',
            # module level, and a relative import inside a function
            "pkg/a.py": "from pkg.b import helper\n",
            "pkg/b.py": "def helper():\n    from . import a\n",
            # under TYPE_CHECKING, and a plain import of a dotted name
            "pkg/c.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from pkg.sub.d import D\n",
            "pkg/sub/d.py": "import pkg.c\nclass D: ...\n",
            # a module importing itself through its package
            "pkg/e.py": "from pkg import e\n",
            # `from pkg.sub import g` reaches pkg.sub itself, whose __init__ imports back
            "pkg/sub/__init__.py": "from .. import f\n",
            "pkg/f.py": "from pkg.sub import g\n",
            # one way only, and imports from outside the package
            "pkg/ok.py": "import json\nfrom pkg.a import helper\nfrom pkg.sub.d import D\n",
        },
    )
    graph = import_graph(package)
    assert graph["pkg.sub"] == {"pkg", "pkg.f"}  # `from .. import f` in a package __init__
    assert graph["pkg.ok"] == {"pkg.a", "pkg.sub.d"}  # D is a name: its module is the edge
    assert cycles(graph) == [
        ["pkg.a", "pkg.b"],
        ["pkg.c", "pkg.sub.d"],
        ["pkg.e"],
        ["pkg.f", "pkg.sub"],
    ]


def test_one_way_imports_are_no_cycle(tmp_path: Path) -> None:
    package = write(
        tmp_path,
        {
            "pkg/__init__.py": '"""Top."""\n',
            "pkg/result.py": "class Result: ...\n",
            "pkg/render.py": "from pkg.result import Result\n",
            "pkg/cli.py": "def main():\n    from pkg import render, result\n",
        },
    )
    graph = import_graph(package)
    assert graph["pkg.cli"] == {"pkg", "pkg.render", "pkg.result"}
    assert cycles(graph) == []


def test_the_module_rules_name_each_offender(tmp_path: Path) -> None:
    package = write(
        tmp_path,
        {
            "pkg/__init__.py": '"""Top."""\nfrom pkg import good\n',
            "pkg/good.py": '"""One line.\n\nThen a paragraph.\n"""\n' + "x = 1\n" * (MAX_LINES - 5),
            "pkg/bare.py": "x = 1\n",
            "pkg/wordy.py": '"""A summary that\ngoes on."""\n',
            "pkg/blank.py": '"""\nLate summary."""\n',
            "pkg/long.py": '"""Long."""\n' + "x = 1\n" * MAX_LINES,
            "pkg/sub/__init__.py": '"""Sub."""\n',
        },
    )
    assert docstring_problems(package) == [
        "pkg.bare: no docstring, or it opens with a blank line",
        "pkg.blank: no docstring, or it opens with a blank line",
        "pkg.wordy: the docstring's summary runs over more than one line",
    ]
    assert long_modules(package) == [f"pkg.long: {MAX_LINES + 1} lines"]
    assert inits_with_code(package, frozenset()) == ["pkg"]
    assert inits_with_code(package, frozenset({"pkg"})) == []
