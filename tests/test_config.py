"""The config file: agents, defaults, and problems reported with file and line."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import pytest

from acp_tui.config import (
    DEMO,
    AgentConfig,
    ConfigError,
    Notify,
    default_config_text,
    load_config,
)
from acp_tui.conversation.permissions import AgentPolicy
from acp_tui.protocol.methods import PermissionOption, PermissionRequest
from acp_tui.protocol.updates import ToolCallUpdate
from acp_tui.services.permissions import PermissionPolicy, Rule
from acp_tui.session.options import ProviderRoute
from tests.support import TEST_AGENTS
from tests.support.cli import run_cli


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(textwrap.dedent(text))
    return path


def problems(path: Path) -> list[str]:
    return [str(p) for p in load_config(path).problems]


def test_missing_file_gives_the_demo_and_no_problem(tmp_path: Path) -> None:
    config = load_config(tmp_path / "nope.toml")
    assert not config.exists and config.problems == []
    assert list(config.agents) == [DEMO]
    assert config.agent().name == DEMO
    assert config.agent().command[1:] == ["-m", "acp_tui.demo"]


def test_a_good_file(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        default_agent = "gem"
        permission = "allow"
        allow_paths = ["~/notes", "/srv/shared"]

        [agents.gem]
        command = "gemini --model 'x y'"
        args = ["--acp"]
        env = { GEMINI_API_KEY = "k" }
        description = "Gemini"
        mode = "yolo"
        model = "pro"
        permission = "reject"

        [[agents.gem.mcpServers]]
        name = "files"
        command = "/bin/cat"
        args = ["-u"]
        env = { A = "1" }

        [[agents.gem.mcpServers]]
        name = "web"
        type = "http"
        url = "https://example.com/mcp"
        headers = { Authorization = "Bearer t" }

        [[agents.gem.rule]]
        kind = "read"
        decision = "allow"
        workspace = "/srv"

        [agents.list]
        command = ["my agent", "--flag"]
        """,
    )
    config = load_config(path)
    assert config.problems == []
    gem = config.agents["gem"]
    assert gem.command == ["gemini", "--model", "x y", "--acp"]
    assert gem.env == {"GEMINI_API_KEY": "k"}
    assert (gem.description, gem.mode, gem.model, gem.permission) == (
        "Gemini",
        "yolo",
        "pro",
        "reject",
    )
    assert gem.mcp_servers == [
        {
            "name": "files",
            "command": "/bin/cat",
            "args": ["-u"],
            "env": [{"name": "A", "value": "1"}],
        },
        {
            "type": "http",
            "name": "web",
            "url": "https://example.com/mcp",
            "headers": [{"name": "Authorization", "value": "Bearer t"}],
        },
    ]
    assert gem.rules == [Rule("read", "allow", "/srv")]
    assert gem.line == 5
    assert config.agents["list"].command == ["my agent", "--flag"]
    assert config.agent().name == "gem"
    assert config.agent("list").name == "list"
    assert config.allow_paths == [Path.home() / "notes", Path("/srv/shared")]
    assert config.permission == "allow"
    assert config.permission_mode(gem) == "reject"
    assert config.permission_mode(gem, "ask") == "ask"
    assert config.permission_mode(config.agents["list"]) == "allow"


def test_an_agent_command_after_dashes() -> None:
    config = load_config(Path("/nonexistent/config.toml"))
    config.agents["cat"] = AgentConfig("cat", ["cat", "-u"])
    assert config.agent(None, ["cat", "-u"]).name == "cat"  # records filed under its name
    adhoc = config.agent(None, ["my agent", "go"])
    assert adhoc.adhoc and adhoc.name == "'my agent' go"
    with pytest.raises(ConfigError, match="not both"):
        config.agent("cat", ["x"])
    with pytest.raises(ConfigError, match=r"unknown agent 'nope'; configured: cat, demo"):
        config.agent("nope")


