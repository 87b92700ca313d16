"""The package's layout holds its architecture: the import contracts (layers, Textual only in
the front ends, the front ends reaching agents through a conversation, no import loop), small
modules, few loose modules at the top, no test helper shipped, and every lazy import listed
with the figure that justifies it (bench/README.md, "Lazy imports")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "acp_tui"
LONGEST_MODULE = 600
LOOSE_MODULES = {"__init__", "__main__", "paths", "text", "versions", "workspace"}


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def test_the_import_contracts_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # pyproject.toml's [tool.importlinter]
    assert lint_imports(no_cache=True, no_logo=True) == 0


def test_no_module_is_over_600_lines() -> None:
    long = {
        name: count
        for name, path in modules().items()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > LONGEST_MODULE
    }
    assert long == {}


def test_a_handful_of_loose_modules_at_the_top() -> None:
    loose = {path.stem for path in PACKAGE.glob("*.py")}
    assert loose == LOOSE_MODULES


def test_no_test_helper_ships_in_the_package() -> None:
    for name, path in modules().items():
        leaf = name.rsplit(".", 1)[-1]
        assert not leaf.startswith(("test_", "conftest")) and leaf != "pilot", name
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {
            (node.module or "").split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
        }
        assert imported.isdisjoint({"pytest", "tests"}), name


def lazy_imports() -> set[tuple[str, str]]:
    """(module, what it imports inside a function) for every such import in the package;
    imports for type annotations only (`if TYPE_CHECKING:`) are not imports at run time."""
    found: set[tuple[str, str]] = set()

    class Visitor(ast.NodeVisitor):
        def __init__(self, module: str) -> None:
            self.module, self.depth = module, 0

        def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
            self.depth += 1
            self.generic_visit(node)
            self.depth -= 1

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_If(self, node: ast.If) -> None:
            if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            if self.depth:
                found.update((self.module, alias.name) for alias in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if self.depth and node.module:
                found.add((self.module, node.module))

    for name, path in modules().items():
        Visitor(name).visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def listed_lazy_imports() -> set[tuple[str, str]]:
    """The table of bench/README.md's "Lazy imports" section: a row per module, the modules
    it imports lazily in its second column."""
    readme = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Lazy imports\n", 1)[1].split("\n## ", 1)[0]
    listed: set[tuple[str, str]] = set()
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[0].startswith("`acp_tui"):
            continue
        module = cells[0].strip("`")
        listed.update((module, imported) for imported in re.findall(r"`([\w.]+)`", cells[1]))
    return listed


def test_every_lazy_import_is_listed_with_its_figure() -> None:
    """A lazy import costs a reader a surprise: each is there for start-up speed (or a
    platform), and says so in one place, with the figure; none is listed that is gone."""
    assert lazy_imports() == listed_lazy_imports()
