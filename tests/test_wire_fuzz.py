"""Decoders on hostile bytes: random and mutated inputs raise ``DecodeError`` or decode to something re-encodable.

Nothing else may escape (no IndexError, struct.error, UnicodeDecodeError, MemoryError,
RecursionError): a leader decodes bytes from every member of the group, and one corrupt member
must not crash it. Budget per run: HYPOTHESIS_INPUTS from Hypothesis (explicit max_examples) plus
SEEDED_INPUTS from a seeded mutation loop, every input fed to every decoder.
"""

from __future__ import annotations

import random
import struct
from typing import Any, Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stickyproof.errors import DecodeError
from stickyproof.javaorder import java_string_key
from stickyproof.model import TopicPartition as TP
from stickyproof.wire import (
    StickyUserData,
    WireAssignment,
    WireSubscription,
    decode_assignment,
    decode_cooperative_user_data,
    decode_sticky_user_data,
    decode_subscription,
    encode_assignment,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    encode_subscription,
)

RANDOM_EXAMPLES = 1500
MUTATED_EXAMPLES = 1500
HYPOTHESIS_INPUTS = RANDOM_EXAMPLES + MUTATED_EXAMPLES
SEEDED_INPUTS = 10_000
SEED = 20241122

_fuzz = settings(max_examples=RANDOM_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------------------------------------
# the checks: only DecodeError, and whatever decodes survives a re-encode


def _grouped(tps: tuple[TP, ...]) -> tuple[TP, ...]:
    by_topic: dict[str, list[TP]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp)
    return tuple(tp for group in by_topic.values() for tp in group)


def _subscription_survives(s: WireSubscription) -> None:
    again = decode_subscription(encode_subscription(s))
    assert again == WireSubscription(
        version=min(s.version, 3),
        topics=tuple(sorted(s.topics, key=java_string_key)),
        user_data=s.user_data,
        owned=tuple(sorted(s.owned, key=lambda tp: (java_string_key(tp.topic), tp.partition))),
        generation=s.generation,
        rack=s.rack,
    )


def _assignment_survives(a: WireAssignment) -> None:
    assert decode_assignment(encode_assignment(a)) == WireAssignment(min(a.version, 3), _grouped(a.assigned), a.user_data)


def _sticky_survives(u: StickyUserData) -> None:
    again = decode_sticky_user_data(encode_sticky_user_data(u.previous_assignment, u.generation, version=u.version))
    assert (again.version, again.generation) == (u.version, u.generation)
    assert sorted(again.previous_assignment) == sorted(u.previous_assignment)


def _cooperative_survives(g: int) -> None:
    assert decode_cooperative_user_data(encode_cooperative_user_data(g)) == g


DECODERS: list[tuple[Callable[[bytes], Any], Callable[[Any], None] | None]] = [
    (decode_subscription, _subscription_survives),
    (decode_assignment, _assignment_survives),
    (decode_sticky_user_data, _sticky_survives),
    (decode_cooperative_user_data, _cooperative_survives),
] + [
    (lambda data, j=j: decode_subscription(data, max_version=j), None) for j in range(3)
]


def check_all_decoders(data: bytes) -> int:
    """Feed ``data`` to every decoder; returns how many decoded (the rest raised DecodeError)."""
    decoded = 0
    for decoder, survives in DECODERS:
        try:
            value = decoder(data)
        except DecodeError as exc:
            assert exc.offset is None or 0 <= exc.offset <= len(data), f"offset {exc.offset} outside the input"
            continue
        decoded += 1
        if survives is not None:
            survives(value)
    return decoded


# ------------------------------------------------------------------------------------------
# the corpus of valid encodings that mutations start from


def corpus() -> list[bytes]:
    tps = (TP("foo", 0), TP("bar", 1), TP("foo", 2), TP("\u00e9t\u00e9", 2**31 - 1))
    out = []
    for v in range(4):
        out.append(encode_subscription(WireSubscription(v, ("foo", "bar", ""), b"\x00\x01", tps, 3, "rack"), v))
        out.append(encode_subscription(WireSubscription(v, (), None), v))
        out.append(encode_assignment(WireAssignment(v, tps, b"ud"), v))
        out.append(encode_assignment(WireAssignment(v, (), None), v))
    out.append(encode_sticky_user_data(tps, 7))
    out.append(encode_sticky_user_data(tps, None, version=0))
    out.append(encode_cooperative_user_data(12))
    # A future version 9 subscription with trailing fields.
    out.append(struct.pack(">h", 9) + out[6][2:] + b"\x00\x00\x00\x2a\x00\x01z")
    return out


CORPUS = corpus()
INTERESTING_INT32 = (-(2**31), -2, -1, 0, 1, 2, 3, 0x7FFF, 0x8000, 0xFFFF, 2**31 - 1)
INTERESTING_INT16 = (-32768, -2, -1, 0, 1, 2, 3, 4, 100, 0x7FFF)


def mutate(rng: random.Random, data: bytes) -> bytes:
    """One to three random edits, biased toward the lengths, counts and versions the format hangs on."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(7)
        pos = rng.randrange(len(buf) + 1)
        if kind == 0 and buf:  # flip a bit
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
        elif kind == 1:  # truncate
            del buf[pos:]
        elif kind == 2:  # append or insert random bytes
            buf[pos:pos] = rng.randbytes(rng.randint(1, 8))
        elif kind == 3 and len(buf) >= 4:  # overwrite an int32 with an interesting length/count
            i = rng.randrange(len(buf) - 3)
            buf[i : i + 4] = struct.pack(">i", rng.choice(INTERESTING_INT32))
        elif kind == 4 and len(buf) >= 2:  # overwrite an int16 (string lengths, the version header)
            i = rng.randrange(len(buf) - 1)
            buf[i : i + 2] = struct.pack(">h", rng.choice(INTERESTING_INT16))
        elif kind == 5 and buf:  # delete a slice
            del buf[pos : pos + rng.randint(1, 6)]
        else:  # splice in a piece of another valid encoding
            other = rng.choice(CORPUS)
            a = rng.randrange(len(other))
            buf[pos:pos] = other[a : a + rng.randint(1, 12)]
    return bytes(buf)


# ------------------------------------------------------------------------------------------
# the tests


def test_corpus_is_valid():
    for data in CORPUS:
        assert check_all_decoders(data) >= 1


@_fuzz
@given(st.binary(max_size=80))
def test_random_bytes_raise_only_decode_error(data):
    check_all_decoders(data)


@settings(_fuzz, max_examples=MUTATED_EXAMPLES)
@given(st.sampled_from(CORPUS), st.randoms(use_true_random=False))
def test_mutated_encodings_raise_only_decode_error(data, rng):
    check_all_decoders(mutate(rng, data))


def test_seeded_mutation_loop_raises_only_decode_error():
    rng = random.Random(SEED)
    inputs = decoded = 0
    for _ in range(SEEDED_INPUTS):
        data = mutate(rng, rng.choice(CORPUS))
        decoded += check_all_decoders(data) > 0
        inputs += 1
    assert inputs == SEEDED_INPUTS
    # The mutations must exercise both outcomes, or the loop tests nothing.
    assert 0 < decoded < inputs


def test_every_truncation_of_every_valid_encoding_is_a_decode_error_or_a_prefix_read():
    # Truncating a valid encoding can only shorten it; each prefix either fails cleanly or still decodes.
    for data in CORPUS:
        for cut in range(len(data)):
            check_all_decoders(data[:cut])

