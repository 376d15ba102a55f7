"""lilo's import graph, module by module (every import statement, those inside functions
included): no circle, and no import from a lower layer to a higher one. Types and settings
at the bottom, the services that call models above them, the stages' computations above
those, the warehouse, the flows, and the command line at the top. A package's face
(`__init__.py`) only re-exports what its modules define."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("flows", "tasks", "warehouse", "expectations")

# Top first; a module is in the layer of the first entry that names it or a package above it.
LAYERS: list[tuple[str, int]] = [
    ("lilo.flows.cli", 6),
    ("lilo.flows", 5),
    ("lilo.warehouse", 4),
    ("lilo.tasks.llm.types", 0),
    ("lilo.tasks.llm.limits", 0),
    ("lilo.tasks.llm", 2),
    ("lilo.tasks.embeddings", 2),
    ("lilo.tasks.prompt_packs", 2),
    ("lilo.tasks.paper_tags", 1),
    ("lilo.tasks.parallel", 1),
    ("lilo.tasks.config", 0),
    ("lilo.tasks.records", 0),
    ("lilo.tasks.cache", 0),
    ("lilo.tasks.files", 0),
    ("lilo.tasks.text", 0),
    ("lilo.tasks.tokens", 0),
    ("lilo.tasks.lifetime", 0),
    ("lilo.tasks.arxiv_ids", 0),
    ("lilo.tasks.backoff", 0),
    ("lilo.tasks.bounded_http", 0),
    ("lilo.tasks.bounded_requests", 0),
    ("lilo.tasks.errors", 0),
    ("lilo.tasks.registry", 0),
    ("lilo.tasks.redact", 1),  # reads the configured keys (lilo.tasks.config)
    ("lilo.expectations", 0),
    ("lilo.tasks", 3),  # the stages' computations: methods, scoring, qa, samples, clean, ...
]


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(["lilo", *parts])] = path
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != module:
                    edges[module].add(target)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on.add(child)
                work.append((child, iter(sorted(edges[child]))))
            elif child in on:
                low[node] = min(low[node], index[child])
    return found


def layer(module: str) -> int:
    for prefix, level in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return level
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def test_no_import_circle():
    assert _cycles(_graph()) == []


def test_no_import_from_a_lower_layer_to_a_higher_one():
    edges = _graph()
    upward = [
        f"{m} (layer {layer(m)}) imports {t} (layer {layer(t)})"
        for m in sorted(edges)
        for t in sorted(edges[m])
        if layer(t) > layer(m)
    ]
    assert upward == []


def test_the_checks_can_see_a_circle_and_an_upward_import():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(edges) == [["a", "b", "c"]]
    assert (
        layer("lilo.tasks.config")
        < layer("lilo.tasks.methods.base")
        < layer("lilo.flows.cli._settings")
    )


def test_llm_and_methods_faces_only_re_export():
    for face in (
        "tasks/llm/__init__.py",
        "tasks/llm/offline/__init__.py",
        "tasks/methods/__init__.py",
    ):
        tree = ast.parse((ROOT / face).read_text(encoding="utf-8"))
        kinds = {type(n).__name__ for n in tree.body} - {"Expr", "ImportFrom", "Import"}
        assert kinds <= {"Assign"}, f"{face} defines {kinds}"


def test_no_module_only_forwards():
    """A module that is not a package's face defines something: one that only imports and
    re-exports is a layer to read through (callers import from where things live)."""

    def defines(node: ast.stmt) -> bool:
        if isinstance(node, ast.Expr | ast.Import | ast.ImportFrom):
            return False
        return not (isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__")

    forwarding = [
        module
        for module, path in _modules().items()
        if path.name != "__init__.py"
        and not any(map(defines, ast.parse(path.read_text(encoding="utf-8")).body))
        and path.stat().st_size
    ]
    assert forwarding == []
