"""The explicit-state search of ``explicit.py`` over whole frontiers at once (numpy arrays).

``explicit.compile_model`` translates every step's guard and updates from Z3 terms into Python
functions of one state. Here the *same Z3 terms* are translated a second time, operator by operator,
into functions of a whole frontier: a state is a column of an ``int16`` array (one row per state
variable), a guard is a Boolean mask over the columns, an update builds the successors of the
columns the guard admits. The reductions are the same functions of a state, written over columns:

* the generation renumbering below ``pG`` (``Compiled.compress``): ranks of the distinct values
  strictly between 0 and ``pG``, computed by pairwise comparison of the generation rows;
* member renaming (``Compiled.perms``): every renaming of a column, and the one with the least key.

The key of a state is its variables packed into 64-bit words (one fixed width per variable, the
width checked against the values on every frontier, so two different states never share a key):
the visited set holds keys, a representative is the renaming with the least key. Which renaming
counts as least does not matter, only that it is a function of the state's class.

Nothing here decides anything the scalar search does not: ``tests/test_proofs.py`` runs both and
asks for the same number of classes at every depth and the same verdicts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import z3

from .explicit import GENERATIONS, GHOSTS, Compiled, SearchResult, _Emitter

__all__ = ["Vectorized", "vectorize", "search_frontiers", "reachable_within", "restrict"]


class _ArrayEmitter(_Emitter):
    """Z3 terms over the state constants -> numpy statements over ``S`` (rows = variables)."""

    TRUE, FALSE, AND, OR = "_T", "_F", " & ", " | "
    NOT, IMPLIES, ITE = "(~{0})", "((~{0}) | {1})", "_where({0}, {1}, {2})"
    WHERE = "vector search"

    def const(self, e: z3.ExprRef, slot: int) -> str:
        return f"(S[{slot}] != 0)" if z3.is_bool(e) else f"S[{slot}]"

    def function(self, body: Callable[[], list[str]]) -> Callable:
        """``def f(S)``: the statements ``body`` emits (shared subterms once), then its return lines."""
        self.names, self.lines = {}, []
        tail = body()
        src = "\n".join(["def f(S):"] + self.lines + tail) + "\n"
        scope: dict[str, Any] = {"_T": np.True_, "_F": np.False_, "_where": np.where}
        exec(compile(src, "<vector>", "exec"), scope)  # noqa: S102 - our own translation of Z3 terms
        return scope["f"]


@dataclass(frozen=True)
class Vectorized:
    """The compiled model over frontiers: per step a guard (mask) and an update (successor columns)."""

    compiled: Compiled
    steps: tuple[tuple[Callable, Callable], ...]
    props: dict[str, Callable]
    widths: tuple[tuple[int, int, int, int], ...]  # per variable: word, shift, width, offset
    words: int

    def array(self, states: list[tuple]) -> np.ndarray:
        return np.array(states, dtype=np.int16).T.copy() if states else np.zeros((len(self.widths), 0), np.int16)

    def compress(self, F: np.ndarray) -> np.ndarray:
        """``Compiled.compress`` of every column (generations between 0 and ``pG`` renumbered)."""
        gens = self.compiled.gens
        if not gens or F.shape[1] == 0:
            return F
        x = F[list(gens)].astype(np.int32)
        pg = x[-1]
        low = (x > 0) & (x < pg)
        first = low.copy()
        for i in range(1, len(gens)):
            for j in range(i):
                first[i] &= ~(low[j] & (x[j] == x[i]))
        nlow = first.sum(axis=0)
        rank = np.ones_like(x)
        for i in range(len(gens)):
            for j in range(len(gens)):
                rank[i] += first[j] & (x[j] < x[i])
        shift = pg - (nlow + 1)
        new = np.where(x <= 0, x, np.where(x < pg, rank, x - shift))
        new = np.where(pg >= 1, new, x)
        out = F.copy()
        out[list(gens)] = new
        return out

    def keys(self, F: np.ndarray) -> np.ndarray:
        """The packed key of every column, shape (n, words) uint64; refuses values that do not fit."""
        n = F.shape[1]
        out = np.zeros((self.words, n), dtype=np.uint64)
        for row, (word, shift, width, offset) in enumerate(self.widths):
            v = F[row].astype(np.int64) + offset
            if n and (v.min() < 0 or v.max() >= (1 << width)):
                name, idx = self.compiled.slots[row]
                raise ValueError(f"vector search: {name}{list(idx)} left its packing range [{-offset}, {(1 << width) - 1 - offset}]")
            out[word] |= v.astype(np.uint64) << np.uint64(shift)
        return np.ascontiguousarray(out.T)

    def canonical(self, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each column's representative (renumbered, then the renaming with the least key) and its key."""
        F = self.compress(F)
        K = self.keys(F)
        ident = tuple(range(F.shape[0]))
        for p in self.compiled.perms:
            if p == ident:
                continue
            Fp = F[list(p)]
            Kp = self.keys(Fp)
            less = np.zeros(F.shape[1], dtype=bool)
            decided = np.zeros(F.shape[1], dtype=bool)
            for w in range(self.words):
                less |= ~decided & (Kp[:, w] < K[:, w])
                decided |= Kp[:, w] != K[:, w]
            F[:, less] = Fp[:, less]
            K[less] = Kp[less]
        return F, K

    def successors(self, F: np.ndarray) -> np.ndarray:
        parts = []
        for guard, update in self.steps:
            m = guard(F)
            if np.ndim(m) == 0:
                if bool(m):
                    parts.append(update(F))
                continue
            if m.any():
                parts.append(update(F[:, m]))
        if not parts:
            return np.zeros((F.shape[0], 0), dtype=np.int16)
        return np.concatenate(parts, axis=1)


