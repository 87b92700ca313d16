"""A scripted fake model server, so real coding agents run here offline and predictably.

One `FakeModel` (stdlib only) listens on a free port of 127.0.0.1 and speaks the three wire
formats the real agents use:

- Anthropic Messages (Claude Code): `POST …/v1/messages`, SSE when `stream` is true, else
  JSON; `POST …/v1/messages/count_tokens`.
- OpenAI Responses (Codex): `POST …/responses`, always SSE; `GET …/models`.
- Gemini generativelanguage (Gemini CLI): `POST …/models/M:streamGenerateContent` (SSE),
  `…:generateContent`, `…:countTokens`. Side requests that ask for JSON (`responseMimeType`
  application/json, e.g. Gemini's model router and next-speaker check) get an object that fits
  their `responseJsonSchema`.

It is also the agents' HTTP(S) proxy: with `HTTP(S)_PROXY` pointed at it, a `CONNECT` or an
absolute-URL request for any host but 127.0.0.1/localhost is refused with 403 and recorded in
`blocked`, so nothing an agent does can reach the internet.

The model's behaviour is scripted by directives in the latest user text of a request, several
separated by ` ;; `, one per model step (the number of tool results after that text says which
step is next):

    DO:read PATH         the agent's read-file tool (Codex has none: its shell runs `cat PATH`)
    DO:write PATH TEXT   the agent's write-file tool writes TEXT and a newline (Codex: an
                         `apply_patch` that adds the file)
    DO:bash CMD          the agent's shell tool runs CMD
    DO:call TOOL JSON    exactly that tool with those arguments (e.g. Claude's AskUserQuestion)
    DO:slow              after the tool steps, a long answer streamed slowly (to cancel it)

After the last step the model says "Finished N scripted step(s)."; a request without
directives gets "Hello from the fake model." So do side requests that offer no tools (titles,
summaries), even when the prompt they quote has directives, and they never stream slowly.

Every request is recorded (`requests`), with the text of the tool results it carries, so a test
can check what a tool call gave the model.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import urlsplit

T = TypeVar("T")

HELLO = "Hello from the fake model."
_LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost"})
_USAGE_TOKENS = 20

# The tools each directive uses, by the names the agents give them, in order of preference.
_READ_TOOLS = ("Read", "read_file")
_WRITE_TOOLS = ("Write", "write_file")
_SHELL_TOOLS = ("Bash", "run_shell_command", "exec_command", "shell_command", "shell")
# Argument names the agents' tool schemas use for the path, the content and the command.
_ARGUMENT_NAMES = {
    "path": ("file_path", "absolute_path", "path"),
    "content": ("content",),
    "command": ("command", "cmd"),
    "description": ("description",),
}


@dataclass(frozen=True)
class Recorded:
    """One request an agent made to the model."""

    method: str
    path: str
    body: Any
    tool_results: list[str]
    """The tool results the request sends back to the model, each as text (JSON if need be)."""


@dataclass(frozen=True)
class Step:
    """What the model does in one response: call a tool, or answer in text."""

    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    freeform: str | None = None
    """The raw input of a freeform ("custom") tool, Codex's `apply_patch`, instead of JSON."""
    text: str = ""
    slow: bool = False


class FakeModel:
    """The server: `with FakeModel() as model:` … `model.url` … the recorded requests."""

    def __init__(self, *, slow_chunks: int = 300, slow_delay: float = 0.1) -> None:
        self.slow_chunks = slow_chunks
        self.slow_delay = slow_delay
        self.requests: list[Recorded] = []
        self.blocked: list[str] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.model = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def mark(self) -> int:
        """A bookmark: pass it to `since` to see only the requests made after it."""
        with self._lock:
            return len(self.requests)

    def since(self, mark: int) -> list[Recorded]:
        with self._lock:
            return self.requests[mark:]

    def tool_results_since(self, mark: int) -> list[str]:
        """Every tool result the agents sent the model after `mark`."""
        return [text for request in self.since(mark) for text in request.tool_results]

    def _record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    def _block(self, host: str) -> None:
        with self._lock:
            self.blocked.append(host)

    def _slow_text(self) -> Iterator[str]:
        for i in range(self.slow_chunks):
            yield f"slow chunk {i} "
            time.sleep(self.slow_delay)


