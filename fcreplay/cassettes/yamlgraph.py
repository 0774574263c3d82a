"""The shape of a composed YAML node graph, checked before anything is built from it.

YAML aliases share nodes, so a kilobyte of text can stand for a document of billions
of nodes (an alias bomb); and a node can contain itself. Both are found here from
the composed nodes alone, without importing yaml.
"""

from __future__ import annotations

from typing import Any

from fcreplay.limits import Limits


def yaml_graph_problem(root: Any, limits: Limits) -> str | None:
    """Why a composed YAML node graph must not be built, or None.

    Counts the nodes every alias would copy and the depth of the expanded tree in
    one pass over the distinct nodes; a node that contains itself is refused too.
    """
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    unique = 0
    stack: list[tuple[Any, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        children = _yaml_children(node)
        if children_done:
            open_nodes.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in children)
            depth[key] = 1 + max((depth[id(child)] for child in children), default=0)
            unique += 1
            if size[key] - unique > limits.max_yaml_alias_nodes:
                return (
                    f"YAML aliases expand to more than {limits.max_yaml_alias_nodes} extra "
                    "nodes (the max_yaml_alias_nodes limit; an alias bomb?); raise "
                    "max_yaml_alias_nodes only if the cassette is trusted"
                )
            if depth[key] > limits.max_json_depth:
                return (
                    f"nested deeper than {limits.max_json_depth} levels (the max_json_depth "
                    "limit); flatten the document"
                )
            continue
        if key in size:
            continue
        open_nodes.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in open_nodes:
                return "a YAML alias refers to a node that contains it (a recursive alias)"
            if id(child) not in size:
                stack.append((child, False))
    return None


def _yaml_children(node: Any) -> list[Any]:
    value = node.value
    if not isinstance(value, list):
        return []  # a scalar
    if value and isinstance(value[0], tuple):
        return [part for pair in value for part in pair]  # a mapping's (key, value) pairs
    return list(value)