def test_not_toml_names_the_line_and_still_has_the_demo(tmp_path: Path) -> None:
    path = write(tmp_path, 'default_agent = "x"\n\n[agents.a]\ncommand = = "x"\n')
    config = load_config(path)
    assert [str(p) for p in config.problems] == [
        f"{path}:4: not valid TOML: Invalid value (column 11)"
    ]
    assert list(config.agents) == [DEMO] and config.agent().name == DEMO


def test_semantic_problems_name_their_lines_and_skip_only_what_is_broken(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        default_agent = "missing"
        permission = "sometimes"
        colour = "red"
        allow_paths = ["relative/dir"]

        [agents.ok]
        command = "ok-agent"
        speed = 3

        [agents.nocommand]
        description = "forgot it"

        [agents.badenv]
        command = "x"
        env = { A = 1 }

        [agents.badserver]
        command = "x"
        [[agents.badserver.mcpServers]]
        name = "fine"
        type = "http"
        url = "https://a"
        [[agents.badserver.mcpServers]]
        name = "broken"
        type = "http"

        [agents.badrule]
        command = "x"
        [[agents.badrule.rule]]
        kind = "read"
        decision = "maybe"

        [agents.inline]
        command = "x"
        mode = 3
        """,
    )
    assert problems(path) == [
        f"{path}:3: unknown setting `colour`",
        f"{path}:2: `permission` must be ask, allow or reject",
        f"{path}:4: `allow_paths`: 'relative/dir' is not an absolute path",
        f"{path}:8: agent 'ok': unknown setting `speed`",
        f"{path}:10: agent 'nocommand' left out: `command` is missing: the program to run, "
        'e.g. command = "gemini"',
        f"{path}:15: agent 'badenv' left out: `env` must be a table of strings, "
        'e.g. { NAME = "value" }',
        f"{path}:23: agent 'badserver' left out: MCP server 2: `url` is missing",
        f"{path}:29: agent 'badrule' left out: rule 1: `decision` must be allow, reject or ask",
        f"{path}:35: agent 'inline' left out: `mode` must be a string",
        f"{path}:1: `default_agent` 'missing' is not a configured agent",
    ]
    config = load_config(path)
    assert sorted(config.agents) == ["demo", "ok"]
    assert config.agent().name == DEMO


def test_provider_routes_and_their_mistakes(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        [agents.claude]
        command = "claude-agent-acp"
        [agents.claude.providers.main]
        api_type = "anthropic"
        base_url = "https://gateway.example.com"
        headers = { Authorization = "Bearer t" }
        region = "eu"
        [agents.claude.providers.backup]
        disabled = true

        [agents.nourl]
        command = "x"
        [agents.nourl.providers.main]
        api_type = "openai"
        base_url = "gateway.example.com"

        [agents.notype]
        command = "x"
        providers.main = { base_url = "https://a" }
        """,
    )
    assert problems(path) == [
        f"{path}:7: provider 'main': unknown setting `region`",
        f"{path}:15: agent 'nourl' left out: provider 'main': `base_url` must be an http(s) URL",
        f"{path}:19: agent 'notype' left out: provider 'main': `api_type` is missing, "
        'e.g. "anthropic"',
    ]
    config = load_config(path)
    assert config.agents["claude"].providers == [
        ProviderRoute(
            "main", "anthropic", "https://gateway.example.com", {"Authorization": "Bearer t"}
        ),
        ProviderRoute("backup"),
    ]
    assert sorted(config.agents) == ["claude", "demo"]


def test_inline_agent_tables_are_located_by_their_key(tmp_path: Path) -> None:
    path = write(tmp_path, '[agents]\nfine = { command = "x" }\nbroken = { args = ["y"] }\n')
    assert problems(path) == [
        f"{path}:3: agent 'broken' left out: `command` is missing: the program to run, "
        'e.g. command = "gemini"'
    ]


