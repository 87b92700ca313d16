"""A flood of updates through headless acp-tui, against a bare msgspec reader of the same flood.

A small agent (standard library only) answers `initialize`, `session/new`, and answers the
prompt with a flood of `session/update` lines written at once, then `end_turn`. Two floods:

- chunks: 100k `agent_message_chunk`s (a long answer streamed word by word), `--output-format
          text`: the text printed as it streams;
- mixed:  the realistic 100k-update mix of `bench_protocol.py` (chunks, thoughts, tool calls
          with diffs, plans, usage), `--output-format jsonl`: one JSON object per change.

Each is read, as a whole process from start to exit, by:
- bare reader: python, `import msgspec`, the agent spawned, the three requests written, its
               stdout read in 256 KB pieces and split into lines, each decoded by
               `msgspec.json.decode`, up to the prompt's answer; nothing printed (the floor);
- acp-tui:     `python -m acp_tui -p go --output-format ...` as a user runs it (records and
               checkpoints on, in a fresh home and workspace), its output read by this process.

Both with their bytecode cached, as installed (a `PYTHONPYCACHEPREFIX` filled by a first run).

Runs interleaved; medians, and acp-tui's time as a multiple of the bare reader's.
Target (issue 14): acp-tui within 2x of the bare reader.

Run: python bench/bench_headless.py [--lines 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_protocol import SESSION, realistic_stream

FLOOD_AGENT = """
import json, sys
flood = open(sys.argv[1], "rb").read()
out = sys.stdout.buffer

def answer(request, result):
    out.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode())
    out.write(b"\\n")
    out.flush()

for line in sys.stdin.buffer:
    request = json.loads(line)
    method = request.get("method")
    if "id" not in request or method is None:
        continue
    if method == "initialize":
        answer(request, {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []})
    elif method == "session/new":
        answer(request, {"sessionId": SESSION})
    elif method == "session/prompt":
        out.write(flood)
        answer(request, {"stopReason": "end_turn"})
    else:
        out.write(json.dumps({"jsonrpc": "2.0", "id": request["id"],
                              "error": {"code": -32601, "message": "Method not found"}}).encode())
        out.write(b"\\n")
        out.flush()
""".replace("SESSION", repr(SESSION))

BARE_READER = """
import subprocess, sys
import msgspec

agent = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
for number, (method, params) in enumerate([
    ("initialize", {"protocolVersion": 1, "clientCapabilities": {}}),
    ("session/new", {"cwd": "/", "mcpServers": []}),
    ("session/prompt", {"sessionId": "x", "prompt": [{"type": "text", "text": "go"}]}),
]):
    request = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
    agent.stdin.write(msgspec.json.encode(request) + b"\\n")
agent.stdin.flush()
decode = msgspec.json.decode
updates, partial, answered = 0, b"", False
while not answered and (chunk := agent.stdout.read1(1 << 18)):
    lines = (partial + chunk).split(b"\\n")
    partial = lines.pop()
    for line in lines:
        message = decode(line)
        if message.get("method") == "session/update":
            updates += 1
        elif message.get("id") == 2:
            answered = True
agent.stdin.close()
agent.wait()
print(updates)
"""


def chunk_flood(lines: int) -> bytes:
    head = (
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"' + SESSION + '",'
        '"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"'
    )
    return "".join(f'{head}{n} "}}}}}}}}\n' for n in range(lines)).encode()


def answer(flood: bytes) -> str:
    """The agent's answer in a flood: the text of its message chunks."""
    texts = []
    for line in flood.splitlines():
        update = json.loads(line)["params"]["update"]
        if update["sessionUpdate"] == "agent_message_chunk":
            texts.append(update["content"]["text"])
    return "".join(texts)


def printed_answer(out: bytes) -> str:
    """The agent's answer in acp-tui's jsonl: the text appended to its messages (chunks read
    together are printed as one)."""
    events = (json.loads(line) for line in out.splitlines())
    return "".join(event["append"]["text"] for event in events if event.get("role") == "agent")


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, bytes]:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv[:4]} failed ({done.returncode}): {done.stderr.decode()[-600:]}")
    return elapsed, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="acp-tui-flood-") as tmp:
        scratch = Path(tmp)
        agent = scratch / "flood_agent.py"
        agent.write_text(FLOOD_AGENT)
        reader = scratch / "bare_reader.py"
        reader.write_text(BARE_READER)
        floods = {
            "chunks": (chunk_flood(args.lines), "text"),
            "mixed": (realistic_stream(args.lines), "jsonl"),
        }
        home, workspace = scratch / "home", scratch / "workspace"
        home.mkdir()
        workspace.mkdir()
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env |= {"HOME": str(home), "PYTHONPYCACHEPREFIX": str(scratch / "pycache")}
        env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
        times: dict[tuple[str, str], list[float]] = {}
        answers = {name: answer(data) for name, (data, _fmt) in floods.items()}
        for name, (data, _fmt) in floods.items():
            (scratch / f"{name}.jsonl").write_bytes(data)
        for run in range(args.runs + 1):  # the first fills the bytecode cache
            if run == 1:
                times.clear()
            for name, (_data, output_format) in floods.items():
                agent_argv = [python, str(agent), str(scratch / f"{name}.jsonl")]
                bare, out = timed([python, str(reader), *agent_argv], env, workspace)
                if int(out) != args.lines:
                    raise SystemExit(f"the bare reader saw {int(out)} updates")
                ours, out = timed(
                    [
                        python,
                        "-m",
                        "acp_tui",
                        "-p",
                        "go",
                        "--output-format",
                        output_format,
                        "--",
                        *agent_argv,
                    ],
                    env,
                    workspace,
                )
                if output_format == "jsonl" and printed_answer(out) != answers[name]:
                    raise SystemExit("acp-tui printed another answer than the agent sent")
                times.setdefault((name, "bare reader"), []).append(bare)
                times.setdefault((name, "acp-tui"), []).append(ours)
    print(f"{args.lines:,} updates a flood; {args.runs} runs each, interleaved; medians")
    for name in floods:
        bare = statistics.median(times[name, "bare reader"])
        ours = statistics.median(times[name, "acp-tui"])
        print(
            f"{name:>7}: bare reader {bare * 1000:5.0f} ms, acp-tui {ours * 1000:5.0f} ms: "
            f"{ours / bare:.2f}x (target <= 2x)"
        )


if __name__ == "__main__":
    main()
