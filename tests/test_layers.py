"""The layer table of the package (README, "Where things are"): data flows one way, and no room reaches sideways or back up.

Each room (a top-level module or package of ``stickyproof``) may import only the rooms listed for
it. A new room must be added here with what it may import; an import outside its row fails, naming
the file and the import. The oracle's row is the project's one rule: it never sees the assignors
or the leader.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "stickyproof"

BASE = {"errors", "model"}
LAYERS: dict[str, set[str]] = {
    "errors": set(),
    "_perf": set(),
    "javaorder": set(),
    "__init__": BASE,
    "_json": {"errors"},
    "model": {"errors", "_json"},
    "wire": BASE | {"javaorder"},
    "assignors": BASE | {"wire", "javaorder", "_perf"},
    "peers": BASE | {"wire", "assignors", "_perf"},  # adapters build on the assignors' base types, never on lookup
    "lookup": BASE | {"assignors", "peers"},  # the one place a name becomes an assignor
    "leader": BASE | {"wire", "javaorder", "assignors", "lookup"},
    "oracle": BASE | {"_perf"},
    "scenarios": BASE,
    "strategies": BASE | {"scenarios", "lookup"},  # groups(assignor="name") reads the protocols it supports
    "grading": BASE | {"assignors", "lookup", "leader", "oracle"},
    "group": BASE | {"wire", "assignors", "lookup", "leader", "scenarios", "grading", "_perf"},
    "live": BASE | {"peers", "group", "scenarios", "lookup", "grading", "sweep"},  # real broker and members; monitors; settled grades as sweep rows
    "hunt": BASE | {"assignors", "lookup", "grading", "oracle", "scenarios", "strategies"},
    "sweep": BASE | {"assignors", "lookup", "grading", "oracle", "scenarios", "group"},
    "importers": BASE | {"wire"},
    "explain": BASE | {"importers", "assignors", "lookup", "grading", "oracle"},  # two looks at a group, judged
    "junit": BASE | {"hunt", "sweep", "grading"},  # JUnit XML of a hunt's result or a sweep's rows
    "prove": {"errors"},  # runs proofs/ (outside the package); proofs/ never imports the assignors
    "cli": None,  # the command line may import every room
    "_entry": {"cli"},  # the console script: imports the command line under its Ctrl-C rule
    "__main__": {"_entry"},  # python -m stickyproof
}


def _room(path: Path) -> str:
    return path.relative_to(SRC).with_suffix("").parts[0]


def _dynamic_target(node: ast.Call) -> str | None:
    """The module a call to ``importlib.import_module``/``__import__`` names, when it is written as a
    string (an f-string keeps its leading constant part): what an import statement would say."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name not in ("import_module", "__import__") or not node.args:
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        return str(arg.values[0].value)
    return None


def _imported_rooms(path: Path) -> list[tuple[int, str]]:
    """(line, room) for every import of another stickyproof room in ``path``: import statements and
    ``importlib.import_module("stickyproof.x")`` / ``import_module(".x", __package__)`` calls alike
    (a dynamic import hides a dependency from a reader, not from this test)."""
    package = list(path.relative_to(SRC).with_suffix("").parts)[:-1]  # the package the module sits in
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and (target := _dynamic_target(node)) is not None:
            if target.startswith("stickyproof."):
                found.append((node.lineno, target.split(".")[1]))
            elif target.startswith("."):  # relative to the package the call sits in
                dots = len(target) - len(target.lstrip("."))
                base = package[: len(package) - (dots - 1)] if dots > 1 else package
                rest = [p for p in target[dots:].split(".") if p]
                target_parts = base + rest
                if target_parts:
                    found.append((node.lineno, target_parts[0]))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                target = base + [p for p in (node.module or "").split(".") if p]
                names = target[:1] if target else [a.name for a in node.names]
            elif node.module and node.module.split(".")[0] == "stickyproof":
                parts = node.module.split(".")
                names = parts[1:2] if len(parts) > 1 else [a.name for a in node.names]
            else:
                continue
            found += [(node.lineno, n) for n in names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "stickyproof" and len(parts) > 1:
                    found.append((node.lineno, parts[1]))
    return found


def test_every_room_is_in_the_layer_table():
    rooms = {_room(p) for p in SRC.rglob("*.py")}
    missing = sorted(rooms - set(LAYERS))
    assert not missing, f"rooms without a row in the layer table (add what they may import): {missing}"


def test_no_room_imports_outside_its_row():
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        room = _room(path)
        allowed = LAYERS.get(room)
        if allowed is None:
            continue
        for line, target in _imported_rooms(path):
            if target != room and target != "__version__" and target not in allowed:
                problems.append(f"{path.relative_to(SRC)}:{line}: {room} imports {target}")
    assert not problems, "imports against the layer table:\n  " + "\n  ".join(problems)


def test_the_table_has_no_cycle():
    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in LAYERS.get(start) or ():
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    cyclic = [room for room in LAYERS if LAYERS[room] is not None and reaches(room, room, {room})]
    assert not cyclic, f"the layer table allows a cycle through {cyclic}"


def test_a_dynamic_import_of_a_room_is_seen(tmp_path):
    """An ``importlib.import_module`` of another room counts as importing it: a cycle made that way
    (as ``assignors.registry`` once loaded ``stickyproof.peers``) fails the layer table."""
    room = SRC / "assignors"
    probe = room / "_layer_probe_for_test.py"
    probe.write_text('import importlib\n\ndef f():\n    return importlib.import_module("stickyproof.peers")\n'
                     'def g():\n    return importlib.import_module(f"..lookup", __package__)\n')
    try:
        assert _imported_rooms(probe) == [(4, "peers"), (6, "lookup")]
    finally:
        probe.unlink()



def _private_reads_from_elsewhere(path: Path) -> list[str]:
    """``x._name`` in ``path`` where ``_name`` is neither defined nor assigned in that module: a read
    of another module's private field or method (a subclass included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(n.name)
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
            own.add(n.attr)
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            own.add(n.target.id)
    return [f"{path.relative_to(SRC)}:{n.lineno}: .{n.attr}" for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and n.attr.startswith("_") and not n.attr.startswith("__") and n.attr not in own]


def test_the_simulators_and_the_grader_read_no_private_field_of_another_module():
    """The simulator and stepper call the leader and the simulation through their public API (once
    the stepper read six private fields of three classes and the simulator copied ``leader.lead``)."""
    paths = [*sorted((SRC / "group").glob("*.py")), *sorted((SRC / "grading").glob("*.py")), SRC / "leader.py", SRC / "lookup.py"]
    problems = [p for path in paths for p in _private_reads_from_elsewhere(path)]
    assert not problems, "private reads across modules:\n  " + "\n  ".join(problems)