def test_the_shipped_example_parses_and_its_examples_work_uncommented(tmp_path: Path) -> None:
    text = default_config_text()
    path = write(tmp_path, text)
    assert load_config(path).problems == []
    # Uncomment every example line (a table header or `key = value`).
    example = re.compile(r"^# (\[|[A-Za-z_][\w-]* = )")
    lines = [line[2:] if example.match(line) else line for line in text.splitlines()]
    config = load_config(write(tmp_path, "\n".join(lines)))
    assert config.problems == [] or all("is not on PATH" in str(p) for p in config.problems)
    expected = {
        "claude": ["claude-agent-acp"],
        "codex": ["codex-acp"],
        "gemini": ["gemini", "--acp"],
        "qwen": ["qwen", "--acp"],
        "opencode": ["opencode", "acp"],
        "kimi": ["kimi", "acp"],
        "fast-agent": ["uvx", "fast-agent-acp"],
        "vibe": ["vibe-acp"],
    }
    for name, command in expected.items():
        assert config.agents[name].command == command
    assert config.default_agent == "claude"
    slow = config.agents["demo-slow"]
    assert (slow.mode, slow.model, len(slow.mcp_servers), len(slow.rules)) == (
        "code",
        "demo-smart",
        1,
        1,
    )


def test_agent_rules_join_the_saved_ones_without_being_saved(tmp_path: Path) -> None:
    saved = PermissionPolicy("ask", [Rule("execute", "reject")], path=tmp_path / "permissions.toml")
    saved.save()
    agent = AgentConfig("a", ["a"], rules=[Rule("read", "allow"), Rule("execute", "allow")])
    policy = AgentPolicy(PermissionPolicy.load("ask", tmp_path), agent.rules)

    def request(kind: str) -> PermissionRequest:
        options = [
            PermissionOption("y", "Yes", "allow_once"),
            PermissionOption("n", "No", "reject_once"),
        ]
        return PermissionRequest("s", options, ToolCallUpdate(tool_call_id="t", kind=kind))

    assert policy.decide(request("read")).option_id == "y"  # the agent's rule
    assert policy.decide(request("execute")).option_id == "n"  # a tie: the saved rule wins
    assert policy.decide(request("edit")).ask
    policy.saved.add_rule(Rule("edit", "allow"))
    policy.saved.save()
    assert "read" not in (tmp_path / "permissions.toml").read_text()
    assert [r.kind for r in PermissionPolicy.load("ask", tmp_path).rules] == ["execute", "edit"]


# -- the command line --------------------------------------------------------------------------


def test_config_path_and_init_config(tmp_path: Path) -> None:
    path = tmp_path / "config" / "acp-tui" / "config.toml"
    assert run_cli(tmp_path, "--config-path").stdout == f"{path}\n"
    assert "Wrote" in run_cli(tmp_path, "--init-config").stdout
    assert path.read_text() == default_config_text()
    path.write_text("# mine\n")
    assert "exists" in run_cli(tmp_path, "--init-config").stdout
    assert path.read_text() == "# mine\n"


def test_agents_lists_them_with_whether_the_command_is_found(tmp_path: Path) -> None:
    config = tmp_path / "config" / "acp-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        'default_agent = "py"\n'
        f'[agents.py]\ncommand = "{sys.executable} -c pass"\n'
        '[agents.ghost]\ncommand = "no-such-agent-anywhere"\n'
        '[agents.broken]\nargs = ["x"]\n'
    )
    result = run_cli(tmp_path, "agents")
    assert result.returncode == 0
    rows = {
        line.split()[0] if not line.startswith("*") else line.split()[1]: line
        for line in result.stdout.splitlines()[2:5]
    }
    assert rows["demo"].split()[-3:] == ["yes", "(built", "in)"]
    assert rows["py"].startswith("*") and f"yes: {sys.executable}" in rows["py"]
    assert rows["ghost"].endswith("no: no-such-agent-anywhere is not on PATH")
    assert f"{config}:6: agent 'broken' left out" in result.stderr


def test_a_bad_config_warns_and_acp_tui_still_runs(tmp_path: Path) -> None:
    config = tmp_path / "config" / "acp-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[agents.x\n")
    result = run_cli(tmp_path, "-p", "hello")
    assert result.returncode == 0, result.stderr
    assert "hello" in result.stdout  # the demo answered
    assert f"acp-tui: config: {config}:1: not valid TOML" in result.stderr
    unknown = run_cli(tmp_path, "--agent", "x", "-p", "hello")
    assert unknown.returncode == 2
    assert "unknown agent 'x'; configured: demo" in unknown.stderr


