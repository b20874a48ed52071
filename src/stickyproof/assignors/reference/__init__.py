"""Faithful transcriptions of Kafka's sticky builders: the engines the fast paths fall back to.

    constrained.py       ConstrainedAssignmentBuilder (3.0 on)   R15-R25, R48   constrained_reference
    constrained_2_6.py   constrainedAssign (2.5-2.8)             §1.3           constrained_assign_2_6, _2_8
    general.py           GeneralAssignmentBuilder                R26-R32        reference_run
    general_2_2.py       StickyAssignor.assign (2.2, 2.3),       §1.3           general_assign_2_2 / _2_3 / _2_4
                         AbstractStickyAssignor.assign (2.4)
    general_2_6.py       generalAssign (2.5-2.8)                 §1.3           general_assign_2_6
    java_collections.py  HashSet / TreeSet / PartitionMovements as far as their order matters (N1)

Each keeps Kafka's data structures and steps, named after Kafka's methods in snake_case, so that
it can be read side by side with ``AbstractStickyAssignor.java``; each reproduces Kafka's failures
(§10) instead of repairing them. The fast engines (``constrained.py``, ``general.py`` one level up)
must agree with them on every input and hand over to them through ``engines.fast_or_reference``.
"""

__all__: list[str] = []  # the transcriptions are imported by module (reference.constrained, ...), not re-exported
