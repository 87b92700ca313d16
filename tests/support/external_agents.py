"""ACP agents that no one on this project wrote, for tests to talk to.

Each function installs its agent once per machine under `.cache/agents/` in the repository
(gitignored) and returns the argv that starts it; its stdin/stdout speak ACP v1. An agent that
cannot be installed raises `ExternalAgentError`: tests must fail loudly, never skip.

`python_sdk_echo_agent()`: `examples/echo_agent.py` of the official Python SDK
    (`agent-client-protocol` 0.12.1, the same version the tests import as `acp`).
    - `initialize` echoes the client's `protocolVersion` back, whatever it is (answers 2 to a
      v2 client although it only speaks v1), with no capabilities and no `agentInfo`.
    - `session/new` returns a uuid4 hex `sessionId`.
    - `session/prompt`: one `agent_message_chunk` per prompt block, repeating its text, with
      `_meta: {"echo": true}` on the update and on the content block and `_meta: {"source":
      "echo_agent"}` on the notification params; then `stopReason: "end_turn"`, at once.
    - An unknown `_` extension request gets `result: null`; an unknown method gets -32601.

`python_sdk_example_agent()`: `examples/agent.py` of the same SDK.
    - `initialize` always answers `protocolVersion: 1`, `agentCapabilities: {}` and
      `agentInfo: {"name": "example-agent", "title": "Example Agent", "version": "0.1.0"}`.
    - `session/new` returns ids "0", "1", … per process; `session/load` and
      `session/set_mode` succeed with `{}`; `session/cancel` is only logged.
    - `session/prompt`: an `agent_message_chunk` "Client sent:", then one `agent_message_chunk`
      per prompt block carrying that block unchanged; then `stopReason: "end_turn"`, at once.
    - Any `_` extension request returns `{"example": "response"}`. Logs go to stderr.

`ts_sdk_example_agent()`: `dist/examples/agent.js` of the official TypeScript SDK
    (`@agentclientprotocol/sdk` 0.12.0, run by node).
    - `initialize` always answers `protocolVersion: 1`, `agentCapabilities: {"loadSession":
      false}`, no `agentInfo`; `session/new` returns a random 32-hex-digit `sessionId`;
      `authenticate` and `session/set_mode` return `{}`; unknown methods, `_` extensions
      included, get -32601.
    - `session/prompt` simulates a turn with a 1 s pause between steps (about 4 s before the
      permission request, 5 s in all):
      1. `agent_message_chunk` "I'll help you with that. …";
      2. `tool_call` `call_1` "Reading project files", kind `read`, status `pending`,
         location `/project/README.md`;
      3. `tool_call_update` `call_1` `completed`, with text content "# My Project…" and
         `rawOutput`;
      4. `agent_message_chunk` " Now I understand the project structure. …";
      5. `tool_call` `call_2` "Modifying critical configuration file", kind `edit`, status
         `pending`, location `/project/config.json`;
      6. `session/request_permission` (request ids 0, 1, … per process) for `call_2`, whose
         `toolCall` carries a different location, `/home/user/project/config.json`, with
         options `allow` (`allow_once`) and `reject` (`reject_once`);
      7. on `allow`: `tool_call_update` `call_2` `completed`, then after 1 s an
         `agent_message_chunk` " Perfect! …"; on `reject`: after 1 s an `agent_message_chunk`
         " I understand you prefer not to make that change. …" and `call_2` stays `pending`;
      8. `stopReason: "end_turn"`.
    - `session/cancel` during a pause ends the turn at the end of that pause with
      `stopReason: "cancelled"` and no further updates. Cancelled while the permission request
      is open, it waits for the client's answer; answered `cancelled`, the turn ends with
      `stopReason: "end_turn"` (not "cancelled").

All three exit with status 0 when their stdin is closed, leaving requests in flight unanswered:
the Python SDK agents stop at once; the TypeScript agent plays its turn on until it needs the
client (the permission request), then exits.

Real coding agents, installed from npm at pinned versions. Each needs a model: the tests point
them at `tests/support/fake_model.py` through the environment `tests/support/real_agents.py`
builds (which also says what each one sends and needs).

`claude_agent_acp()`: `@agentclientprotocol/claude-agent-acp` 0.100.0 (Claude Code through
    the Claude Agent SDK, run by node; its own native `claude` binary comes in a platform
    package).
`codex_acp()`: `@zed-industries/codex-acp` 0.16.0, a Rust binary shipped in a platform
    package (`@zed-industries/codex-acp-linux-x64`, …); started directly, not through the
    package's node launcher.
`gemini_cli()`: `@google/gemini-cli` 0.61.0, run by node with `--acp`.

A client no one on this project wrote, for `acp-tui serve`: `acp_http_client()`, the npm package
`acp-http-client` 0.4.2 (Sandbox Agent's Streamable HTTP client of ACP, an ES module for node to
import), installed the same way.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.metadata
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
AGENTS_DIR = REPO_ROOT / ".cache" / "agents"

PYTHON_SDK_VERSION = "0.12.1"
TS_SDK_VERSION = "0.12.0"
ZOD_VERSION = "4.6.7"
"""The TypeScript SDK's peer dependency, pinned so every machine runs the same code."""

