"""The cases `acp-tui check` runs, in order, and the rules they hold an agent to.

Each case gives one `Finding`: passed, failed (with the rule it broke, its level, what was
wrong and the raw line), not applicable (the agent did not advertise the feature), or skipped
(an earlier case left nothing to run it on, e.g. no session). Cases that need a model (a real
prompt turn) say so; their prompt is the author's `--prompt`.

The cases live by subject: `handshake` (initialize), `sessions`, `turns` (prompt turns) and
`whole_connection`; the rules they cite in `rules`, their `Context` and `Finding` in `context`.
Here: the order of the cases on one session's connection.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from acp_tui.check import CALL_TIMEOUT, TURN_TIMEOUT
from acp_tui.check.context import Context, Finding, why
from acp_tui.check.handshake import answered_version, check_offer, initialize_params
from acp_tui.check.probe import Probe
from acp_tui.check.sessions import (
    bad_params,
    config_options,
    modes,
    new_session,
    session_list,
    session_load,
    session_resume_close_delete,
    unknown_method,
)
from acp_tui.check.turns import cancel_turn, prompt_turn
from acp_tui.check.whole_connection import (
    check_client_methods,
    check_permissions,
    check_schema,
    check_stdin_close,
    check_stdout,
)
from acp_tui.protocol.jsonrpc import RpcError

__all__ = ["CALL_TIMEOUT", "TURN_TIMEOUT", "Context", "Finding", "check_offer", "check_session"]


# -- one session --------------------------------------------------------------------------------


async def check_session(ctx: Context) -> None:
    """Everything that runs on one connection, in order; then stdin is closed."""
    probe = Probe(ctx.argv, ctx.workspace, ctx.version, ctx.env)
    try:
        await probe.start()
        try:
            result, _ = await probe.request(
                "initialize", initialize_params(ctx.version), ctx.call_timeout
            )
        except (RpcError, TimeoutError) as error:
            detail = f"initialize failed: {why(error, ctx.call_timeout)}"
            ctx.add("session: initialize", "skipped", detail=detail)
            return
        if answered_version(result) != ctx.version:
            detail = f"the agent does not speak ACP v{ctx.version}"
            ctx.add("session cases", "skipped", detail=detail)
            return
        key = "capabilities" if ctx.version >= 2 else "agentCapabilities"
        ctx.capabilities = result.get(key) or {}
        info = result.get("info" if ctx.version >= 2 else "agentInfo") or {}
        name = info.get("title") or info.get("name") or "the agent"
        ctx.agent = f"{name} {info.get('version', '')}".strip()
        check_auth_methods(ctx, result)
        if ctx.auth is not None:
            method = "authenticate" if ctx.version < 2 else "auth/login"
            try:
                await probe.request(method, {"methodId": ctx.auth}, ctx.call_timeout)
            except (RpcError, TimeoutError) as error:
                detail = f"sign-in with {ctx.auth} failed: {why(error, ctx.call_timeout)}"
                ctx.add("authenticate", "skipped", detail=detail)
        for step in _SESSION_STEPS:
            await step(ctx, probe)
        check_schema(ctx, probe)
        check_stdout(ctx, probe)
        check_permissions(ctx, probe)
        check_client_methods(ctx, probe)
        await check_stdin_close(ctx, probe)
    finally:
        await probe.close()


def check_auth_methods(ctx: Context, result: dict[str, Any]) -> None:
    methods = result.get("authMethods")
    if not methods:
        ctx.add("authMethods", "n/a", detail="none advertised")
        return
    names = ", ".join(str(m.get("id")) for m in methods if isinstance(m, dict))
    ctx.add("authMethods", "passed", detail=f"{len(methods)}: {names}")


_SESSION_STEPS: list[Callable[[Context, Probe], Awaitable[None]]] = [
    new_session,
    modes,
    config_options,
    unknown_method,
    bad_params,
    prompt_turn,
    cancel_turn,
    session_list,
    session_load,
    session_resume_close_delete,
]
