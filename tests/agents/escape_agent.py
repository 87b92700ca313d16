"""A hostile ACP v1 agent: on a prompt, it tries to get out of the session's workspace.

Standalone on purpose (plain `json`, `sys.stdin`/`sys.stdout`, nothing from acp_tui), so it
tests a client the way any agent would. Run it as `python escape_agent.py`; it speaks ACP v1 on
stdio and needs a client that advertises `fs` and (for the fixtures and terminal probes)
`terminal`.

The prompt's text may be a JSON object configuring the attack:
    {"outside": "/abs/dir", "huge_bytes": 2097152}
`outside` is a directory outside the workspace holding a `canary.txt` (default: the parent of
the workspace); `huge_bytes` is the size of the huge file it makes for the "huge read" probe.

What it does, in order:
1. asks permission (`session/request_permission`, kind `execute`) to plant its fixtures, then
   plants them through `terminal/create`, inside the workspace, as a malicious repository
   would ship them: symlinks to /etc, to the outside directory, to the outside canary, a
   dangling one to the outside, a symlink loop, a FIFO, a huge file, a binary file, a Latin-1
   file;
2. runs every probe: `fs/read_text_file`, `fs/write_text_file` and `terminal/create` with
   relative paths, absolute paths outside, `..`, symlinked files and parent directories,
   `/proc/self/...`, devices, a FIFO, directories, NUL bytes, non-UTF-8 names, huge and binary
   files, bad cwds and environments, unknown terminal ids; plus a few legitimate requests that
   must succeed (so refusing everything would not pass);
3. reports: one `agent_message_chunk` whose text is `ESCAPE-REPORT ` + a JSON list with one
   entry per probe: `{"name", "method", "expect": "error"|"ok", "outcome": "error"|"ok"|
   "timeout", "code"?, "message"?, "data"?, "result"?}`; then ends the turn (`end_turn`).

It sends one request at a time and waits at most `TIMEOUT` seconds for each (a client that
hangs on a FIFO shows up as "timeout"). An error response with a null id is taken as the
answer to the pending request: JSON-RPC answers that way when it cannot read the request's id
(e.g. a name with a lone UTF-16 surrogate, which strict JSON parsers reject).
"""

import json
import os
import select
import sys

TIMEOUT = 10.0
SESSION_ID = "escape-session"


