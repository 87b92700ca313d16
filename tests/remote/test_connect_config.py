"""Remote agents in the config (`url`, `token_file`, `headers`, `remote_fs`,
`remote_terminal`) and on the command line (`--connect`, `--token-file`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_tui.config import load_config, options_beside
from acp_tui.remote.target import RemoteTarget, TargetError
from acp_tui.session.options import ClientOptions
from tests.support.cli import run_cli


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_remote_agent_is_configured_by_its_url_token_file_and_headers(tmp_path: Path) -> None:
    config = load_config(
        _config(
            tmp_path,
            'remote_terminal = false\n[agents.devbox]\nurl = "wss://devbox.example/acp"\n'
            'token_file = "~/devbox.token"\nheaders = { X-Team = "tools" }\n',
        )
    )
    assert config.problems == []
    agent = config.agents["devbox"]
    assert agent.command == [] and agent.remote is not None
    assert agent.remote.url == "wss://devbox.example/acp"
    assert agent.remote.token_file == Path("~/devbox.token").expanduser()
    assert agent.remote.headers == {"X-Team": "tools"}
    assert (agent.command_line, agent.found()) == ("wss://devbox.example/acp",) * 2
    # A new conversation with it (Ctrl+N) connects, with commands not served here.
    defaults = ClientOptions(cwd=tmp_path)
    options = options_beside(agent, defaults, config.agents["demo"], defaults)
    assert options.remote == agent.remote and options.fs and not options.terminal
    assert options.remote is not agent.remote  # its own cookies
    back = options_beside(config.agents["demo"], defaults, agent, options)
    assert back.remote is None and back.terminal


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ('url = "ftp://x/acp"', "is not a ws://, wss://, http:// or https:// URL"),
        ('url = "ws:///acp"', "names no host"),
        ('url = "ws://x/acp"\ncommand = "agent"', "give `command` or `url`, not both"),
        ('command = "agent"\ntoken_file = "t"', "`token_file` is for a remote agent (`url`)"),
    ],
)
def test_a_wrong_remote_agent_is_said_with_its_line(
    tmp_path: Path, table: str, problem: str
) -> None:
    config = load_config(_config(tmp_path, f"[agents.a]\n{table}\n"))
    assert any(problem in p.message and p.line is not None for p in config.problems), [
        str(p) for p in config.problems
    ]


def test_the_token_comes_from_its_file_else_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACP_TUI_TOKEN", "from-env")
    assert RemoteTarget("ws://h/acp").request_headers()["Authorization"] == "Bearer from-env"
    token = tmp_path / "token"
    token.write_text("from-file\n", encoding="utf-8")
    target = RemoteTarget("ws://h/acp", token, {"X-A": "b"}, cookies={"route": "2"})
    headers = target.request_headers()
    assert headers == {"X-A": "b", "Authorization": "Bearer from-file", "Cookie": "route=2"}
    target.keep_cookies(["route=7; Path=/; HttpOnly", "acp-connection-id=c1; SameSite=Strict"])
    assert target.cookies == {"route": "7", "acp-connection-id": "c1"}
    assert "Cookie" not in target.request_headers(cookies=False)  # httpx sends its own
    token.write_text("\n", encoding="utf-8")
    with pytest.raises(TargetError, match="is empty"):
        target.request_headers()


def test_the_command_line_takes_a_url_and_refuses_a_token_on_it(tmp_path: Path) -> None:
    wrong = run_cli(tmp_path, "--connect", "gopher://h/acp", "-p", "hi")
    assert wrong.returncode == 2 and "is not a ws://, wss://" in wrong.stderr
    both = run_cli(tmp_path, "--connect", "ws://127.0.0.1:1/acp", "-p", "hi", "--", "agent")
    assert both.returncode == 2 and "not two" in both.stderr
    alone = run_cli(tmp_path, "--token-file", "t", "-p", "hi")
    assert alone.returncode == 2 and "--token-file is for --connect URL" in alone.stderr
    assert "--token" not in run_cli(tmp_path, "--help").stdout.replace("--token-file", "")
    for url in ("ws://127.0.0.1:9/acp", "http://127.0.0.1:9/acp"):  # HTTP: at the first POST
        down = run_cli(tmp_path, "--connect", url, "-p", "hi")
        assert down.returncode == 1
        assert f"cannot connect to {url}" in down.stderr and "was lost" not in down.stderr