def vectorize(c: Compiled) -> Vectorized:
    if not c.terms:
        raise ValueError("vector search: the compiled model carries no terms")
    slot_of = dict(c.slot_of)
    const_at = {pos: cid for cid, pos in slot_of.items()}
    emit = _ArrayEmitter(slot_of)
    steps = []
    for guard, outs in c.terms:
        def guard_body(guard=guard):
            g = emit.term(guard)
            return [f"    return {g}"]

        def update_body(outs=outs):
            changed = [(i, emit.term(o)) for i, o in enumerate(outs) if o.get_id() != const_at[i]]
            return ["    O = S.copy()"] + [f"    O[{i}] = {t}" for i, t in changed] + ["    return O"]

        steps.append((emit.function(guard_body), emit.function(update_body)))
    props = {}
    for name, p in c.prop_terms:
        props[name] = emit.function(lambda p=p: [f"    return {emit.term(p)}"])
    widths, word, used = [], 0, 0
    for name, _ in c.slots:
        kind = "gen" if name in GENERATIONS or name == "pG" or name in GHOSTS else None
        is_bool = isinstance(c.init[len(widths)], bool)
        width, offset = (1, 0) if is_bool else ((8, 1) if kind else (3, 1))
        if used + width > 64:
            word, used = word + 1, 0
        widths.append((word, used, width, offset))
        used += width
    return Vectorized(c, tuple(steps), props, tuple(widths), word + 1)


def search_frontiers(vec: Vectorized, prop: str, depth: int, time_limit: float | None = None,
                     progress: Callable[[int, int, int], None] | None = None) -> SearchResult:
    """``explicit.search`` over frontiers: every class of states reachable in at most ``depth`` steps,
    each checked against ``prop``; the first depth with a bad state is the shortest counterexample."""
    start = time.perf_counter()
    c = vec.compiled
    ok = vec.props[prop]
    F, K = vec.canonical(vec.array([c.init]))
    seen = {bytes(K[0])}
    per_depth = [1]

    def result(violated: bool, d: int, saturated: bool, bad: dict | None = None) -> SearchResult:
        return SearchResult(violated, d, saturated, len(seen), tuple(per_depth), time.perf_counter() - start, bad)

    def first_bad(F: np.ndarray) -> dict | None:
        good = np.broadcast_to(ok(F), (F.shape[1],))
        if good.all():
            return None
        col = F[:, int(np.argmin(good))]
        return c.to_dict(tuple(bool(x) if isinstance(c.init[i], bool) else int(x) for i, x in enumerate(col)))

    bad = first_bad(F)
    if bad is not None:
        return result(True, 0, False, bad)
    for d in range(1, depth + 1):
        C, CK = vec.canonical(vec.successors(F))
        # distinct keys of this depth, then those never seen before (in key order: deterministic)
        view = CK.view(f"V{8 * vec.words}").ravel()
        uniq, idx = np.unique(view, return_index=True)
        fresh = []
        add = seen.add
        for i, b in zip(idx.tolist(), uniq.tolist()):
            if b not in seen:
                add(b)
                fresh.append(i)
        F = C[:, fresh]
        per_depth.append(F.shape[1])
        if progress is not None:
            progress(d, F.shape[1], len(seen))
        bad = first_bad(F)
        if bad is not None:
            return result(True, d, False, bad)
        if F.shape[1] == 0:
            return result(False, d, True)
        if time_limit is not None and time.perf_counter() - start > time_limit and d < depth:
            return result(False, d, False)
    return result(False, depth, False)


def reachable_within(vec: Vectorized, F: np.ndarray, steps: int) -> np.ndarray:
    """Every state reachable from a column of ``F`` in at most ``steps`` steps, each once (no renaming,
    no renumbering: trace validation reads members and generations as they are)."""
    seen: set = set()

    def fresh(X: np.ndarray) -> np.ndarray:
        view = vec.keys(X).view(f"V{8 * vec.words}").ravel()
        uniq, idx = np.unique(view, return_index=True)
        keep = [i for i, b in zip(idx.tolist(), uniq.tolist()) if b not in seen]
        seen.update(uniq.tolist())
        return X[:, keep]

    level = fresh(F)
    parts = [level]
    for _ in range(steps):
        if level.shape[1] == 0:
            break
        level = fresh(vec.successors(level))
        parts.append(level)
    return np.concatenate(parts, axis=1)


def restrict(vec: Vectorized, F: np.ndarray, allowed: dict[tuple[str, tuple[int, ...]], Any]) -> np.ndarray:
    """The columns of ``F`` whose variables take allowed values: ``allowed`` maps a slot
    (``("own", (0, 0))``) to the values it may have (Booleans as 0/1)."""
    pos = {slot: i for i, slot in enumerate(vec.compiled.slots)}
    mask = np.ones(F.shape[1], dtype=bool)
    for slot, values in allowed.items():
        row = F[pos[slot]]
        values = [int(x) for x in values]
        mask &= (row == values[0]) if len(values) == 1 else np.isin(row, values)
    return F[:, mask]