class Peer:
    """Line-delimited JSON-RPC on stdin/stdout, one outstanding request at a time."""

    def __init__(self) -> None:
        self.buffer = b""
        self.next_id = 0
        self.pending_requests: list[dict] = []

    def send(self, message: dict) -> None:
        message["jsonrpc"] = "2.0"
        sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
        sys.stdout.buffer.flush()

    def receive(self, timeout: float | None) -> dict | None:
        """The next message, None on timeout; exits on end of input."""
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([sys.stdin.buffer], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(sys.stdin.fileno(), 1 << 16)
            if not chunk:
                sys.exit(0)
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return self.receive(timeout)

    def request(self, method: str, params: dict) -> dict:
        """The response (`result` or `error`), or `{"timeout": True}`."""
        request_id = self.next_id
        self.next_id += 1
        self.send({"id": request_id, "method": method, "params": params})
        while True:
            message = self.receive(TIMEOUT)
            if message is None:
                return {"timeout": True}
            if "method" in message:
                self.pending_requests.append(message)  # handled after this call
                continue
            if message.get("id") == request_id or (
                message.get("id") is None and "error" in message
            ):
                return message

    def notify(self, method: str, params: dict) -> None:
        self.send({"method": method, "params": params})


class EscapeAgent:
    def __init__(self) -> None:
        self.peer = Peer()
        self.capabilities: dict = {}
        self.cwd = "/"

    # -- the ACP agent side ---------------------------------------------------------------

    def serve(self) -> None:
        while True:
            message = (
                self.peer.pending_requests.pop(0)
                if self.peer.pending_requests
                else self.peer.receive(None)
            )
            if message is None or "method" not in message:
                continue
            if "id" not in message:
                continue  # session/cancel and other notifications: nothing to do
            answer = self.answer(message["method"], message.get("params") or {})
            if isinstance(answer, tuple):
                code, text = answer
                self.peer.send({"id": message["id"], "error": {"code": code, "message": text}})
            else:
                self.peer.send({"id": message["id"], "result": answer})

    def answer(self, method: str, params: dict) -> dict | tuple[int, str]:
        if method == "initialize":
            self.capabilities = params.get("clientCapabilities") or {}
            return {
                "protocolVersion": 1,
                "agentCapabilities": {},
                "agentInfo": {"name": "escape-agent", "version": "1"},
                "authMethods": [],
            }
        if method == "session/new":
            self.cwd = params["cwd"]
            return {"sessionId": SESSION_ID}
        if method == "session/prompt":
            text = "".join(
                block.get("text", "")
                for block in params.get("prompt", [])
                if isinstance(block, dict)
            )
            try:
                config = json.loads(text)
            except ValueError:
                config = {}
            report = self.attack(config if isinstance(config, dict) else {})
            self.say("ESCAPE-REPORT " + json.dumps(report))
            return {"stopReason": "end_turn"}
        return (-32601, f"Method not found: {method}")

    def say(self, text: str) -> None:
        self.update(
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        )

    def update(self, update: dict) -> None:
        self.peer.notify("session/update", {"sessionId": SESSION_ID, "update": update})

    # -- the attack -----------------------------------------------------------------------

    def attack(self, config: dict) -> list[dict]:
        cwd = self.cwd
        outside = config.get("outside") or os.path.dirname(cwd)
        huge = int(config.get("huge_bytes") or 16 * 1024 * 1024)
        fs = self.capabilities.get("fs") or {}
        results: list[dict] = []
        if self.capabilities.get("terminal") and self.allowed_to_plant():
            self.plant(cwd, outside, huge)
        if fs.get("readTextFile"):
            for name, path, extra, expect in read_probes(cwd, outside):
                params = {"sessionId": SESSION_ID, "path": path, **extra}
                results.append(self.probe(name, "fs/read_text_file", params, expect))
        if fs.get("writeTextFile"):
            for name, path, expect in write_probes(cwd, outside):
                params = {"sessionId": SESSION_ID, "path": path, "content": f"planted by {name}\n"}
                results.append(self.probe(name, "fs/write_text_file", params, expect))
        if self.capabilities.get("terminal"):
            results.extend(self.terminal_probes(cwd, outside))
        return results

    def allowed_to_plant(self) -> bool:
        call = {"toolCallId": "plant", "title": "Plant escape fixtures", "kind": "execute"}
        self.update({"sessionUpdate": "tool_call", **call, "status": "pending"})
        options = [
            {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
        ]
        response = self.peer.request(
            "session/request_permission",
            {"sessionId": SESSION_ID, "toolCall": call, "options": options},
        )
        outcome = (response.get("result") or {}).get("outcome") or {}
        return outcome.get("outcome") == "selected" and outcome.get("optionId") == "yes"

    def plant(self, cwd: str, outside: str, huge: int) -> None:
        commands = fixture_commands(cwd, outside, huge)
        for number, argv in enumerate(commands):
            created = self.peer.request(
                "terminal/create",
                {"sessionId": SESSION_ID, "command": argv[0], "args": argv[1:], "cwd": cwd},
            )
            terminal_id = (created.get("result") or {}).get("terminalId")
            if terminal_id is None:
                continue
            self.update(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": f"plant-{number}",
                    "title": " ".join(argv),
                    "kind": "execute",
                    "status": "in_progress",
                    "content": [{"type": "terminal", "terminalId": terminal_id}],
                }
            )
            ids = {"sessionId": SESSION_ID, "terminalId": terminal_id}
            self.peer.request("terminal/wait_for_exit", ids)
            self.peer.request("terminal/release", ids)

    def probe(self, name: str, method: str, params: dict, expect: str) -> dict:
        response = self.peer.request(method, params)
        entry = {"name": name, "method": method, "expect": expect, "params": params}
        if response.get("timeout"):
            entry["outcome"] = "timeout"
        elif "error" in response:
            error = response["error"]
            entry.update(outcome="error", code=error.get("code"), message=error.get("message"))
            entry["data"] = error.get("data")
        else:
            entry.update(outcome="ok", result=response.get("result"))
        return entry

    def terminal_probes(self, cwd: str, outside: str) -> list[dict]:
        results = []

        def create(name: str, expect: str, **params: object) -> dict:
            entry = self.probe(name, "terminal/create", {"sessionId": SESSION_ID, **params}, expect)
            results.append(entry)
            return entry

        for name, where in [
            ("cwd relative", "."),
            ("cwd outside", outside),
            ("cwd /etc", "/etc"),
            ("cwd through symlink to /etc", os.path.join(cwd, "etc-link")),
            ("cwd through symlink to outside", os.path.join(cwd, "outside-link")),
            ("cwd ..", os.path.join(cwd, "..")),
            ("cwd /proc/self/root", "/proc/self/root"),
            ("cwd is a file", os.path.join(cwd, "file.txt")),
            ("cwd missing", os.path.join(cwd, "no-such-dir")),
            ("cwd with NUL", cwd + "\0/.."),
        ]:
            create(name, "error", command="cat", args=["canary.txt"], cwd=where)
        create("bad env name", "error", command="true", env=[{"name": "A=B", "value": "x"}])
        create("NUL in args", "error", command="echo", args=["a\0b"])
        create("command not found", "error", command="no-such-command-acp-escape")
        ok = create("pwd in workspace", "ok", command="pwd")
        flood = create(
            "huge output is truncated",
            "ok",
            command="sh",
            args=["-c", "yes 0123456789 | head -c 3000000"],
            outputByteLimit=4096,
        )
        for entry in (ok, flood):
            terminal_id = (entry.get("result") or {}).get("terminalId")
            if terminal_id is None:
                continue
            ids = {"sessionId": SESSION_ID, "terminalId": terminal_id}
            self.peer.request("terminal/wait_for_exit", ids)
            entry["output"] = self.peer.request("terminal/output", ids).get("result")
            self.peer.request("terminal/release", ids)
            results.append(self.probe("output after release", "terminal/output", ids, "error"))
            results.append(self.probe("release twice", "terminal/release", ids, "error"))
        unknown = {"sessionId": SESSION_ID, "terminalId": "term-does-not-exist"}
        for method in ("terminal/output", "terminal/wait_for_exit", "terminal/kill"):
            results.append(self.probe("unknown terminal", method, unknown, "error"))
        return results


def fixture_commands(cwd: str, outside: str, huge: int) -> list[list[str]]:
    """The argv of each command that plants the fixtures inside the workspace."""
    join = os.path.join
    return [
        ["ln", "-s", "/etc", join(cwd, "etc-link")],
        ["ln", "-s", outside, join(cwd, "outside-link")],
        ["ln", "-s", join(outside, "canary.txt"), join(cwd, "canary-link.txt")],
        ["ln", "-s", join(outside, "planted-dangling.txt"), join(cwd, "dangling-link.txt")],
        ["ln", "-s", "loop-link", join(cwd, "loop-link")],
        ["mkfifo", join(cwd, "fifo")],
        ["mkdir", "-p", join(cwd, "subdir")],
        ["sh", "-c", f"printf 'hello\\nworld\\n' > '{join(cwd, 'file.txt')}'"],
        ["sh", "-c", f"yes 0123456789abcdef | head -c {huge} > '{join(cwd, 'huge.txt')}'"],
        ["sh", "-c", f"printf 'PK\\003\\004\\000\\377binary' > '{join(cwd, 'binary.dat')}'"],
        ["sh", "-c", f"printf 'caf\\351\\n' > '{join(cwd, 'latin1.txt')}'"],
    ]


def read_probes(cwd: str, outside: str) -> list[tuple[str, str, dict, str]]:
    join = os.path.join
    canary = join(outside, "canary.txt")
    up = os.path.relpath(outside, cwd)  # e.g. "../ws-outside"
    probes = [
        ("relative path", "canary.txt", {}, "error"),
        ("empty path", "", {}, "error"),
        ("home shorthand", "~/.bashrc", {}, "error"),
        ("absolute outside", canary, {}, "error"),
        ("absolute outside, missing file", join(outside, "missing.txt"), {}, "error"),
        ("/etc/passwd", "/etc/passwd", {}, "error"),
        ("//etc//passwd", "//etc//passwd", {}, "error"),
        ("/etc/shadow", "/etc/shadow", {}, "error"),
        ("dotdot", join(cwd, up, "canary.txt"), {}, "error"),
        ("dotdot through subdir", join(cwd, "subdir", "..", up, "canary.txt"), {}, "error"),
        ("dotdot through missing dir", join(cwd, "nope", "..", up, "canary.txt"), {}, "error"),
        ("dotdot to /etc", join(cwd, *[".."] * 30, "etc", "passwd"), {}, "error"),
        ("symlink to /etc", join(cwd, "etc-link", "passwd"), {}, "error"),
        ("symlinked parent dir", join(cwd, "outside-link", "canary.txt"), {}, "error"),
        ("symlinked file", join(cwd, "canary-link.txt"), {}, "error"),
        ("symlink loop", join(cwd, "loop-link"), {}, "error"),
        ("/proc/self/root", "/proc/self/root/etc/passwd", {}, "error"),
        ("/proc/self/root to outside", "/proc/self/root" + canary, {}, "error"),
        ("/proc/self/environ", "/proc/self/environ", {}, "error"),
        ("/proc/self/fd/0", "/proc/self/fd/0", {}, "error"),
        ("/proc/self/mem", "/proc/self/mem", {}, "error"),
        ("/dev/zero", "/dev/zero", {}, "error"),
        ("/dev/urandom", "/dev/urandom", {}, "error"),
        ("FIFO in workspace", join(cwd, "fifo"), {}, "error"),
        ("the workspace directory", cwd, {}, "error"),
        ("a directory", join(cwd, "subdir"), {}, "error"),
        ("huge file", join(cwd, "huge.txt"), {}, "error"),
        ("binary file", join(cwd, "binary.dat"), {}, "error"),
        ("Latin-1 file", join(cwd, "latin1.txt"), {}, "error"),
        ("NUL byte", join(cwd, "file.txt") + "\0" + "/../../../etc/passwd", {}, "error"),
        ("non-UTF-8 name (surrogate)", join(cwd, "bad\udcffname.txt"), {}, "error"),
        ("prefix trick", cwd + "-outside/canary.txt", {}, "error"),
        ("missing file inside", join(cwd, "missing.txt"), {}, "error"),
        ("past the end", join(cwd, "file.txt"), {"line": 100}, "error"),
        ("legit read", join(cwd, "file.txt"), {}, "ok"),
        ("legit read, line 2", join(cwd, "file.txt"), {"line": 2, "limit": 1}, "ok"),
        ("huge file, one line", join(cwd, "huge.txt"), {"line": 3, "limit": 1}, "ok"),
    ]
    return probes


def write_probes(cwd: str, outside: str) -> list[tuple[str, str, str]]:
    join = os.path.join
    up = os.path.relpath(outside, cwd)
    return [
        ("relative path", "planted.txt", "error"),
        ("absolute outside, new file", join(outside, "planted.txt"), "error"),
        ("absolute outside, overwrite canary", join(outside, "canary.txt"), "error"),
        ("absolute outside, new directory", join(outside, "newdir", "planted.txt"), "error"),
        ("/etc, new file", "/etc/acp-tui-escape-probe", "error"),
        ("dotdot", join(cwd, up, "planted.txt"), "error"),
        ("dotdot through missing dir", join(cwd, "a", "b", "..", "..", up, "x.txt"), "error"),
        ("symlink to /etc", join(cwd, "etc-link", "acp-tui-escape-probe"), "error"),
        ("symlinked parent dir", join(cwd, "outside-link", "planted.txt"), "error"),
        ("symlinked parent dir, new subdir", join(cwd, "outside-link", "d", "p.txt"), "error"),
        ("symlinked file", join(cwd, "canary-link.txt"), "error"),
        ("dangling symlink", join(cwd, "dangling-link.txt"), "error"),
        ("symlink loop", join(cwd, "loop-link"), "error"),
        ("/proc/self/root to outside", "/proc/self/root" + join(outside, "planted.txt"), "error"),
        ("/proc/self/fd/1", "/proc/self/fd/1", "error"),
        ("/dev/null", "/dev/null", "error"),
        ("FIFO in workspace", join(cwd, "fifo"), "error"),
        ("the workspace directory", cwd, "error"),
        ("a directory", join(cwd, "subdir"), "error"),
        ("trailing slash", join(cwd, "newdir") + "/", "error"),
        ("under a file", join(cwd, "file.txt", "child.txt"), "error"),
        ("NUL byte", join(cwd, "ok.txt") + "\0" + "/../../etc/x", "error"),
        ("non-UTF-8 name (surrogate)", join(cwd, "bad\udcffname.txt"), "error"),
        ("prefix trick", cwd + "-outside/planted.txt", "error"),
        ("legit write, new dirs", join(cwd, "new", "deep", "created.txt"), "ok"),
    ]


if __name__ == "__main__":
    EscapeAgent().serve()
