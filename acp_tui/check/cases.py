"""The cases `acp-tui check` runs, in order.

Each case gives one `Finding`: passed; failed (with the rule it broke, quoted, its level and
the raw line); a note (something clients trip over that the spec does not forbid: it never
fails the run); not applicable (the agent did not advertise the feature, or the turn did not
give the case anything to judge); or skipped (an earlier failure left nothing to run it on,
or it would only repeat that failure). Cases that need a model say so.

The cases live by subject: `handshake` (initialize), `sessions`, `robustness`, `turns`,
`permissions` and `whole_connection`; the rules they quote in `rules`, their `Context` and
`Finding` in `context`. Here: their order.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from acp_tui.check.context import Context
from acp_tui.check.handshake import OFFERS, check_offer, initialize, new_probe
from acp_tui.check.permissions import permission_flow
from acp_tui.check.probe import Probe
from acp_tui.check.robustness import (
    bad_params,
    malformed_json,
    unknown_methods,
    unknown_notification,
    unknown_session,
)
from acp_tui.check.sessions import (
    config_options,
    modes,
    new_session,
    session_close,
    session_delete,
    session_list,
    session_load,
    session_resume,
    sign_in,
)
from acp_tui.check.turns import cancel_turn, prompt_turn, resource_link
from acp_tui.check.whole_connection import (
    check_client_methods,
    check_schema,
    check_stdin_close,
    check_stdout,
    check_tool_calls,
)

Step = Callable[[Context, Probe], Awaitable[None]]

SESSION_STEPS: list[Step] = [
    sign_in,
    new_session,
    modes,
    config_options,
    unknown_methods,
    bad_params,
    unknown_notification,
    unknown_session,
    prompt_turn,
    resource_link,
    cancel_turn,
    permission_flow,
    session_list,
    session_load,
    session_resume,
    session_close,
    session_delete,
    malformed_json,
]
NEEDS_SESSION: set[Step] = {
    modes,
    config_options,
    prompt_turn,
    resource_link,
    cancel_turn,
    permission_flow,
    session_list,
    session_load,
    session_resume,
    session_close,
    session_delete,
}


async def check(ctx: Context) -> None:
    """The whole run: the session's `initialize` first (a failure stops everything, see
    `handshake.Stop`), the other offers, then everything on the session's connection; then
    stdin is closed."""
    probe = new_probe(ctx, "session", ctx.version)
    try:
        await probe.start()
        await initialize(ctx, probe, f"initialize (ACP v{ctx.version})")
        for offered in OFFERS:
            await check_offer(ctx, offered)
        for step in SESSION_STEPS:
            if step in NEEDS_SESSION and ctx.session_id is None:
                name = step.__name__.replace("_", " ")
                ctx.add(name, "skipped", detail="no session: session/new failed")
                continue
            await step(ctx, probe)
        check_schema(ctx, probe)
        check_stdout(ctx, probe)
        check_tool_calls(ctx, probe)
        check_client_methods(ctx, probe)
        await check_stdin_close(ctx, probe)
    finally:
        await probe.close()
