"""The `initialize` cases. The session's own `initialize` comes first and decides whether the
run goes on (`open_session`): no answer, or no usable one, stops it with one clear line. Then
each offer of a protocol version goes to a fresh process of the agent, which must answer the
same version or the latest one it supports, in that version's shape."""

from __future__ import annotations

from typing import Any, NoReturn

from acp_tui import __version__
from acp_tui.check.context import Context, why
from acp_tui.check.probe import Probe
from acp_tui.check.rules import BASELINE, INIT_ANSWER, INIT_VERSION
from acp_tui.protocol import schema_check
from acp_tui.protocol.jsonrpc import RpcError

LATEST = 2
"""The newest ACP version acp-tui knows; an agent may answer no newer one."""
OFFERS = (1, 2, 99)


class Stop(Exception):
    """The run cannot go on: the agent gave no usable answer to `initialize`."""


class Unsupported(Exception):
    """The agent answered the version under test with an older one: nothing of it to test."""


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


def new_probe(ctx: Context, name: str, version: int | None) -> Probe:
    options = ctx.options
    return Probe(
        ctx.argv, ctx.workspace, version, options.env, name=name, tap=ctx.tap, remote=options.remote
    )


async def initialize(ctx: Context, probe: Probe, case: str) -> dict[str, Any]:
    """`initialize` the session's process in the version under test, or raise `Stop` (with
    a failed case saying why, the agent's exit status and its last stderr lines) or
    `Unsupported`."""
    params = initialize_params(ctx.version)
    try:
        result, line = await probe.request("initialize", params, ctx.call_timeout)
    except (RpcError, TimeoutError) as error:
        if probe.echoed:
            detail = "it writes back what it is sent, word for word: not an ACP agent"
        elif probe.ended:
            detail = f"no answer: {probe.exit_description()}"
        elif ctx.version >= 2 and isinstance(error, RpcError):
            _unsupported(ctx, case, f"it refused a v2 initialize: {why(error, ctx.call_timeout)}")
        else:
            detail = f"{why(error, ctx.call_timeout)}; {probe.exit_description()}"
        refused = isinstance(error, RpcError) and not probe.ended and not probe.echoed
        ctx.fail(case, BASELINE if refused else INIT_ANSWER, detail)
        raise Stop(detail) from None
    version = answered_version(result)
    if version is None:
        ctx.fail(case, INIT_ANSWER, "the answer has no integer protocolVersion", line)
        raise Stop("no protocolVersion")
    if version != ctx.version:
        if version < ctx.version:
            _unsupported(ctx, case, f"offered {ctx.version}, it answered {version}")
        ctx.fail(case, INIT_VERSION, f"offered {ctx.version}, answered {version}", line)
        raise Stop("a newer version")
    key = "capabilities" if ctx.version >= 2 else "agentCapabilities"
    ctx.capabilities = result.get(key) or {}
    ctx.auth_methods = [m for m in result.get("authMethods") or [] if isinstance(m, dict)]
    info = result.get("info" if ctx.version >= 2 else "agentInfo") or {}
    name = info.get("title") or info.get("name") or "the agent"
    ctx.agent = f"{name} {info.get('version', '')}".strip()
    broken = probe.violations[:1]
    if broken:
        ctx.fail(case, INIT_ANSWER, broken[0].problem, broken[0].line)
    else:
        ctx.add(case, "passed", detail=f"ACP v{version}: {ctx.agent}")
    assert isinstance(result, dict)
    return result


def _unsupported(ctx: Context, case: str, detail: str) -> NoReturn:
    ctx.add(case, "n/a", detail=f"ACP v{ctx.version} not supported: {detail}")
    raise Unsupported(detail)


async def check_offer(ctx: Context, offered: int) -> None:
    """Offer `offered` to a fresh process: it must answer that version or its latest."""
    case = f"initialize: offer {offered}"
    probe = new_probe(ctx, f"offer {offered}", None)
    try:
        await probe.start()
        # An offer of a version outside 1..2 goes in the latest shape we know.
        shape = offered if offered in (1, 2) else LATEST
        try:
            params = initialize_params(offered, shape)
            result, line = await probe.request("initialize", params, ctx.call_timeout)
        except TimeoutError:
            ctx.fail(case, INIT_ANSWER, f"no answer within {ctx.call_timeout:g} s")
            return
        except RpcError as error:
            if offered != 1 and not probe.ended:
                # Refusing a shape it does not speak is a way to negotiate: v1 comes next.
                ctx.add(case, "passed", detail=f"refused ({error.code}: {error.message})")
                return
            ctx.fail(case, BASELINE, f"initialize failed: {why(error, ctx.call_timeout)}")
            return
    finally:
        await probe.close()
    version = answered_version(result)
    if version is None:
        ctx.fail(case, INIT_ANSWER, "the answer has no integer protocolVersion", line)
        return
    if version > max(offered, 1) or (offered > LATEST and version == offered):
        ctx.fail(case, INIT_VERSION, f"offered {offered}, answered {version}", line)
        return
    if version not in (1, 2):
        ctx.fail(case, INIT_VERSION, f"answered {version}, which no ACP release defines", line)
        return
    try:
        msg = line.msg if line is not None else {"jsonrpc": "2.0", "id": 0, "result": result}
        schema_check.validate_message(
            msg, version=version, sender="agent", request_method="initialize"
        )
    except schema_check.SchemaViolation as violation:
        detail = f"answered version {version} in another shape: {violation.summary}"
        ctx.fail(case, INIT_ANSWER, detail, line)
        return
    note = "" if version == offered else f" (answered {version})"
    ctx.add(case, "passed", detail=f"protocolVersion {version}{note}")