def test_subcommand_names_after_dashes_are_the_agents(tmp_path: Path) -> None:
    """`agents` after `--` is an argument of the agent command, not ours; nor is it as -p's."""
    script = tmp_path / "agent.py"
    script.write_text("import sys; print(sys.argv[1:], file=sys.stderr); sys.exit(7)")
    result = run_cli(tmp_path, "-p", "agents", "--", sys.executable, str(script), "agents")
    assert "['agents']" in result.stderr and result.returncode == 1


def test_an_agents_env_and_mcp_servers_reach_it(tmp_path: Path) -> None:
    """`env` is the agent's environment; MCP servers go to session/new, those the agent
    cannot take (the demo offers no HTTP) left out with a warning."""
    config = tmp_path / "config" / "acp-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        f'[agents.d]\ncommand = ["{sys.executable}", "-m", "acp_tui.demo"]\n'
        f'env = {{ XDG_DATA_HOME = "{tmp_path / "agent-data"}" }}\n'
        '[[agents.d.mcpServers]]\nname = "files"\ncommand = "/bin/cat"\n'
        '[[agents.d.mcpServers]]\nname = "web"\ntype = "http"\nurl = "https://example.com"\n'
    )
    transcript = tmp_path / "t.jsonl"
    result = run_cli(tmp_path, "--agent", "d", "--transcript", str(transcript), "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "acp-tui: MCP server 'web' left out: the agent does not take http" in result.stderr
    sent = [json.loads(line)["msg"] for line in transcript.read_text().splitlines()]
    [new] = [m["params"] for m in sent if isinstance(m, dict) and m.get("method") == "session/new"]
    assert new["mcpServers"] == [{"name": "files", "command": "/bin/cat", "args": [], "env": []}]
    assert list((tmp_path / "agent-data" / "acp-tui" / "demo-sessions").glob("sess_*.json"))


def test_providers_lists_where_the_agents_requests_go(tmp_path: Path) -> None:
    """`acp-tui providers`: the agent's `providers/list`, once the config's routes are set;
    an agent without providers says so."""
    config = tmp_path / "config" / "acp-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    demo = json.dumps([sys.executable, "-m", "acp_tui.demo"])
    plain = json.dumps([sys.executable, str(TEST_AGENTS / "rejecting_agent.py")])
    config.write_text(
        f"[agents.d]\ncommand = {demo}\n"
        '[agents.d.providers.main]\napi_type = "openai"\nbase_url = "https://gw.example/v1"\n'
        f"[agents.own]\ncommand = {demo}\n"
        '[agents.own.providers.spare]\napi_type = "openai"\nbase_url = "https://x"\n'
        f"[agents.plain]\ncommand = {plain}\n"
        '[agents.plain.providers.main]\napi_type = "openai"\nbase_url = "https://x"\n'
    )
    routed = run_cli(tmp_path, "providers", "--agent", "d")
    assert routed.returncode == 0, routed.stderr
    lines = routed.stdout.splitlines()
    assert lines[0] == "Providers of acp-tui demo agent 0.1.0:"
    assert lines[1].split() == ["ID", "API", "REQUIRED", "SUPPORTED", "BASE", "URL"]
    assert lines[2].split() == [
        "main",
        "openai",
        "no",
        "anthropic,",
        "openai",
        "https://gw.example/v1",
    ]
    own = run_cli(tmp_path, "providers", "--agent", "own")
    assert own.stdout.splitlines()[2].split() == ["main", "off", "no", "anthropic,", "openai"]
    assert own.stderr.startswith("acp-tui: provider 'spare' not set: Unknown provider")
    none = run_cli(tmp_path, "providers", "--agent", "plain")
    assert none.returncode == 1
    [said] = none.stderr.splitlines()
    assert "does not let its client route its model requests (no providers)" in said


@pytest.mark.parametrize(
    ("value", "size"),
    [
        ("12345", 12345),
        ('"1 GB"', 1 << 30),
        ('"500 MB"', 500 << 20),
        ('"1.5KiB"', 1536),
        ('"64 b"', 64),
    ],
)
def test_max_download_is_bytes_or_a_size(tmp_path: Path, value: str, size: int) -> None:
    config = load_config(write(tmp_path, f"max_download = {value}\n"))
    assert config.problems == [] and config.max_download == size


def test_a_max_download_that_is_no_size_is_said_and_the_default_kept(tmp_path: Path) -> None:
    default = load_config(tmp_path / "nope.toml").max_download
    assert default == 1 << 30
    for value in ('"lots"', "0", "-5", "true", '"1 PB"', '"MB"', "1.5"):
        path = write(tmp_path, f'permission = "ask"\nmax_download = {value}\n')
        config = load_config(path)
        assert [str(p) for p in config.problems] == [
            f'{path}:2: `max_download` must be a number of bytes or a size like "500 MB"'
        ]
        assert config.max_download == default


def test_the_guard_is_on_unless_the_config_turns_it_off(tmp_path: Path) -> None:
    assert load_config(tmp_path / "nope.toml").guard is True
    assert load_config(write(tmp_path, "guard = false\n")).guard is False
    config = load_config(write(tmp_path, 'guard = "no"\n'))
    assert config.guard is True
    assert [(p.line, p.message) for p in config.problems] == [(1, "`guard` must be true or false")]


def test_agent_state_folders_replace_the_known_ones(tmp_path: Path) -> None:
    from acp_tui.checkpoints.ignores import AGENT_STATE

    assert load_config(tmp_path / "nope.toml").agent_state is None  # the known ones
    config = load_config(write(tmp_path, 'agent_state = ["./.crush/", "tmp//agent"]\n'))
    assert config.problems == [] and config.agent_state == [".crush", "tmp/agent"]
    assert load_config(write(tmp_path, "agent_state = []\n")).agent_state == []
    for value, what in (("'.x'", "a list of folders"), ('["../up"]', "'../up' is not a folder")):
        config = load_config(write(tmp_path, f"agent_state = {value}\n"))
        assert config.agent_state is None
        [problem] = config.problems
        assert problem.line == 1 and what in problem.message
    # The shipped example names the known ones.
    example = re.search(r"^# agent_state = (.*)$", default_config_text(), re.MULTILINE)
    assert example is not None and json.loads(example[1]) == list(AGENT_STATE)


def test_notify_settings_and_their_mistakes(tmp_path: Path) -> None:
    default = load_config(tmp_path / "nope.toml").notify
    assert (default.enabled, default.desktop, default.long_turn, default.terminal) == (
        True,
        False,
        30.0,
        "auto",
    )
    assert default.events == {"done", "permission", "question", "failed", "budget"}
    config = load_config(
        write(
            tmp_path,
            """\
            [notify]
            events = ["permission", "question"]
            long_turn = 0
            desktop = true
            terminal = "osc99"
            """,
        )
    )
    notify = config.notify
    assert config.problems == []
    assert (notify.events, notify.long_turn, notify.desktop, notify.terminal) == (
        {"permission", "question"},
        0.0,
        True,
        "osc99",
    )
    for text, line, what in (
        ('[notify]\nevents = ["done", "tea"]\n', 2, "'tea' is not one of"),
        ("[notify]\nlong_turn = -1\n", 2, "`long_turn` must be a number of seconds"),
        ('[notify]\nterminal = "osc52"\n', 2, "`terminal` must be one of auto, osc777"),
        ('notify = "yes"\n', 1, "`notify` must be a table"),
    ):
        config = load_config(write(tmp_path, text))
        [problem] = config.problems
        assert (problem.line, problem.message.startswith("[notify] left out")) == (line, True)
        assert what in problem.message and config.notify == Notify()  # all left out


def test_notify_on_or_off_on_the_command_line_wins() -> None:
    from acp_tui.cli.parser import build_parser
    from acp_tui.cli.run import _notify

    off = Notify(enabled=False, long_turn=5)
    for argv, enabled in (([], False), (["--notify", "on"], True), (["--notify", "off"], False)):
        notify = _notify(off, build_parser().parse_args(argv).notify)
        assert (notify.enabled, notify.long_turn) == (enabled, 5)
