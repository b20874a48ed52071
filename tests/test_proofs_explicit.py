"""``protocol.bounded``: the explicit-state search is the model BMC unrolls, its reductions are exact,
and the frontier (array) search that ``stickyproof prove --deep`` runs decides what the scalar one does."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

from stickyproof.prove import load_proofs, read_promises

PROOFS = Path(__file__).resolve().parents[1] / "proofs"


def _module(name: str):
    load_proofs(PROOFS)
    return importlib.import_module(f"stickyproof_proofs.{name}")


def _reachable(compiled, depth: int) -> list[tuple]:
    """Every state reachable in at most ``depth`` steps, without any reduction."""
    seen = {compiled.init}
    frontier = [compiled.init]
    for _ in range(depth):
        frontier = [t for s in frontier for _, _, t in compiled.successors(s) if t not in seen and not seen.add(t)]
    return sorted(seen)


def test_explicit_search_finds_kafka_7026_at_its_promised_length_and_agrees_with_bmc():
    explicit = _module("protocol.explicit")
    engine = _module("protocol.engine")
    stmts = _module("protocol.statements")
    promised = read_promises(PROOFS)["protocol.eager.kafka-7026"].length
    r = explicit.search(stmts.VARIANTS["kafka-7026"], stmts.SEARCH_SIZES, "no-double-consumption", promised + 2)
    assert r.violated and r.depth == promised  # trust-all: the search reaches the bug, and no sooner
    # the same verdicts as BMC at a small depth, both ways
    one_round = explicit.search(stmts.VARIANTS["one-round"], stmts.SEARCH_SIZES, "no-double-consumption", 12)
    assert one_round.violated and one_round.depth == read_promises(PROOFS)["protocol.cooperative.one-round"].length
    for key in ("eager", "cooperative"):
        e = explicit.search(stmts.VARIANTS[key], stmts.SEARCH_SIZES, "no-double-consumption", 8)
        b = engine.bmc(stmts.VARIANTS[key], stmts.SEARCH_SIZES, "no-double-consumption", 8)
        assert not e.violated and not b.violated and e.depth == b.depth == 8


def _z3_successors(engine, variant, sizes, compiled, s: tuple) -> set[tuple]:
    """All successors of ``s`` under ``engine.transition`` (the relation BMC unrolls), by enumeration."""
    import z3

    logic, state, model_mod = _module("logic"), _module("protocol.state"), _module("protocol.model")
    v = logic.Concrete(sizes)
    model = model_mod.ProtocolModel(variant)
    cur = state.ConcreteState(v, model_mod.STATE, "x")
    nxt = state.ConcreteState(v, model_mod.STATE, "y")
    cons, _, _ = engine.transition(model, v, cur, nxt, "t")
    solver = z3.Solver()
    solver.add(*cons)
    values = dict(zip(compiled.slots, s))
    for key, const in cur.consts.items():  # the ghosts (not in the tuple) start at 0
        solver.add(const == values.get(key, 0))
    outs = [nxt.consts[slot] for slot in compiled.slots]
    found = set()
    while solver.check() == z3.sat:
        m = solver.model()
        t = tuple(engine._value(m, o) for o in outs)
        found.add(t)
        solver.add(z3.Or(*[o != (z3.BoolVal(x) if isinstance(x, bool) else x) for o, x in zip(outs, t)]))
    return found


def test_explicit_successors_are_the_transition_bmc_unrolls():
    explicit = _module("protocol.explicit")
    engine = _module("protocol.engine")
    stmts = _module("protocol.statements")
    for key in ("eager", "cooperative"):
        compiled = explicit.compile_model(stmts.VARIANTS[key], stmts.SEARCH_SIZES)
        states = _reachable(compiled, 7)
        for s in states[:: max(1, len(states) // 12)]:
            mine = {t for _, _, t in compiled.successors(s)}
            assert mine == _z3_successors(engine, stmts.VARIANTS[key], stmts.SEARCH_SIZES, compiled, s), (key, s)


def test_explicit_reductions_are_exact_on_reachable_states():
    """Member renaming and the generation renumbering below pG map successors to successors (both
    ways) and keep both properties: the search over representatives visits every behaviour."""
    explicit = _module("protocol.explicit")
    stmts = _module("protocol.statements")
    for key in ("eager", "cooperative", "kafka-7026"):
        c = explicit.compile_model(stmts.VARIANTS[key], stmts.SEARCH_SIZES)
        states = _reachable(c, 11)
        renumbered = [s for s in states if c.compress(s) != s]
        assert len(renumbered) > 20  # the check below is not vacuous
        sample = renumbered[:: max(1, len(renumbered) // 150)] + states[:: max(1, len(states) // 150)]
        for s in sample:
            rep = c.canonical(s)
            assert {c.canonical(t) for _, _, t in c.successors(s)} == {c.canonical(t) for _, _, t in c.successors(rep)}
            for ok in c.props.values():
                assert ok(s) == ok(rep)


# ------------------------------------------------------------------------------------------
# the frontier search (vector.py): the same terms over arrays, the same classes, the same verdicts


def _frontier_parts(key: str):
    explicit, vector, stmts = _module("protocol.explicit"), _module("protocol.vector"), _module("protocol.statements")
    c = explicit.compile_model(stmts.VARIANTS[key], stmts.SEARCH_SIZES)
    return c, vector.vectorize(c), vector, stmts


def _columns(vec, F) -> list[tuple]:
    c = vec.compiled
    return [tuple(bool(x) if isinstance(c.init[i], bool) else int(x) for i, x in enumerate(col)) for col in F.T]


@pytest.mark.parametrize("key", ["eager", "cooperative", "kafka-7026"])
def test_frontier_successors_and_classes_equal_the_scalar_ones(key):
    c, vec, _, _ = _frontier_parts(key)
    states = _reachable(c, 10)
    sample = states[:: max(1, len(states) // 300)]
    # successors: the same multiset of states, state by state
    for s in sample[::10]:
        mine = sorted(_columns(vec, vec.successors(vec.array([s]))))
        assert mine == sorted(t for _, _, t in c.successors(s)), s
    # renumbering: column by column the scalar function
    assert _columns(vec, vec.compress(vec.array(sample))) == [c.compress(s) for s in sample]
    # representatives: a state and its scalar representative fall in one class, and the key tells classes apart
    _, k1 = vec.canonical(vec.array(sample))
    _, k2 = vec.canonical(vec.array([c.canonical(s) for s in sample]))
    assert (k1 == k2).all()
    classes = {c.canonical(s) for s in sample}
    assert len({bytes(k) for k in k1}) == len(classes)
    for name, ok in c.props.items():
        assert list(np.broadcast_to(vec.props[name](vec.array(sample)), (len(sample),))) == [ok(s) for s in sample]


@pytest.mark.parametrize("key, depth", [("eager", 12), ("cooperative", 12), ("kafka-7026", 18), ("one-round", 10)])
def test_frontier_search_counts_the_same_classes_at_every_depth(key, depth):
    explicit = _module("protocol.explicit")
    c, vec, vector, stmts = _frontier_parts(key)
    a = explicit.search(stmts.VARIANTS[key], stmts.SEARCH_SIZES, "no-double-consumption", depth, compiled=c)
    b = vector.search_frontiers(vec, "no-double-consumption", depth)
    assert (a.violated, a.depth) == (b.violated, b.depth)
    # the scalar search stops at the first bad state it meets, the frontier search after its whole depth
    assert a.per_depth[:-1] == b.per_depth[:-1]
    if not a.violated:
        assert a.per_depth == b.per_depth and a.states == b.states
    else:
        assert b.bad_state is not None and not c.props["no-double-consumption"](tuple(b.bad_state.values()))


def test_frontier_keys_refuse_a_value_outside_their_range():
    c, vec, _, _ = _frontier_parts("eager")
    s = list(c.init)
    s[c.slots.index(("G", ()))] = 300  # a generation the packing cannot hold: refused, never folded
    with pytest.raises(ValueError, match=r"G\[\] left its packing range"):
        vec.keys(vec.array([tuple(s)]))
