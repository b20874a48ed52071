"""The invariants' Z3 boundary (oracle/invariants/z3_datalog.py): programs in, tuples out.

Each of the three ways an answer is read is exercised: its SMT-LIB text (small answers), its AST
(answers past the text limit, read only up to ``limit`` tuples), and model enumeration (an
answer that is not a disjunction of ground tuples). Signed ``num`` columns come back signed.
"""

from __future__ import annotations

import pytest

from stickyproof.errors import SolverError
from stickyproof.oracle.invariants import z3_datalog
from stickyproof.oracle.invariants.z3_datalog import Program, num, query


def pairs_program(rows):
    prog = Program("test")
    prog.rel("base", "id", "num")
    prog.rel("big", "id", "num")
    prog.var(i="id", n="num")
    for row in rows:
        prog.fact("base", *row)
    prog.rule("(big i n)", "(base i n)", f"(bvsge n {num(-1)})")
    return prog


def test_small_answers_are_read_from_text_sorted_and_signed():
    prog = pairs_program([(3, 7), (1, -1), (2, -5), (0, 2**31 - 1)])
    assert query(prog, "big", limit=10, timeout=None) == [(0, 2**31 - 1), (1, -1), (3, 7)]
    assert query(prog, "big", limit=2, timeout=None) == [(0, 2**31 - 1), (1, -1)]


def test_an_empty_relation_is_no_tuple():
    assert query(pairs_program([(1, -3)]), "big", limit=5, timeout=None) == []


def test_large_answers_are_read_through_the_ast_up_to_the_limit():
    size = z3_datalog._TEXT_PARSE_MAX + 1000
    rows = [(i, i % 50) for i in range(size)]
    prog = pairs_program(rows)
    some = query(prog, "big", limit=3, timeout=None)
    assert len(some) == 3 and some == sorted(some) and set(some) <= set(rows)
    assert query(prog, "big", limit=size, timeout=None) == rows  # the whole answer: from its text


def test_an_answer_that_is_not_ground_tuples_is_enumerated_model_by_model():
    z3 = pytest.importorskip("z3")
    col = z3.Var(0, z3.BitVecSort(8))
    answer = z3.And(z3.UGE(col, 2), z3.ULE(col, 4))  # x in 2..4, not a disjunction of equalities
    assert z3_datalog._answer_tuples(z3, answer, ["id"], 10) is None
    assert sorted(z3_datalog._model_tuples(z3, answer, ["id"], [8], 10)) == [(2,), (3,), (4,)]
    assert len(z3_datalog._model_tuples(z3, answer, ["id"], [8], 2)) == 2


def test_a_query_out_of_time_is_a_solver_error_naming_the_limit():
    prog = pairs_program([(i, i) for i in range(20_000)])
    with pytest.raises(SolverError, match="limit"):
        query(prog, "big", limit=1, timeout=1e-6)
