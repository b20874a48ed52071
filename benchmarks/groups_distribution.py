"""What ``stickyproof.strategies.groups()`` draws: the share of one-member groups and of each hazard.

    python benchmarks/groups_distribution.py                 2,000 draws of groups() and of from_space(Space())
    python benchmarks/groups_distribution.py --draws 500 --hazards stale-claims,duplicate-claims

Draws as a ``@given`` test does (Hypothesis' generate phase, a fixed seed, no database), so the
figures are those a client author's test meets; ``from_space(Space())`` is the hunt's space, which
is what ``groups()`` drew before its hazards became opt-in. Each share is read off the scenario
itself (``scenarios.scenario_features``), never off the knobs that drew it. docs/pytest.md quotes
the output.
"""

from __future__ import annotations

import argparse
from collections import Counter

from hypothesis import HealthCheck, Phase, given, seed, settings

from stickyproof.model import Scenario
from stickyproof.scenarios import Space, scenario_features
from stickyproof.strategies import HAZARDS, from_space, groups

#: Each figure: its label and the test on one scenario's features (and the scenario).
MEASURES = (
    ("one member", lambda f, s: f["members"] == 1),
    ("stale-claims", lambda f, s: f["stale_claimants"] > 0),
    ("duplicate-claims", lambda f, s: f["double_claims"] > 0),
    ("unknown-generation-claims", lambda f, s: f["unknown_generation_claimants"] > 0),
    ("deleted-topic-claims", lambda f, s: f["deleted_topic_claims"] > 0),
    ("past-count-claims", lambda f, s: f["past_count_claims"] > 0),
    ("v0-cooperative", lambda f, s: s.protocol == "cooperative" and f["min_version"] == 0),
    ("empty-subscriptions", lambda f, s: f["empty_subscriptions"] > 0),
    ("cooperative", lambda f, s: s.protocol == "cooperative"),
)


def measure(strategy, draws: int, at_seed: int = 0) -> tuple[int, Counter[str]]:
    """How many scenarios ``strategy`` drew in ``draws`` examples and how many show each measure."""
    counts: Counter[str] = Counter()
    drawn = [0]

    @seed(at_seed)
    @settings(max_examples=draws, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def draw(scenario: Scenario) -> None:
        drawn[0] += 1
        features = scenario_features(scenario)
        for label, test in MEASURES:
            counts[label] += bool(test(features, scenario))

    draw()
    return drawn[0], counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hazards", default="", help=f"comma-separated, of {', '.join(HAZARDS)}")
    args = parser.parse_args()
    hazards = {h for h in args.hazards.split(",") if h}
    rows = [
        (f"groups({'hazards=' + repr(sorted(hazards)) if hazards else ''})", groups(hazards=hazards)),
        ("groups(assignor='sticky')", groups(assignor="sticky")),
        ("from_space(Space())", from_space(Space())),
    ]
    labels = [label for label, _ in MEASURES]
    print(f"{'strategy':34} {'draws':>6} " + " ".join(f"{label:>14.14}" for label in labels))
    for name, strategy in rows:
        drawn, counts = measure(strategy, args.draws, args.seed)
        shares = " ".join(f"{100 * counts[label] / drawn:13.1f}%" for label in labels)
        print(f"{name:34} {drawn:6d} {shares}")


if __name__ == "__main__":
    main()
