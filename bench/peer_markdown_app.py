"""The peer of `bench_peers.py`: a plain Textual app that streams an ACP agent's answer
through Textual's own `Markdown` widget and `MarkdownStream`, as Textual's documentation shows.

It speaks just enough ACP (v1) for the flood agent: `initialize`, `session/new`, then one
`session/prompt` with what was typed when Enter is pressed; each `agent_message_chunk`'s text is
written to the stream. The answer scrolls in an anchored `VerticalScroll`, so the screen follows
it to its end as a chat does. The same command line as acp-tui's for the bench:

Run: python bench/peer_markdown_app.py --cwd DIR -- AGENT [ARGS...]
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input, Markdown, Static


class PeerApp(App[None]):
    """A chat of one answer: the agent's Markdown above, the prompt below."""

    AUTO_FOCUS = "#prompt"
    CSS = """
    #answer { height: 1fr; }
    #prompt { dock: bottom; }
    """

    def __init__(self, agent: list[str], cwd: str) -> None:
        super().__init__()
        self.agent, self.cwd = agent, cwd
        self.process: asyncio.subprocess.Process | None = None
        self.session = ""
        self.answers: dict[int, asyncio.Future[Any]] = {}

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="answer"):
            yield Static("starting the agent", id="status")
            yield Markdown(id="markdown")
        yield Input(placeholder="Ask the agent", id="prompt")

    async def on_mount(self) -> None:
        self.query_one("#answer", VerticalScroll).anchor()
        self.stream = Markdown.get_stream(self.query_one("#markdown", Markdown))
        self.process = await asyncio.create_subprocess_exec(
            *self.agent,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            cwd=self.cwd,
            limit=1 << 24,
        )
        self.run_worker(self.read(), exclusive=False)
        await self.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = await self.request("session/new", {"cwd": self.cwd, "mcpServers": []})
        self.session = session["sessionId"]
        self.query_one("#status", Static).update("ready: type, then press Enter")

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        assert self.process is not None and self.process.stdin is not None
        number = len(self.answers)
        self.answers[number] = asyncio.get_running_loop().create_future()
        line = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        self.process.stdin.write(json.dumps(line).encode() + b"\n")
        return await self.answers[number]

    async def read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        async for line in self.process.stdout:
            message = json.loads(line)
            if "id" in message and "method" not in message:
                self.answers[message["id"]].set_result(message.get("result"))
                continue
            update = message.get("params", {}).get("update", {})
            if update.get("sessionUpdate") == "agent_message_chunk":
                await self.stream.write(update["content"].get("text", ""))

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        text, event.input.value = event.value, ""
        prompt = [{"type": "text", "text": text}]
        self.run_worker(
            self.request("session/prompt", {"sessionId": self.session, "prompt": prompt})
        )


def main() -> None:
    arguments = sys.argv[1:]
    split = arguments.index("--")
    options, agent = arguments[:split], arguments[split + 1 :]
    cwd = options[options.index("--cwd") + 1] if "--cwd" in options else "."
    PeerApp(agent, cwd).run()


if __name__ == "__main__":
    main()
