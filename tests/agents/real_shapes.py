"""Sends what real agents send where the TUI's look and keys depend on it, and says what came
back. One request per word of the prompt:

    exit-plan   Claude's ExitPlanMode permission request: three options that allow always, one
                that allows once, one that rejects (claude-agent-acp 0.100,
                permissions/options/tools.js)
    ask-one     Claude's AskUserQuestion with one single-select question: a `oneOf` field and its
                optional "Other" text field (elicitation.js, askUserQuestionsToCreateRequest)
    ask-many    the same with one multi-select question (an array of `anyOf` items)

Every session opens with OpenCode's config options (model, effort, mode: opencode's
acp/config-option.ts, its model named "Provider/Model"), and every turn ends with OpenCode's
`usage_update` (used, size, cost) and the prompt's usage. The reply says what each request got:
`exit-plan: exit-plan-auto`, `ask-one: accept {"question_0": "Redis"}`.

Standard library only, nothing from acp_tui.
"""

from __future__ import annotations

import itertools
import json
import sys
from typing import Any

SESSION_ID = "real-shapes"
_ids = itertools.count(1)

EXIT_PLAN = {
    "toolCall": {
        "toolCallId": "toolu_exit_plan",
        "title": "Ready to code?",
        "kind": "switch_mode",
        "status": "pending",
        "rawInput": {"plan": "1. Add the cache\n2. Test it"},
    },
    "options": [
        {
            "optionId": "exit-plan-clear-auto",
            "name": "Yes, clear context (12% used) and use auto mode",
            "kind": "allow_always",
        },
        {"optionId": "exit-plan-auto", "name": "Yes, and use auto mode", "kind": "allow_always"},
        {
            "optionId": "exit-plan-bypass",
            "name": "Yes, and bypass permissions",
            "kind": "allow_always",
        },
        {
            "optionId": "exit-plan-default",
            "name": "Yes, manually approve edits",
            "kind": "allow_once",
        },
        {"optionId": "reject", "name": "No, keep planning", "kind": "reject_once"},
    ],
}
CACHES = [
    {"const": "Redis", "title": "Redis", "description": "a server of its own"},
    {"const": "Memcached", "title": "Memcached"},
    {"const": "In memory", "title": "In memory", "description": "a dict in the process"},
]


def question(multi: bool) -> dict[str, Any]:
    picks: dict[str, Any] = (
        {"type": "array", "title": "Caches", "items": {"anyOf": CACHES}}
        if multi
        else {"type": "string", "title": "Cache", "oneOf": CACHES}
    )
    other = "Type your own answer, or add a note to the option you chose above (optional)."
    return {
        "mode": "form",
        "message": "Which caches should I set up?" if multi else "Which cache should I use?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "question_0": picks,
                "question_0_custom": {"type": "string", "title": "Other", "description": other},
            },
        },
    }


def config_options() -> list[dict[str, Any]]:
    def select(id_: str, name: str, category: str, *choices: tuple[str, str]) -> dict[str, Any]:
        options = [{"value": value, "name": title} for value, title in choices]
        return {
            "id": id_,
            "name": name,
            "category": category,
            "type": "select",
            "currentValue": choices[0][0],
            "options": options,
        }

    return [
        select(
            "model",
            "Model",
            "model",
            ("anthropic/claude-sonnet-4-5", "Anthropic/Claude Sonnet 4.5 (latest)"),
            ("opencode/grok-code", "OpenCode Zen/Grok Code Fast 1"),
        ),
        select("effort", "Effort", "thought_level", ("default", "Default"), ("high", "High")),
        select("mode", "Session Mode", "mode", ("build", "build"), ("plan", "plan")),
    ]


def write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def read() -> dict[str, Any]:
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send a request and wait for its answer (what else comes meanwhile is dropped)."""
    request_id = next(_ids)
    write({"id": request_id, "method": method, "params": {"sessionId": SESSION_ID, **params}})
    while True:
        message = read()
        if message.get("id") == request_id and "method" not in message:
            return message


def said(what: str) -> str:
    if what == "exit-plan":
        answer = ask("session/request_permission", EXIT_PLAN)
        outcome = answer.get("result", {}).get("outcome", {})
        return outcome.get("optionId") or outcome.get("outcome", "?")
    answer = ask("elicitation/create", question(multi=what == "ask-many"))
    result = answer.get("result", {})
    content = json.dumps(result.get("content"), sort_keys=True) if "content" in result else ""
    return f"{result.get('action', '?')} {content}".strip()


def update(body: dict[str, Any]) -> None:
    write({"method": "session/update", "params": {"sessionId": SESSION_ID, "update": body}})


def prompt(request: dict[str, Any]) -> None:
    text = "".join(block.get("text", "") for block in request["params"]["prompt"])
    words = [word for word in text.split() if word in ("exit-plan", "ask-one", "ask-many")]
    reply = "\n".join(f"{word}: {said(word)}" for word in words) or "nothing asked"
    update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": reply}})
    cost = {"amount": 0.0123, "currency": "USD"}
    update({"sessionUpdate": "usage_update", "used": 23456, "size": 200000, "cost": cost})
    usage = {
        "inputTokens": 12345,
        "outputTokens": 1234,
        "cachedReadTokens": 30000,
        "totalTokens": 43579,
    }
    write({"id": request["id"], "result": {"stopReason": "end_turn", "usage": usage}})


def main() -> None:
    while True:
        message = read()
        method = message.get("method")
        if method == "initialize":
            info = {"name": "real-shapes", "version": "1"}
            capabilities = {"promptCapabilities": {"image": True}}
            result = {"protocolVersion": 1, "agentCapabilities": capabilities, "agentInfo": info}
            write({"id": message["id"], "result": result})
        elif method == "session/new":
            result = {"sessionId": SESSION_ID, "configOptions": config_options()}
            write({"id": message["id"], "result": result})
        elif method == "session/prompt":
            prompt(message)
        elif "id" in message and method is not None:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            write({"id": message["id"], "error": error})


main()
