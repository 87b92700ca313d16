"""The base of every ACP wire struct."""

import msgspec


class Wire(msgspec.Struct, rename="camel", omit_defaults=True, gc=False):
    """camelCase on the wire, omitted when default, and untracked by the garbage collector:
    decoded messages never form reference cycles, and tracking the hundreds of thousands a
    long session holds made collections the biggest cost of decoding."""
