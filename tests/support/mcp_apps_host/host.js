// A minimal MCP Apps host for the browser test (tests/mcp_gateway/test_mcp_apps_browser.py), built on
// the official pieces a real host uses: the TypeScript SDK's Client over Streamable HTTP and ext-apps'
// AppBridge. It lists the tools, reads the tool's ui:// view, renders it in a sandboxed iframe under
// the CSP the view declares (the extension's default when it declares none), completes ui/initialize
// and sends the tool's input and result. Every step is logged to the console with "[HOST]".
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const UI = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";
const log = (...parts) => console.log("[HOST]", ...parts);

function policy(csp) {
  const list = (key) => (csp && csp[key]) || [];
  const resources = list("resourceDomains").join(" ");
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `img-src 'self' data: ${resources}`,
    `font-src 'self' ${resources}`,
    `media-src 'self' data: ${resources}`,
    `connect-src ${list("connectDomains").join(" ") || "'none'"}`,
    `frame-src ${list("frameDomains").join(" ") || "'none'"}`,
    `base-uri ${list("baseUriDomains").join(" ") || "'self'"}`,
  ].join("; ");
}

function withPolicy(html, csp) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy(csp).replace(/"/g, "&quot;")}">`;
  const head = html.match(/<head[^>]*>/i);
  return head ? html.replace(head[0], head[0] + meta) : meta + html;
}

window.runHost = async ({ url, token, toolName, args }) => {
  const client = new Client(
    { name: "test-host", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} }, extensions: { [UI]: { mimeTypes: [MIME] } } } },
  );
  client.setRequestHandler("elicitation/create", async (request) => {
    log("asked:", request.params.message);
    return { action: "accept", content: { confirm: true } };
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === toolName);
  const uri = tool?._meta?.ui?.resourceUri;
  log("tool", toolName, "shows", uri);
  const { contents } = await client.readResource({ uri });
  const view = contents[0];
  log("view", view.mimeType, view.text.length, "characters");

  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.style.cssText = "width: 520px; height: 320px; border: 1px solid #ccd;";
  document.getElementById("views").appendChild(iframe);
  const bridge = new AppBridge(client, { name: "test-host", version: "1.0.0" }, { openLinks: {}, serverTools: {}, serverResources: {} }, {
    hostContext: { toolInfo: { tool }, theme: "light", displayMode: "inline" },
  });
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = withPolicy(view.text, view._meta?.ui?.csp);
  await initialized;
  log("initialized");
  await bridge.sendToolInput({ arguments: args });
  const result = await client.callTool({ name: toolName, arguments: args });
  await bridge.sendToolResult(result);
  log("result sent", result.isError ? "error" : "ok");
  return { uri, initialized: true };
};
