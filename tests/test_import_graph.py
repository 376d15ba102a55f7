"""lilo's import graph, module by module (every import statement, those inside functions
included), holds the layers docs/design.md §2 states: no circle; each unit (a tasks/
subpackage or module, the warehouse, the flows, the command line) imports only units of a
lower layer; no Prefect in tasks/ (tasks compute, flows orchestrate); DuckDB only in
warehouse/ (the tests may use it). A package's face (`__init__.py`) only re-exports what its
modules define.

`python tests/test_import_graph.py [ROOT]` prints the graph's numbers for a checkout."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("flows", "tasks", "warehouse", "expectations")

# Bottom first: types and plain helpers, settings and bounded I/O, the services that read
# papers and call models, the stages' computations with the warehouse just above the scorers,
# then the flows and the command line. A new unit goes in the lowest layer above everything
# it imports.
LAYERS: list[tuple[str, ...]] = [
    (
        "expectations",
        "tasks",
        "tasks.arxiv_ids",
        "tasks.backoff",
        "tasks.errors",
        "tasks.lifetime",
        "tasks.live",
        "tasks.printable",
        "tasks.paper_tags",
        "tasks.probe_records",
        "tasks.provenance",
        "tasks.records",
        "tasks.formatting",
        "tasks.stats",
        "tasks.text",
        "tasks.tokens",
    ),
    (
        "tasks.bounded_http",
        "tasks.extras",
        "tasks.files",
        "tasks.parallel",
        "tasks.prompt_packs",
        "tasks.registry",
        "tasks.report_records",
    ),
    ("tasks.bounded_requests", "tasks.cache", "tasks.config"),
    ("tasks.clean", "tasks.config_loading", "tasks.fetch", "tasks.redact", "tasks.validate"),
    ("tasks.embeddings", "tasks.llm", "tasks.samples", "tasks.synthetic"),
    ("tasks.methods", "tasks.qa"),
    ("tasks.scoring",),
    ("tasks.leaderboard", "warehouse"),
    ("tasks.results_report",),
    ("tasks.benchmark", "tasks.reproduce", "tasks.probes", "tasks.sweep"),
    ("flows",),
    ("flows.cli",),
]

# The warehouse stores records, it computes nothing: of tasks/ it imports only the plain
# units of the two lowest layers (records, report_records, errors, files). The domain units
# it still reads are listed here until they move below it; the list only shrinks (now
# empty: the flows hand the views' score columns in, warehouse/schema.py `ScoreColumn`).
WAREHOUSE_STILL_READS: tuple[str, ...] = ()

# Outside packages a folder may not import (a prefix names the package and its modules).
BANNED: dict[str, tuple[str, ...]] = {"tasks": ("prefect", "duckdb"), "flows": ("duckdb",)}


def _modules(root: Path) -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(["lilo", *parts])] = path
    return found


def _imports(module: str, path: Path) -> Iterable[str]:
    """Every name an import statement of the module reaches (absolute)."""
    here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
            yield base
            yield from (f"{base}.{a.name}" for a in node.names)


def _graph(root: Path = ROOT) -> dict[str, set[str]]:
    modules = _modules(root)
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for target in _imports(module, path):
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
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on:
                low[node] = min(low[node], index[child])
    return found


def unit(module: str) -> str:
    """The layered unit a module belongs to: `tasks.<first name>`, `flows.cli`, or its
    top package."""
    parts = module.removeprefix("lilo.").split(".")
    if parts[0] == "tasks" or parts[:2] == ["flows", "cli"]:
        return ".".join(parts[:2])
    return parts[0]


def layer(module: str) -> int:
    name = unit(module)
    for level, units in enumerate(LAYERS):
        if name in units:
            return level
    raise AssertionError(f"{name} is in no layer: add it to LAYERS in tests/test_import_graph.py")


def _unit_arrows(edges: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(unit(m), unit(t)) for m, ts in edges.items() for t in ts if unit(m) != unit(t)}


def _not_downward(arrows: Iterable[tuple[str, str]]) -> list[str]:
    return sorted(
        f"{a} (layer {layer(a)}) imports {b} (layer {layer(b)})"
        for a, b in arrows
        if layer(b) >= layer(a)
    )


def _banned(root: Path = ROOT) -> list[str]:
    found = []
    for module, path in sorted(_modules(root).items()):
        folder = module.split(".")[1]
        for target in _imports(module, path):
            for banned in BANNED.get(folder, ()):
                if target == banned or target.startswith(banned + "."):
                    found.append(f"{path.relative_to(root)} imports {banned}")
    return sorted(set(found))


def test_no_import_circle():
    edges = _graph()
    assert _cycles(edges) == []
    units = _unit_arrows(edges)
    assert _cycles({a: {b for x, b in units if x == a} for a, _ in units}) == []


def test_each_unit_imports_only_lower_layers():
    assert _not_downward(_unit_arrows(_graph())) == []


def _warehouse_domain_imports(arrows: Iterable[tuple[str, str]]) -> list[str]:
    """The tasks/ units above the two lowest layers that the warehouse imports."""
    return sorted(
        b for a, b in arrows if a == "warehouse" and b.startswith("tasks") and layer(b) > 1
    )


def test_the_warehouse_imports_no_new_domain_unit():
    assert _warehouse_domain_imports(_unit_arrows(_graph())) == sorted(WAREHOUSE_STILL_READS)
    assert _warehouse_domain_imports(
        {("warehouse", "tasks.qa"), ("warehouse", "tasks.records")}
    ) == ["tasks.qa"]


def test_no_prefect_in_tasks_and_duckdb_only_in_the_warehouse():
    assert _banned() == []


def test_the_checks_can_see_a_circle_an_upward_import_and_a_banned_one(tmp_path):
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(edges) == [["a", "b", "c"]]
    assert layer("lilo.tasks.config") < layer("lilo.tasks.methods.base") < layer("lilo.flows")
    assert layer("lilo.flows") < layer("lilo.flows.cli._settings")
    # the one upward arrow there was between tasks/ subpackages
    assert _not_downward({("tasks.qa", "tasks.scoring")}) != []
    assert _not_downward({("tasks.qa", "tasks.methods")}) != []  # same layer
    (tmp_path / "tasks" / "qa").mkdir(parents=True)
    (tmp_path / "tasks" / "qa" / "x.py").write_text(
        "def f():\n    from prefect.artifacts import create_markdown_artifact\n"
    )
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "y.py").write_text("import duckdb\n")
    (tmp_path / "warehouse").mkdir()
    (tmp_path / "warehouse" / "z.py").write_text("import duckdb\n")
    assert _banned(tmp_path) == [
        "flows/y.py imports duckdb",
        "tasks/qa/x.py imports prefect",
    ]


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
        for module, path in _modules(ROOT).items()
        if path.name != "__init__.py"
        and not any(map(defines, ast.parse(path.read_text(encoding="utf-8")).body))
        and path.stat().st_size
    ]
    assert forwarding == []


def numbers(root: Path) -> dict[str, object]:
    """The graph of the checkout at `root` in numbers, as the docs and reports quote them."""
    edges = _graph(root)
    arrows = _unit_arrows(edges)
    folders = {p.parent for m, p in _modules(root).items() if p.name == "__init__.py"}
    return {
        "files": len(edges),
        "folders": len(folders),
        "units": len({unit(m) for m in edges}),
        "levels": len(LAYERS),
        "module arrows": sum(map(len, edges.values())),
        "unit arrows": len(arrows),
        "upward arrows": len(_not_downward(arrows)),
        "module cycles": len(_cycles(edges)),
        "unit cycles": len(_cycles({a: {b for x, b in arrows if x == a} for a, _ in arrows})),
        "banned imports": len(_banned(root)),
    }


if __name__ == "__main__":
    checkout = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    for name, value in numbers(checkout).items():
        print(f"{name}: {value}")
    for line in _not_downward(_unit_arrows(_graph(checkout))) + _banned(checkout):
        print(" ", line)
