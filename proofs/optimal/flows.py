"""The optimisation model's lemmas, discharged with optimality certificates (models/optimal-assignment.md).

"The aggregated optimum equals the per-partition optimum" (§4) and T3 ("any two O1 optima differ by at
most one per member", which §6's CP-SAT model relies on) are statements about *optima*: each optimum
is a universally quantified fact, so neither is one quantifier-free query. Both models are network
flows with integer data, so every instance has an integral optimal flow and, by LP duality, node
potentials certifying it (K4: reduced cost >= 0 where flow < capacity, <= 0 where flow > 0; for the
convex balance arcs of F4 this is ``(2l - 1) w_B <= pi(sink) - pi(m) <= (2l + 1) w_B`` at load ``l``).
Asking for two *certified* optima that disagree is then one existential, quantifier-free query; when
it is unsat for every instance up to a size (the instance itself symbolic), the lemma holds there.

* **Flow exactness** (§4, C6): per-partition flow (partition -> subscriber, keep bonus ``w_K`` on the
  arc to its retainable claimant) versus the aggregated flow (hubs = topics with equal subscriber sets
  merged, keep arcs per class, pool arcs): certified optima of the two never differ in cost.
* **Windows** (T3): two certified optima of the balance flow (no keep bonus) never give one member
  loads two apart.

Instances: ``N`` members, ``T`` topics of 0..``K`` partitions each, any subscriptions (a topic with
partitions has a subscriber, D1), any retainable claimant per partition among its subscribers (D4).
Weights: ``w_K = 1`` and ``w_B = floor(T K / 2) + 1``, above half of any keep total (T4).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import z3

__all__ = ["FlowResult", "prove_flow_exactness", "prove_windows"]


@dataclass(frozen=True)
class FlowResult:
    answer: str  # z3's answer for "two certified optima disagree": unsat = the lemma holds up to the size
    seconds: float
    witness: dict[str, Any] | None = None
    cases: int = 0


def _sq(x: Any, top: int) -> Any:
    out: Any = z3.IntVal(top * top)
    for v in range(top - 1, -1, -1):
        out = z3.If(x == v, v * v, out)
    return out


class _Instance:
    """An instance with symbolic retainable claimants; subscriptions and partition counts are symbolic,
    or fixed (``subs``/``counts``) when the query is split into cases."""

    def __init__(self, N: int, T: int, K: int, subs: Sequence[Sequence[bool]] | None = None,
                 counts: Sequence[int] | None = None):
        self.N, self.T, self.K = N, T, K
        if subs is None:
            self.sub = [[z3.Bool(f"sub[{m}][{t}]") for t in range(T)] for m in range(N)]
        else:
            self.sub = [[z3.BoolVal(subs[m][t]) for t in range(T)] for m in range(N)]
        self.cnt = [z3.Int(f"cnt[{t}]") if counts is None else z3.IntVal(counts[t]) for t in range(T)]
        self.subs = subs
        self.keep = [[z3.Int(f"keep[{t}][{i}]") for i in range(K)] for t in range(T)]  # -1: no retainable claimant

    def exists(self, t: int, i: int) -> Any:
        return i < self.cnt[t]

    def well_formed(self) -> list[Any]:
        """Valid instances, one per class of interchangeable partitions: within a topic, partitions
        differ only by their retainable claimant (nothing else tells them apart, §4), so the
        claimants are taken in order (existing partitions' claimants non-decreasing)."""
        out = []
        for t in range(self.T):
            for i in range(self.K - 1):
                out.append(z3.Implies(self.exists(t, i + 1), self.keep[t][i] <= self.keep[t][i + 1]))
        if self.subs is not None:
            # members with the same subscriptions are interchangeable: the later one is a claimant only if
            # the earlier one is a claimant of an earlier partition (value precedence, flattened order)
            flat = [self.keep[t][i] for t in range(self.T) for i in range(self.K)]
            for m in range(self.N - 1):
                if tuple(self.subs[m]) != tuple(self.subs[m + 1]):
                    continue
                for q, k in enumerate(flat):
                    out.append(z3.Implies(k == m + 1, z3.Or(*[flat[j] == m for j in range(q)]) if q else False))
        for t in range(self.T):
            out += [self.cnt[t] >= 0, self.cnt[t] <= self.K,
                    z3.Implies(self.cnt[t] > 0, z3.Or(*[self.sub[m][t] for m in range(self.N)]))]
            for i in range(self.K):
                k = self.keep[t][i]
                out.append(z3.And(k >= -1, k < self.N))
                out.append(z3.Implies(z3.Not(self.exists(t, i)), k == -1))
                out += [z3.Implies(k == m, self.sub[m][t]) for m in range(self.N)]  # D4: the claimant still subscribes
        return out


def _balance_certificate(loads: list[Any], pot_m: list[Any], pot_sink: Any, w_B: int, total: int) -> list[Any]:
    """F4/K4 at each member: the unit arcs up to its load are used, the next one is not."""
    out = []
    for l, pm in zip(loads, pot_m):
        drop = pot_sink - pm
        out.append(z3.Implies(l >= 1, (2 * l - 1) * w_B <= drop))
        out.append(z3.Implies(l < total, drop <= (2 * l + 1) * w_B))
    return out


def _arc_certificate(flow: Any, cap: Any, cost: Any, pot_tail: Any, pot_head: Any) -> list[Any]:
    rc = cost + pot_tail - pot_head
    return [z3.Implies(flow < cap, rc >= 0), z3.Implies(flow > 0, rc <= 0)]


def _per_partition(inst: _Instance, tag: str, w_K: int, w_B: int) -> tuple[list[Any], Any, list[Any], list[Any]]:
    """A certified optimal per-partition flow: (constraints, cost, loads, assignment variables)."""
    N, T, K = inst.N, inst.T, inst.K
    total = T * K
    xb = {(t, i, m): z3.Bool(f"{tag}x[{t}][{i}][{m}]") for t in range(T) for i in range(K) for m in range(N)}
    x = {key: z3.If(b, 1, 0) for key, b in xb.items()}
    pp = {(t, i): z3.Int(f"{tag}pi_p[{t}][{i}]") for t in range(T) for i in range(K)}
    pm = [z3.Int(f"{tag}pi_m[{m}]") for m in range(N)]
    ps = z3.Int(f"{tag}pi_sink")
    cons: list[Any] = []
    kept = []
    for t, i in itertools.product(range(T), range(K)):
        arcs = []
        for m in range(N):
            usable = z3.And(inst.sub[m][t], inst.exists(t, i))
            cons.append(z3.Implies(xb[t, i, m], usable))
            cost = z3.If(inst.keep[t][i] == m, -w_K, 0)
            rc = cost + pp[t, i] - pm[m]
            cons += [z3.Implies(z3.And(usable, z3.Not(xb[t, i, m])), rc >= 0), z3.Implies(xb[t, i, m], rc <= 0)]
            arcs.append(x[t, i, m])
            kept.append(z3.If(inst.keep[t][i] == m, x[t, i, m], 0))
        cons.append(z3.Sum(arcs) == z3.If(inst.exists(t, i), 1, 0))  # C1: every assignable partition once
    loads = [z3.Sum([x[t, i, m] for t in range(T) for i in range(K)]) for m in range(N)]
    cons += _balance_certificate(loads, pm, ps, w_B, total)
    cost = w_B * z3.Sum([_sq(l, total) for l in loads]) - w_K * z3.Sum(kept)
    return cons, cost, loads, list(xb.values())


def _aggregated(inst: _Instance, tag: str, w_K: int, w_B: int) -> tuple[list[Any], Any, list[Any]]:
    """A certified optimal aggregated flow (§4-§5): hubs of equal subscriber sets, keep and pool arcs."""
    N, T, K = inst.N, inst.T, inst.K
    total = T * K
    same = lambda a, b: z3.And(*[inst.sub[m][a] == inst.sub[m][b] for m in range(N)])  # noqa: E731
    # topic t's hub is the first topic with its subscriber set
    rep = [[z3.And(same(h, t), *[z3.Not(same(g, t)) for g in range(h)]) for h in range(T)] for t in range(T)]
    n_hub = [z3.Sum([z3.If(rep[t][h], inst.cnt[t], 0) for t in range(T)]) for h in range(T)]
    n_class = [[z3.Sum([z3.If(z3.And(rep[t][h], inst.keep[t][i] == k), 1, 0) for t in range(T) for i in range(K)])
                for k in range(N)] for h in range(T)]
    y = [[z3.Int(f"{tag}y[{h}][{k}]") for k in range(N)] for h in range(T)]
    z = [[z3.Int(f"{tag}z[{h}][{m}]") for m in range(N)] for h in range(T)]
    ph = [z3.Int(f"{tag}pi_h[{h}]") for h in range(T)]
    pm = [z3.Int(f"{tag}pi_m[{m}]") for m in range(N)]
    ps = z3.Int(f"{tag}pi_sink")
    cons: list[Any] = []
    for h in range(T):
        for k in range(N):
            cons += [y[h][k] >= 0, y[h][k] <= n_class[h][k]]  # F2 keep arc, capacity n_c
            cons += _arc_certificate(y[h][k], n_class[h][k], -w_K, ph[h], pm[k])
            cap = z3.If(inst.sub[k][h], n_hub[h], 0)  # F3 pool arc to a subscriber of the hub
            cons += [z[h][k] >= 0, z[h][k] <= cap]
            cons += _arc_certificate(z[h][k], cap, 0, ph[h], pm[k])
        cons.append(z3.Sum(y[h]) + z3.Sum(z[h]) == n_hub[h])  # C6: conservation at the hub
    loads = [z3.Sum([y[h][m] + z[h][m] for h in range(T)]) for m in range(N)]
    cons += _balance_certificate(loads, pm, ps, w_B, total)
    cost = w_B * z3.Sum([_sq(l, total) for l in loads]) - w_K * z3.Sum([y[h][k] for h in range(T) for k in range(N)])
    return cons, cost, loads


def _cases(N: int, T: int, K: int) -> Iterator[tuple[tuple[tuple[bool, ...], ...], tuple[int, ...]]]:
    """Subscriptions and partition counts, one per class of instances: members are interchangeable
    apart from their subscriptions (claimants are symbolic and range over all members), so the
    members' subscription vectors are taken in non-decreasing order."""
    kinds = list(itertools.product([False, True], repeat=T))
    for subs in itertools.combinations_with_replacement(kinds, N):
        for counts in itertools.product(range(K + 1), repeat=T):
            if any(counts[t] > 0 and not any(sub[t] for sub in subs) for t in range(T)):
                continue  # D1: a topic nobody subscribes to has no assignable partitions
            yield subs, counts


def _run_cases(N: int, T: int, K: int, query: Any, timeout_ms: int) -> FlowResult:
    start = time.perf_counter()
    cases = 0
    for subs, counts in _cases(N, T, K):
        cases += 1
        s = z3.Solver()
        s.set("timeout", timeout_ms)
        inst = _Instance(N, T, K, subs, counts)
        s.add(*inst.well_formed(), *query(inst))
        answer = s.check()
        if answer != z3.unsat:
            witness = {"subscriptions": [list(x) for x in subs], "counts": list(counts), "case": cases}
            if answer == z3.sat:
                m = s.model()
                witness["claimants"] = [[m.eval(k, model_completion=True).as_long() for k in row] for row in inst.keep]
            return FlowResult(str(answer), time.perf_counter() - start, witness, cases)
    return FlowResult("unsat", time.perf_counter() - start, None, cases)


def prove_flow_exactness(N: int, T: int, K: int, timeout_ms: int = 600000) -> FlowResult:
    """Unsat in every case: for every instance up to N x T x K, certified optima of both flows have the same cost."""
    w_K, w_B = 1, (T * K) // 2 + 1

    def query(inst: _Instance) -> list[Any]:
        a, cost_a, _, _ = _per_partition(inst, "pp.", w_K, w_B)
        b, cost_b, _ = _aggregated(inst, "ag.", w_K, w_B)
        return [*a, *b, cost_a != cost_b]

    return _run_cases(N, T, K, query, timeout_ms)


def prove_windows(N: int, T: int, K: int, timeout_ms: int = 600000) -> FlowResult:
    """Unsat in every case: for every instance up to N x T x K, two certified O1 optima give every member loads at most one apart."""

    def query(inst: _Instance) -> list[Any]:
        first, _, loads_1 = _aggregated(inst, "one.", 0, 1)
        second, _, loads_2 = _aggregated(inst, "two.", 0, 1)
        return [*first, *second, z3.Or(*[z3.Or(l1 - l2 >= 2, l2 - l1 >= 2) for l1, l2 in zip(loads_1, loads_2)])]

    return _run_cases(N, T, K, query, timeout_ms)