# -- scripting -------------------------------------------------------------------------------


def plan(user_text: str, tool_results: int, tools: dict[str, dict[str, Any]]) -> Step:
    """The next step for a request whose latest user text is `user_text`, followed by
    `tool_results` tool results; `tools` maps the offered tool names to their JSON schemas
    (empty for a freeform tool)."""
    directives = _directives(user_text)
    steps = [d for d in directives if d[0] != "slow"]
    if not tools:
        return Step(text=HELLO)  # a side request: titles, summaries, suggestions
    if tool_results < len(steps):
        verb, argument = steps[tool_results]
        return _tool_step(verb, argument, tools)
    if any(verb == "slow" for verb, _ in directives):
        return Step(slow=True)
    if steps:
        return Step(text=f"Finished {len(steps)} scripted step(s).")
    return Step(text=HELLO)


def _directives(text: str) -> list[tuple[str, str]]:
    """The (verb, argument) of every `DO:` directive, from the first `DO:` to its line's end."""
    found: list[tuple[str, str]] = []
    for line in text.splitlines():
        start = line.find("DO:")
        if start < 0:
            continue
        for part in re.split(r"\s;;\s", line[start:]):
            match = re.fullmatch(r"DO:(\w+)\s*(.*)", part.strip())
            if match:
                found.append((match[1], match[2].strip()))
    return found


def _tool_step(verb: str, argument: str, tools: dict[str, dict[str, Any]]) -> Step:
    if verb == "call":
        name, _, arguments = argument.partition(" ")
        return Step(tool=name, arguments=json.loads(arguments or "{}"))
    path, _, text = argument.partition(" ")
    if verb == "read":
        if (tool := _first(_READ_TOOLS, tools)) is not None:
            return Step(tool=tool, arguments=_arguments(tools[tool], path=path))
        return _shell_step(f"cat {_quoted(path)}", tools)
    if verb == "write":
        if (tool := _first(_WRITE_TOOLS, tools)) is not None:
            return Step(
                tool=tool, arguments=_arguments(tools[tool], path=path, content=text + "\n")
            )
        if "apply_patch" in tools:
            patch = f"*** Begin Patch\n*** Add File: {path}\n+{text}\n*** End Patch\n"
            return Step(tool="apply_patch", freeform=patch)
    if verb == "bash":
        return _shell_step(argument, tools)
    return Step(text=f"The fake model cannot do DO:{verb} with the tools {sorted(tools)}.")


def _shell_step(command: str, tools: dict[str, dict[str, Any]]) -> Step:
    tool = _first(_SHELL_TOOLS, tools)
    if tool is None:
        return Step(text=f"The fake model found no shell tool in {sorted(tools)}.")
    arguments = _arguments(tools[tool], command=command, description="A scripted command")
    return Step(tool=tool, arguments=arguments)


def _first(names: tuple[str, ...], tools: dict[str, dict[str, Any]]) -> str | None:
    return next((name for name in names if name in tools), None)


def _arguments(schema: dict[str, Any], **values: str) -> dict[str, Any]:
    """Arguments for a tool with this JSON schema: `values` under the names it uses for them."""
    properties = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for key, value in values.items():
        name = next((n for n in _ARGUMENT_NAMES[key] if n in properties), None)
        if name is None:
            continue
        # Some shells take argv (`["bash", "-lc", …]`), not a command line.
        is_argv = key == "command" and properties[name].get("type") == "array"
        arguments[name] = ["bash", "-lc", value] if is_argv else value
    return arguments


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _example(schema: dict[str, Any], name: str = "") -> Any:
    """A value that fits a (Gemini-style, upper-case types allowed) JSON schema."""
    if "enum" in schema:
        # "user": the next-speaker check then hands the turn back instead of looping.
        return "user" if "user" in schema["enum"] else schema["enum"][0]
    kind = str(schema.get("type", "object" if "properties" in schema else "string")).lower()
    if kind == "object":
        properties = schema.get("properties") or {}
        required = schema.get("required", list(properties))
        return {key: _example(properties[key], key) for key in required if key in properties}
    if name == "next_speaker":
        return "user"
    return {"array": [], "integer": 1, "number": 1, "boolean": False}.get(kind, "fake")


