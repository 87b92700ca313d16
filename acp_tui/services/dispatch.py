"""Routing the agent's `fs/*` and `terminal/*` requests, and advertising exactly those served.

A session builds one `ClientServices` from the services that are on (`--no-fs` and
`--no-terminal` leave one out), sends `capabilities()` in `initialize`, and passes every agent
request whose method `serves()` to `handle_request`. A method of a service that is off is
`-32601`, as the spec asks of methods a client did not advertise.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import msgspec

from acp_tui.protocol.jsonrpc import method_not_found
from acp_tui.protocol.methods import ClientCapabilitiesV1, FileSystemCapability
from acp_tui.services.fs import FileSystemService
from acp_tui.services.terminals import TerminalService

Route = Callable[[msgspec.Raw], Awaitable[Any]]
Around = Callable[[str, msgspec.Raw, Route], Awaitable[Any]]
"""Something that stands in front of a method: it gets the method, the request's params and
the service's own route, which it calls (or not)."""


class ClientServices:
    """The client-side methods one session serves."""

    def __init__(
        self, fs: FileSystemService | None = None, terminals: TerminalService | None = None
    ) -> None:
        self.fs = fs
        self.terminals = terminals
        self._routes: dict[str, Route] = {}
        if fs is not None:
            self._routes |= {
                "fs/read_text_file": fs.read_text_file,
                "fs/write_text_file": fs.write_text_file,
            }
        if terminals is not None:
            self._routes |= {
                "terminal/create": terminals.create,
                "terminal/output": terminals.output,
                "terminal/wait_for_exit": terminals.wait_for_exit,
                "terminal/kill": terminals.kill,
                "terminal/release": terminals.release,
            }

    def put_in_front(self, methods: Iterable[str], around: Around) -> None:
        """Route `methods` (those served) through `around` (the session's guard)."""
        for method in methods:
            route = self._routes.get(method)
            if route is not None:
                self._routes[method] = _through(around, method, route)

    def capabilities(self) -> ClientCapabilitiesV1:
        """The v1 `clientCapabilities` for `initialize`: what is served, nothing more."""
        on = self.fs is not None
        return ClientCapabilitiesV1(
            fs=FileSystemCapability(read_text_file=on, write_text_file=on),
            terminal=self.terminals is not None,
        )

    @staticmethod
    def serves(method: str) -> bool:
        """Whether `method` belongs here: served, or answered `-32601` because its service is
        off or it is an `fs/`/`terminal/` method this client does not know."""
        return method.startswith(("fs/", "terminal/"))

    async def handle_request(self, method: str, params: msgspec.Raw) -> Any:
        """Answer one request; `RpcError` for errors the agent should get."""
        route = self._routes.get(method)
        if route is None:
            raise method_not_found(method)
        return await route(params)

    async def close(self) -> None:
        """End every terminal (the session ended, or acp-tui quits)."""
        if self.terminals is not None:
            await self.terminals.close_all()


def _through(around: Around, method: str, route: Route) -> Route:
    async def routed(params: msgspec.Raw) -> Any:
        return await around(method, params, route)

    return routed
