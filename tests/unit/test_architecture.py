"""The layering holds: no import cycle (function-level imports included), and no layer reaches up.

Layers, top to bottom: surfaces (cli and mcp — the agents' MCP server —, lsp) → adapters that
drive a Keeper (integrations: as a framework's storage backend; hooks: inside the agents' own
hooks) → api (with the Keeper's parts starting, reading, resuming), demo, render → session (with
its operations) → recovery → store → the vocabulary (events, schema, validate, ids, errors, clock,
constraints, redact). Agents' log readers (agents) sit beside recovery: they may use store and the
vocabulary, never a surface."""

from __future__ import annotations

import grimp
import pytest

LAYERS = [
    "cli | mcp",
    "lsp",
    "integrations | hooks",
    "api | starting | sharing | reading | resuming | demo | render",
    "session | operations",
    "recovery | agents",
    "store",
    "validate",
    "schema",
    "events | ids | errors | clock | constraints | redact | redact_shapes",
]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    """The import graph of the package (TYPE_CHECKING imports excluded: they never run)."""
    return grimp.build_graph("sessionkeeper", exclude_type_checking_imports=True)


def _cycle(graph: grimp.ImportGraph) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        stack.append(module)
        for other in sorted(graph.find_modules_directly_imported_by(module)):
            if state.get(other) == 1:
                return stack[stack.index(other):] + [other]
            if other not in state and (found := visit(other)):
                return found
        stack.pop()
        state[module] = 2
        return None

    for module in sorted(graph.modules):
        if module not in state and (found := visit(module)):
            return found
    return None


def test_no_module_imports_itself_through_others(graph: grimp.ImportGraph) -> None:
    """Fixture: `graph` (function-level imports included)."""
    assert _cycle(graph) is None


def test_no_layer_imports_a_layer_above_it(graph: grimp.ImportGraph) -> None:
    """Fixture: `graph`; LAYERS above."""
    layers = [grimp.Layer(*(name.strip() for name in line.split("|")), independent=False)
              for line in LAYERS]
    present = {m.split(".")[1] for m in graph.modules if m.count(".") >= 1}
    layers = [grimp.Layer(*(m for m in layer.module_tails if m in present), independent=False)
              for layer in layers]
    illegal = graph.find_illegal_dependencies_for_layers(
        layers=[layer for layer in layers if layer.module_tails], containers={"sessionkeeper"})
    assert not illegal, [(d.importer, d.imported, [r.chains for r in d.routes][:1])
                         for d in illegal]
