"""The layering holds: no import cycle, not even for the type checker, and no layer reaches up;
no module is over 400 lines.

Cycles are looked for twice: among the imports that run (function-level imports included), and
with the `if TYPE_CHECKING:` imports too — an upward import only for annotations is replaced by a
`typing.Protocol` (or a base class) in the lower module, never hidden.

Layers, top to bottom: surfaces (cli and mcp — the agents' MCP server —, lsp) → adapters that
drive a Keeper (integrations: as a framework's storage backend; hooks: inside the agents' own
hooks) → api and the Keeper (`keeper/`: a facade over services), demo, render → session (a live
session: its records, operations, validation) → recovery → store → the vocabulary (events, schema,
ids, errors, clock, constraints, redact with its shapes). Agents' log readers (agents) sit beside
recovery: they may use store and the vocabulary, never a surface. Inside `keeper/`, no class
inherits another of the package's, and nothing but the facade (and `api`, which names it) imports
the facade.

Size: a module is split by role before it passes 400 lines. No module of the package is generated,
so none is exempt: `lsp/protocol.py` is the hand-written source, and what is generated from it
(`lsp/schema.py` writes the JSON Schema and PROTOCOL.md's tables; the extension's
`protocol-gen/*.gen.ts` are made from that schema) lies outside the package."""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest

LAYERS = [
    "cli | mcp",
    "lsp",
    "integrations | hooks",
    "api | keeper | demo | render",
    "session",
    "recovery | agents",
    "store",
    "schema",
    "events | ids | errors | clock | constraints | redact | redact_shapes",
]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    """The import graph of the package (TYPE_CHECKING imports excluded: they never run)."""
    return grimp.build_graph("sessionkeeper", exclude_type_checking_imports=True, cache_dir=None)


@pytest.fixture(scope="module")
def typed_graph() -> grimp.ImportGraph:
    """The import graph with the TYPE_CHECKING imports too (what the type checker follows)."""
    return grimp.build_graph("sessionkeeper", exclude_type_checking_imports=False,
                              cache_dir=None)


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


def _components(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan's), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in sorted(graph.find_modules_directly_imported_by(module)):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return sorted(found)


def test_no_module_imports_itself_even_for_the_type_checker(typed_graph: grimp.ImportGraph) -> None:
    """Fixture: `typed_graph` (TYPE_CHECKING imports included); the message names every circle."""
    assert _cycle(typed_graph) is None, _components(typed_graph)


MAX_LINES = 400


def test_no_module_is_over_400_lines() -> None:
    """Fixture: the package's source files (none is generated, none is exempt)."""
    root = Path(__file__).resolve().parents[2] / "server" / "sessionkeeper"
    sizes = {str(path.relative_to(root)): len(path.read_bytes().splitlines())
             for path in sorted(root.rglob("*.py"))}
    assert "lsp/protocol.py" in sizes, root
    over = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not over, over


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


def test_no_service_of_the_keeper_inherits_another_nor_imports_the_facade(
        graph: grimp.ImportGraph) -> None:
    """Fixture: `graph`; every class defined in `sessionkeeper.keeper`."""
    import importlib
    import inspect

    inherited, reaching = [], []
    for name in sorted(m for m in graph.modules if m.startswith("sessionkeeper.keeper.")):
        module = importlib.import_module(name)
        for cls in vars(module).values():
            if inspect.isclass(cls) and cls.__module__ == name:
                inherited += [(cls.__qualname__, base.__qualname__) for base in cls.__mro__[1:]
                              if base.__module__.startswith("sessionkeeper.keeper")]
        if name != "sessionkeeper.keeper.facade":
            reaching += [(name, m) for m in graph.find_modules_directly_imported_by(name)
                         if m in ("sessionkeeper.keeper.facade", "sessionkeeper.api")]
    assert not inherited and not reaching, (inherited, reaching)