CLAUDE_AGENT_ACP_VERSION = "0.100.0"
CODEX_ACP_VERSION = "0.16.0"
GEMINI_CLI_VERSION = "0.61.0"
ACP_HTTP_CLIENT_VERSION = "0.4.2"

_TS_AGENT = Path("node_modules/@agentclientprotocol/sdk/dist/examples/agent.js")
_CLAUDE_AGENT = Path("node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js")
_GEMINI_CLI = Path("node_modules/@google/gemini-cli/bundle/gemini.js")
_ACP_HTTP_CLIENT = Path("node_modules/acp-http-client/dist/index.js")
_INSTALL_TIMEOUT_SECONDS = 600


class ExternalAgentError(RuntimeError):
    """An external agent could not be installed or cannot run here."""


def python_sdk_echo_agent() -> list[str]:
    """argv of the Python SDK's `echo_agent.py`, installed if needed."""
    return [sys.executable, str(_python_sdk_examples() / "echo_agent.py")]


def python_sdk_example_agent() -> list[str]:
    """argv of the Python SDK's example `agent.py`, installed if needed."""
    return [sys.executable, str(_python_sdk_examples() / "agent.py")]


def ts_sdk_example_agent() -> list[str]:
    """argv of the TypeScript SDK's `dist/examples/agent.js`, installed if needed."""
    node = _require_tool("node")
    root = _installed(f"typescript-sdk-{TS_SDK_VERSION}", _TS_AGENT, _install_ts_sdk)
    return [node, str(root / _TS_AGENT)]


def claude_agent_acp() -> list[str]:
    """argv of claude-agent-acp (`dist/index.js`, run by node), installed if needed."""
    node = _require_tool("node")
    package = f"@agentclientprotocol/claude-agent-acp@{CLAUDE_AGENT_ACP_VERSION}"
    root = _installed(
        f"claude-agent-acp-{CLAUDE_AGENT_ACP_VERSION}", _CLAUDE_AGENT, _npm_installer(package)
    )
    return [node, str(root / _CLAUDE_AGENT)]


def codex_acp() -> list[str]:
    """argv of the codex-acp binary for this machine, installed if needed."""
    # npm installs only the optional dependency that fits this machine; the package's own
    # `bin/codex-acp.js` merely finds and spawns it, so the tests start the binary itself.
    binary = Path(f"node_modules/@zed-industries/codex-acp-{_npm_platform()}/bin/codex-acp")
    package = f"@zed-industries/codex-acp@{CODEX_ACP_VERSION}"
    root = _installed(f"codex-acp-{CODEX_ACP_VERSION}", binary, _npm_installer(package))
    return [str(root / binary)]


def gemini_cli() -> list[str]:
    """argv of Gemini CLI in ACP mode (`bundle/gemini.js --acp`, run by node)."""
    node = _require_tool("node")
    package = f"@google/gemini-cli@{GEMINI_CLI_VERSION}"
    root = _installed(f"gemini-cli-{GEMINI_CLI_VERSION}", _GEMINI_CLI, _npm_installer(package))
    # `--experimental-acp` still works in 0.61 but is marked deprecated in favour of `--acp`.
    return [node, str(root / _GEMINI_CLI), "--acp"]


def acp_http_client() -> Path:
    """The folder acp-http-client is installed in (its `node_modules/`), installed if needed."""
    package = f"acp-http-client@{ACP_HTTP_CLIENT_VERSION}"
    name = f"acp-http-client-{ACP_HTTP_CLIENT_VERSION}"
    return _installed(name, _ACP_HTTP_CLIENT, _npm_installer(package))


