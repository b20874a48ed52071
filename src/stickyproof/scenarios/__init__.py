"""The scenario space: one description of it (``space.Space`` + ``generate.build_scenario``),
two drivers (``sampler.sample`` for sweeps, ``stickyproof.strategies.groups`` for Hypothesis),
the features a sweep records (``features.scenario_features``) and the named scenarios
shipped with the package (``named``)."""

from .features import scenario_features
from .sampler import sample
from .space import InvalidSpace, Space

__all__ = ["Space", "InvalidSpace", "sample", "scenario_features"]
