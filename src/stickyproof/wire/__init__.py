"""Consumer-protocol wire codecs driven by the message specs of models/messages/ (docs/rules.md §5).

Typed API (what the leader, the assignors and the simulator use)::

    WireSubscription, WireAssignment, StickyUserData
    encode_subscription / decode_subscription          ConsumerProtocolSubscription v0-v3 (int16 version header)
    encode_assignment / decode_assignment              ConsumerProtocolAssignment v0-v3 (int16 version header)
    encode_sticky_user_data / decode_sticky_user_data  StickyAssignor user data V0-V1 (KIP-341, no header)
    encode_cooperative_user_data / decode_cooperative_user_data   one int32 generation

Generic API: ``encode(spec_name, value_dict, version)`` / ``decode(spec_name, data)`` interpret any
bundled spec (``spec_names()``, ``load_spec(name)``). Decoders raise only ``DecodeError``
(field path and byte offset); encoders only ``EncodeError``.
"""

from __future__ import annotations

from ._codec import Decoded, decode, encode
from ._messages import (
    ASSIGNMENT,
    COOPERATIVE_USER_DATA,
    STICKY_USER_DATA,
    SUBSCRIPTION,
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
from ._spec import FieldSpec, MessageSpec, SpecError, load_spec, spec_names

__all__ = [
    "WireSubscription",
    "WireAssignment",
    "StickyUserData",
    "encode_subscription",
    "decode_subscription",
    "encode_assignment",
    "decode_assignment",
    "encode_sticky_user_data",
    "decode_sticky_user_data",
    "encode_cooperative_user_data",
    "decode_cooperative_user_data",
    "encode",
    "decode",
    "Decoded",
    "load_spec",
    "spec_names",
    "MessageSpec",
    "FieldSpec",
    "SpecError",
    "SUBSCRIPTION",
    "ASSIGNMENT",
    "STICKY_USER_DATA",
    "COOPERATIVE_USER_DATA",
]

for _name in ("WireSubscription", "WireAssignment", "StickyUserData", "Decoded"):
    globals()[_name].__module__ = __name__
del _name
