"""Z3 proofs of the models in models/: the group protocol, KIP-848 reconciliation, the constrained assignor, the
optimisation model.

``statements()`` lists every statement in the order proofs/README.md gives them; ``stickyproof
prove`` (``stickyproof.prove``) runs them and compares each verdict with the README's promise.
This package reads the models (it states them itself, citing models/*.md and docs/rules.md)
and never imports the assignors or the simulator: the links to that code are tests in
``tests/test_proofs*.py``.
"""

from __future__ import annotations

from .outcome import COUNTEREXAMPLE, PROVED, UNKNOWN, Outcome, Promise, Statement

__all__ = ["statements", "Outcome", "Promise", "Statement", "PROVED", "COUNTEREXAMPLE", "UNKNOWN"]


def statements() -> tuple[Statement, ...]:
    from .constrained.statements import STATEMENTS as constrained
    from .optimal.statements import STATEMENTS as optimal
    from .protocol.spacer_statements import SPACER_STATEMENTS as spacer
    from .protocol.statements import STATEMENTS as protocol
    from .reconciliation.statements import STATEMENTS as reconciliation

    return tuple(protocol) + tuple(spacer) + tuple(reconciliation) + tuple(constrained) + tuple(optimal)
