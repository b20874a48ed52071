"""Hypothesis strategies for stickyproof, the public API: ``from stickyproof.strategies import groups``.

A façade over ``stickyproof.scenarios.hypothesis_driver``: the scenario space is described
once (``scenarios.space`` and ``scenarios.generate``), and the same description drives the
seeded sampler that sweeps use (``stickyproof.scenarios.sample``).

    from hypothesis import given, strategies as st
    from stickyproof.strategies import groups

    @given(groups(max_members=4, versions=st.sampled_from([3, 0])))
    def test_my_assignor(scenario): ...

``consumer_groups()`` draws KIP-848 consumer groups (``group_protocol`` ``consumer``) for the
server-side assignors.
"""

from __future__ import annotations

from .scenarios.consumer_strategy import consumer_groups
from .scenarios.hypothesis_driver import InvalidStrategyArgument, from_space, groups

__all__ = ["groups", "consumer_groups", "from_space", "InvalidStrategyArgument"]

for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
