// Drives `acp-tui serve` with acp-http-client (npm): initialize, a session, a turn whose
// permission request is allowed, a turn cancelled mid-way; prints one JSON line per outcome.
// Usage: node acp_http_client_drive.mjs INSTALL_ROOT BASE_URL PATH CWD
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [root, baseUrl, path, cwd] = process.argv.slice(2);
const entry = join(root, "node_modules", "acp-http-client", "dist", "index.js");
const { AcpHttpClient } = await import(pathToFileURL(entry).href);

const say = (what) => console.log(JSON.stringify(what));
const updates = [];
let asked = 0;
const client = new AcpHttpClient({
  baseUrl,
  token: process.env.ACP_TUI_TOKEN,
  transport: { path },
  client: {
    sessionUpdate: async (notification) => updates.push(notification.update),
    requestPermission: async () => {
      asked += 1;
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    },
  },
});
const text = () =>
  updates
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content.text ?? "")
    .join("");

const init = await client.initialize({ protocolVersion: 1, clientCapabilities: {} });
say({ step: "initialize", agent: init.agentInfo?.name });
const { sessionId } = await client.newSession({ cwd, mcpServers: [] });
say({ step: "session/new", sessionId });
const turn = await client.prompt({ sessionId, prompt: [{ type: "text", text: "permission" }] });
say({ step: "permission", stopReason: turn.stopReason, asked, text: text() });
const slow = client.prompt({ sessionId, prompt: [{ type: "text", text: "slow 30" }] });
while (!text().includes("⏳ 1/30")) await new Promise((r) => setTimeout(r, 20));
await client.cancel({ sessionId });
say({ step: "cancel", stopReason: (await slow).stopReason });
await client.disconnect();
