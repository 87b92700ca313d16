"""Scenarios about the session itself: context `usage`, model `providers`, the `title`."""

from __future__ import annotations

from acp_tui.demo import texts
from acp_tui.demo.turn import Turn
from acp_tui.demo.wire import CONTEXT_SIZE


async def usage(turn: Turn, arg: str) -> None:
    await turn.usage()
    record = turn.record
    await turn.say(
        texts.USAGE.format(
            used=record.tokens_used, size=CONTEXT_SIZE[record.model], cost=record.cost
        )
    )


async def providers(turn: Turn, arg: str) -> None:
    route = turn.peer.provider
    if route is None:
        await turn.say(texts.PROVIDER_OWN)
        return
    headers = ", ".join(f"`{name}`" for name in route["headers"]) or "none"
    await turn.say(
        texts.PROVIDER_SET.format(url=route["baseUrl"], api=route["apiType"], headers=headers)
    )


async def title(turn: Turn, arg: str) -> None:
    if not arg:
        await turn.say(texts.TITLE_MISSING)
        return
    await turn.set_title(arg)
    await turn.say(texts.TITLE_SET.format(title=arg))
