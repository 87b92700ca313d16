"""The `initialize` cases: each offer of a protocol version goes to a fresh process of the
agent, which must answer the same version or the latest one it supports, in that version's shape."""

from __future__ import annotations

from typing import Any

from acp_tui import __version__
from acp_tui.check.context import Context
from acp_tui.check.probe import Probe
from acp_tui.check.rules import R_BASELINE, R_INIT_SHAPE, R_VERSION
from acp_tui.protocol import schema_check
from acp_tui.protocol.jsonrpc import RpcError

LATEST = 2
"""The newest ACP version acp-tui knows; an agent may answer no newer one."""


# -- initialize --------------------------------------------------------------------------------


def initialize_params(version: int, shape: int | None = None) -> dict[str, Any]:
    """`initialize` offering `version`, in the shape of `shape` (default: that version)."""
    info = {"name": "acp-tui-check", "title": "acp-tui check", "version": __version__}
    if (shape or version) >= 2:
        return {"protocolVersion": version, "info": info, "capabilities": {}}
    capabilities = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
    return {"protocolVersion": version, "clientCapabilities": capabilities, "clientInfo": info}


def answered_version(result: Any) -> int | None:
    version = result.get("protocolVersion") if isinstance(result, dict) else None
    return version if isinstance(version, int) and not isinstance(version, bool) else None


async def check_offer(ctx: Context, offered: int) -> int | None:
    """Offer `offered` to a fresh process; the version it answered (None: no usable answer)."""
    case = f"initialize: offer {offered}"
    probe = Probe(ctx.argv, ctx.workspace, None, ctx.env)
    try:
        await probe.start()
        # An offer of a version outside 1..2 goes in the latest shape we know.
        shape = offered if offered in (1, 2) else LATEST
        try:
            params = initialize_params(offered, shape)
            result, line = await probe.request("initialize", params, ctx.call_timeout)
        except TimeoutError:
            ctx.fail(case, R_INIT_SHAPE, f"no answer within {ctx.call_timeout:g} s")
            return None
        except RpcError as error:
            if offered != 1:
                # Refusing a shape it does not speak is a way to negotiate: v1 comes next.
                ctx.add(case, "passed", detail=f"refused ({error.code}: {error.message})")
                return None
            ctx.fail(case, R_BASELINE, f"initialize failed: {error.code} {error.message}")
            return None
    finally:
        await probe.close()
    version = answered_version(result)
    if version is None:
        ctx.fail(case, R_INIT_SHAPE, "the answer has no integer protocolVersion", line)
        return None
    expected_same = offered <= LATEST
    if version > max(offered, 1) or (not expected_same and version == offered):
        ctx.fail(case, R_VERSION, f"offered {offered}, answered {version}", line)
        return version
    if version not in (1, 2):
        ctx.fail(case, R_VERSION, f"answered {version}, which no ACP release defines", line)
        return version
    try:
        msg = line.msg if line is not None else {"jsonrpc": "2.0", "id": 0, "result": result}
        schema_check.validate_message(
            msg, version=version, sender="agent", request_method="initialize"
        )
    except schema_check.SchemaViolation as violation:
        detail = f"answered version {version} in another shape: {violation.summary}"
        ctx.fail(case, R_INIT_SHAPE, detail, line)
        return version
    note = "" if version == offered else f" (answered {version})"
    ctx.add(case, "passed", detail=f"protocolVersion {version}{note}")
    return version