def _with_last(items: Iterable[T]) -> Iterator[tuple[T, bool]]:
    """Each item, and whether it is the last one (the last one carries the finish reason)."""
    iterator = iter(items)
    previous = next(iterator, None)
    for item in iterator:
        yield previous, False  # type: ignore[misc]
        previous = item
    if previous is not None:
        yield previous, True


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


# -- the three APIs --------------------------------------------------------------------------


def _anthropic_request(body: dict[str, Any]) -> tuple[str, int, list[str]]:
    """(latest user text, tool results after it, every tool result) of a Messages request."""
    results: list[str] = []
    for message in body.get("messages") or []:
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            if block.get("type") == "tool_result":
                results.append(_as_text(block.get("content")))
    after = 0
    for message in reversed(body.get("messages") or []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content, after, results
        after += sum(1 for block in content if block.get("type") == "tool_result")
        # Claude Code puts context in <system-reminder> text blocks before the prompt.
        texts = [
            block["text"]
            for block in content
            if block.get("type") == "text" and not block["text"].startswith("<system-reminder>")
        ]
        if texts:
            return "\n".join(texts), after, results
    return "", after, results


def _responses_request(body: dict[str, Any]) -> tuple[str, int, list[str]]:
    """The same for an OpenAI Responses request."""
    items = body.get("input") or []
    if isinstance(items, str):
        return items, 0, []
    results = [_as_text(i.get("output")) for i in items if str(i.get("type")).endswith("_output")]
    latest, after = "", 0
    for item in items:
        if str(item.get("type")).endswith("_output"):
            after += 1
        elif item.get("role") == "user" and item.get("type", "message") == "message":
            content = item.get("content")
            text = content if isinstance(content, str) else _input_text(content)
            # Codex sends its context (<environment_context>, AGENTS.md) as user messages too.
            if not text.lstrip().startswith(("<", "# AGENTS.md")):
                latest, after = text, 0
    return latest, after, results


def _input_text(content: Any) -> str:
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def _gemini_request(body: dict[str, Any]) -> tuple[str, int, list[str]]:
    """The same for a Gemini generateContent request."""
    results = [
        _as_text(part["functionResponse"].get("response"))
        for content in body.get("contents") or []
        for part in content.get("parts") or []
        if "functionResponse" in part
    ]
    after = 0
    for content in reversed(body.get("contents") or []):
        if content.get("role", "user") != "user":
            continue
        parts = content.get("parts") or []
        after += sum(1 for part in parts if "functionResponse" in part)
        texts = [part["text"] for part in parts if "text" in part]
        if texts:
            return "\n".join(texts), after, results
    return "", after, results


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeModel/1"

    @property
    def model(self) -> FakeModel:
        return self.server.model  # type: ignore[attr-defined,no-any-return]

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the recorded requests say what happened."""

    # -- routing

    def do_CONNECT(self) -> None:
        self._refuse(self.path.rsplit(":", 1)[0])

    def do_GET(self) -> None:
        if not self._local():
            return
        path = urlsplit(self.path).path.rstrip("/")
        self.model._record(Recorded("GET", self.path, None, []))
        if path.endswith("/models"):
            model = {"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}
            self._json({"object": "list", "data": [model], "models": []})
        else:
            self._json({"error": {"message": f"fake model: no {path}"}}, status=404)

    def do_POST(self) -> None:
        if not self._local():
            return
        body = self._body()
        path = urlsplit(self.path).path.rstrip("/")
        if path.endswith("/messages/count_tokens"):
            self._record(body, [])
            self._json({"input_tokens": 100})
        elif path.endswith("/messages"):
            self._anthropic(body)
        elif path.endswith("/responses"):
            self._responses(body)
        elif match := re.search(r"/models/([^/:]+):(\w+)$", path):
            if match[2] == "countTokens":
                self._record(body, [])
                self._json({"totalTokens": 100})
            else:
                self._gemini(body, match[1], stream=match[2] == "streamGenerateContent")
        else:
            self._record(body, [])
            self._json({"error": {"message": f"fake model: no {path}"}}, status=404)

    def _local(self) -> bool:
        """Serve requests for 127.0.0.1 (absolute-URL proxy requests too); refuse the rest."""
        if not self.path.startswith(("http://", "https://")):
            return True
        url = urlsplit(self.path)
        if url.hostname not in _LOCAL_HOSTS:
            self._refuse(url.hostname or "")
            return False
        self.path = url.path + (f"?{url.query}" if url.query else "")
        return True

    def _refuse(self, host: str) -> None:
        self.model._block(host)
        self._json({"error": {"message": f"fake model: {host} is outside, refused"}}, status=403)

    def _record(self, body: Any, tool_results: list[str]) -> None:
        self.model._record(Recorded(self.command, self.path, body, tool_results))

    # -- the APIs

    def _anthropic(self, body: dict[str, Any]) -> None:
        text, after, results = _anthropic_request(body)
        self._record(body, results)
        tools = {t["name"]: t.get("input_schema") or {} for t in body.get("tools") or []}
        step = plan(text, after, tools)
        usage = {"input_tokens": 100, "output_tokens": _USAGE_TOKENS}
        message = {
            "id": f"msg_{next(self.model._ids)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake-model"),
            "stop_sequence": None,
            "usage": usage,
        }
        call_id = f"toolu_{next(self.model._ids)}"
        stop = "tool_use" if step.tool else "end_turn"
        if not body.get("stream"):
            block: dict[str, Any] = {"type": "text", "text": step.text or HELLO}
            if step.tool:
                block = {"type": "tool_use", "id": call_id, "name": step.tool}
                block["input"] = step.arguments
            self._json({**message, "content": [block], "stop_reason": stop})
            return
        self._start_stream()
        send = self._anthropic_event
        send("message_start", {"message": {**message, "content": [], "stop_reason": None}})
        if step.tool:
            start = {"type": "tool_use", "id": call_id, "name": step.tool, "input": {}}
            send("content_block_start", {"index": 0, "content_block": start})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(step.arguments)}
            send("content_block_delta", {"index": 0, "delta": delta})
        else:
            send("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
            for chunk in self._text(step):
                delta = {"type": "text_delta", "text": chunk}
                if not send("content_block_delta", {"index": 0, "delta": delta}):
                    return  # the agent hung up: cancelled
        send("content_block_stop", {"index": 0})
        delta = {"stop_reason": stop, "stop_sequence": None}
        send("message_delta", {"delta": delta, "usage": {"output_tokens": _USAGE_TOKENS}})
        send("message_stop", {})
        self._end_stream()

    def _anthropic_event(self, name: str, data: dict[str, Any]) -> bool:
        return self._send_chunk(f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n")

    def _responses(self, body: dict[str, Any]) -> None:
        text, after, results = _responses_request(body)
        self._record(body, results)
        tools: dict[str, dict[str, Any]] = {}
        for tool in body.get("tools") or []:
            if "name" in tool:
                tools[tool["name"]] = tool.get("parameters") or {}
        step = plan(text, after, tools)
        number = next(self.model._ids)
        response = {"id": f"resp_{number}", "object": "response", "model": body.get("model")}
        sequence = itertools.count()

        def send(kind: str, **data: Any) -> bool:
            event = {"type": kind, "sequence_number": next(sequence), **data}
            return self._send_chunk(f"event: {kind}\ndata: {json.dumps(event)}\n\n")

        self._start_stream()
        send("response.created", response={**response, "status": "in_progress", "output": []})
        call = {"call_id": f"call_{number}", "name": step.tool, "status": "completed"}
        if step.freeform is not None:
            item = {"type": "custom_tool_call", "id": f"ctc_{number}", **call}
            send("response.output_item.added", output_index=0, item={**item, "input": ""})
            send("response.output_item.done", output_index=0, item={**item, "input": step.freeform})
        elif step.tool:
            item = {"type": "function_call", "id": f"fc_{number}", **call}
            arguments = json.dumps(step.arguments)
            send("response.output_item.added", output_index=0, item={**item, "arguments": ""})
            send("response.output_item.done", output_index=0, item={**item, "arguments": arguments})
        else:
            item = {"type": "message", "id": f"msg_{number}", "role": "assistant"}
            at = {"item_id": item["id"], "output_index": 0, "content_index": 0}
            send("response.output_item.added", output_index=0, item={**item, "content": []})
            part = {"type": "output_text", "text": "", "annotations": []}
            send("response.content_part.added", **at, part=part)
            said = []
            for chunk in self._text(step):
                said.append(chunk)
                if not send("response.output_text.delta", **at, delta=chunk):
                    return
            full = "".join(said)
            send("response.output_text.done", **at, text=full)
            done = {**item, "status": "completed", "content": [{**part, "text": full}]}
            send("response.output_item.done", output_index=0, item=done)
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": _USAGE_TOKENS,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 100 + _USAGE_TOKENS,
        }
        done_response = {**response, "status": "completed", "output": [], "usage": usage}
        send("response.completed", response=done_response)
        self._end_stream()

    def _gemini(self, body: dict[str, Any], model: str, *, stream: bool) -> None:
        text, after, results = _gemini_request(body)
        self._record(body, results)
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        if config.get("responseMimeType") == "application/json" and schema:
            parts_list: Iterable[list[dict[str, Any]]] = [[{"text": json.dumps(_example(schema))}]]
        else:
            tools = {
                declaration["name"]: declaration.get("parametersJsonSchema")
                or declaration.get("parameters")
                or {}
                for tool in body.get("tools") or []
                for declaration in tool.get("functionDeclarations") or []
            }
            step = plan(text, after, tools)
            if step.tool:
                call = {"name": step.tool, "args": step.arguments}
                parts_list = [[{"functionCall": call}]]
            else:
                parts_list = ([{"text": chunk}] for chunk in self._text(step))
        usage = {"promptTokenCount": 100, "candidatesTokenCount": _USAGE_TOKENS}
        usage["totalTokenCount"] = 100 + _USAGE_TOKENS

        def response(parts: list[dict[str, Any]], last: bool) -> dict[str, Any]:
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
            if last:
                candidate["finishReason"] = "STOP"
            answer: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
            return {**answer, "usageMetadata": usage} if last else answer

        if not stream:
            self._json(response([part for parts in parts_list for part in parts], last=True))
            return
        self._start_stream()
        for parts, last in _with_last(parts_list):
            if not self._send_chunk(f"data: {json.dumps(response(parts, last))}\n\n"):
                return
        self._end_stream()

    def _text(self, step: Step) -> Iterator[str]:
        """The pieces of a text answer, word by word (slowly for `DO:slow`)."""
        if step.slow:
            yield from self.model._slow_text()
        else:
            yield from re.findall(r"\S+\s*", step.text)

    # -- HTTP

    def _body(self) -> Any:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = b""
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                raw += self.rfile.read(size)
                self.rfile.readline()
            self.rfile.readline()
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {"unparsed": raw.decode(errors="replace")}

    def _json(self, value: Any, status: int = 200) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self) -> None:
        # Chunked, so the agent's HTTP client sees each event as it is sent.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _send_chunk(self, text: str) -> bool:
        """Send one piece of the stream; False once the agent has hung up."""
        data = text.encode()
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except OSError:
            return False
        return True

    def _end_stream(self) -> None:
        try:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            pass