def _python_sdk_examples() -> Path:
    """The `examples/` folder of the Python SDK's sdist (the wheel does not ship it)."""
    installed = importlib.metadata.version("agent-client-protocol")
    if installed != PYTHON_SDK_VERSION:
        # The examples are run against the installed `acp`; another version may not fit them.
        raise ExternalAgentError(
            f"agent-client-protocol {installed} is installed, the tests expect "
            f"{PYTHON_SDK_VERSION}: run `python -m pip install -e '.[test]'`"
        )
    examples = Path("examples")
    root = _installed(
        f"python-sdk-{PYTHON_SDK_VERSION}", examples / "agent.py", _install_python_examples
    )
    return root / examples


def _installed(name: str, marker: Path, install: Callable[[Path], None]) -> Path:
    """`AGENTS_DIR / name`, after running `install` into it unless `marker` is already there.

    `install` fills a fresh staging folder that is renamed into place only when complete, so a
    crash never leaves a half-installed agent behind; a lock file keeps two overlapping test
    runs from installing the same agent twice.
    """
    target = AGENTS_DIR / name
    if (target / marker).is_file():
        return target
    AGENTS_DIR.mkdir(parents=True, exist_ok=True)
    with _exclusive_lock(AGENTS_DIR / f"{name}.lock"):
        if (target / marker).is_file():
            return target  # another run installed it while we waited
        staging = Path(tempfile.mkdtemp(prefix=f"{name}.staging-", dir=AGENTS_DIR))
        staging.chmod(0o755)  # mkdtemp's 0700 would stay on the installed folder
        try:
            install(staging)
            if not (staging / marker).is_file():
                raise ExternalAgentError(f"installing {name} did not produce {marker}")
            shutil.rmtree(target, ignore_errors=True)  # an incomplete older copy
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return target


@contextlib.contextmanager
def _exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on `path` (released when the file closes)."""
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _install_python_examples(staging: Path) -> None:
    """Download the SDK's sdist with pip and unpack its `examples/` into `staging`."""
    downloads = staging / "downloads"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--disable-pip-version-check",
            "--no-binary",
            ":all:",
            "--no-deps",
            f"agent-client-protocol=={PYTHON_SDK_VERSION}",
            "-d",
            str(downloads),
        ],
        purpose=f"download the agent-client-protocol {PYTHON_SDK_VERSION} sdist",
    )
    archives = list(downloads.glob("*.tar.gz"))
    if len(archives) != 1:
        raise ExternalAgentError(f"expected one sdist in {downloads}, found {archives}")
    unpacked = staging / "sdist"
    with tarfile.open(archives[0]) as archive:
        archive.extractall(unpacked, filter="data")
    (top,) = unpacked.iterdir()
    (top / "examples").rename(staging / "examples")
    shutil.rmtree(unpacked)
    shutil.rmtree(downloads)


def _install_ts_sdk(staging: Path) -> None:
    """npm-install the TypeScript SDK and its peer dependency into `staging`."""
    _npm_install(staging, f"@agentclientprotocol/sdk@{TS_SDK_VERSION}", f"zod@{ZOD_VERSION}")


def _npm_installer(package: str) -> Callable[[Path], None]:
    """An `install` for `_installed` that npm-installs one pinned package."""
    return lambda staging: _npm_install(staging, package)


def _npm_install(staging: Path, *packages: str) -> None:
    """npm-install exactly `packages` (each `name@version`) into `staging`."""
    _run(
        [
            _require_tool("npm"),
            "install",
            "--prefix",
            str(staging),
            "--save-exact",
            "--no-audit",
            "--no-fund",
            "--no-progress",
            *packages,
        ],
        purpose=f"install {' '.join(packages)} with npm",
    )


def _npm_platform() -> str:
    """This machine as npm's platform packages name it (`linux-x64`, `darwin-arm64`, …)."""
    system = {"linux": "linux", "darwin": "darwin"}.get(sys.platform)
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower()
    )
    if system is None or machine is None:
        raise ExternalAgentError(f"no npm platform package for {sys.platform}/{platform.machine()}")
    return f"{system}-{machine}"


def _require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ExternalAgentError(f"`{name}` is not on PATH; the external agents need it")
    return path


def _run(argv: list[str], *, purpose: str) -> None:
    """Run an installer, turning any failure into an `ExternalAgentError` with its output."""
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_INSTALL_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ExternalAgentError(f"could not {purpose}: {exc}") from exc
    if done.returncode != 0:
        output = (done.stdout + done.stderr).strip()[-3000:]
        raise ExternalAgentError(
            f"could not {purpose}: {' '.join(argv)} exited with {done.returncode}\n{output}"
        )
