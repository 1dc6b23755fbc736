// The screen host page: the platform's own MCP Apps host for an app's screen on the front-end path.
// The screen's document runs in a sandboxed frame with an opaque origin (or on SCREENS_ORIGIN); this
// page answers its JSON-RPC messages over postMessage the way a chat host's AppBridge does:
// ui/initialize, the tool's input and result, and tools/call (the App SDK's callServerTool), which it
// relays to the platform as the signed-in visitor (session and CSRF token, same origin). A tool that
// needs the visitor's yes is asked about here, in this page's own dialog, never in the frame.
(() => {
  "use strict";
  const config = JSON.parse(document.getElementById("lcp-host").textContent);
  const frame = document.getElementById("screen");
  const dialog = document.getElementById("confirm");
  const log = (...parts) => console.log("[HOST]", ...parts);
  const MAX_HEIGHT = 5000;

  // The screen's document always has an opaque origin (its CSP sandboxes it, on SCREENS_ORIGIN too), so
  // messages to it go to "*"; the host page's frame-src keeps the frame on the screen's own origin.
  const send = (message) => frame.contentWindow.postMessage({ jsonrpc: "2.0", ...message }, "*");
  const failure = (code, message) => ({ code, message: String(message).slice(0, 2000) });

  // One question on screen at a time: a screen that calls in a loop gets its dialogs in turn.
  let asking = Promise.resolve();
  function ask(message) {
    const answer = asking.then(
      () =>
        new Promise((resolve) => {
          document.getElementById("confirm-message").textContent = message;
          const done = (yes) => {
            dialog.close();
            resolve(yes);
          };
          document.getElementById("confirm-yes").onclick = () => done(true);
          document.getElementById("confirm-no").onclick = () => done(false);
          dialog.oncancel = () => done(false);
          dialog.showModal();
        }),
    );
    asking = answer.catch(() => false);
    return answer;
  }

  async function callTool(params) {
    const name = typeof params?.name === "string" ? params.name : "";
    const args = params?.arguments && typeof params.arguments === "object" ? params.arguments : {};
    let confirmed = null;
    for (;;) {
      const response = await fetch(config.call, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": config.csrf },
        body: JSON.stringify({ name, arguments: args, confirmed }),
      });
      let body = null;
      try {
        body = await response.json();
      } catch {
        throw failure(-32603, `The platform did not answer the call (HTTP ${response.status}).`);
      }
      if (body.confirm && confirmed === null) {
        log("asked:", body.confirm.message);
        confirmed = await ask(body.confirm.message);
        log(confirmed ? "accepted" : "declined");
        continue;
      }
      if (body.result) return body.result;
      const error = body.error || {};
      throw failure(error.code || -32603, error.message || body.detail || `HTTP ${response.status}`);
    }
  }

  async function showTool() {
    const call = config.toolInput;
    if (!call) return;
    send({ method: "ui/notifications/tool-input", params: { arguments: call.arguments } });
    let result;
    try {
      result = await callTool(call);
    } catch (error) {
      result = { isError: true, content: [{ type: "text", text: error.message || String(error) }] };
    }
    send({ method: "ui/notifications/tool-result", params: result });
    log("result sent", result.isError ? "error" : "ok");
  }

  const requests = {
    "ui/initialize": async (params) => ({
      protocolVersion: params?.protocolVersion || "2026-01-26",
      hostInfo: { name: "lcp-screen-host", version: "1.0.0" },
      hostCapabilities: { serverTools: {}, openLinks: {}, logging: {} },
      hostContext: {
        theme: "light",
        displayMode: "inline",
        availableDisplayModes: ["inline"],
        platform: "web",
        locale: navigator.language,
      },
    }),
    "tools/call": callTool,
    ping: async () => ({}),
    "ui/open-link": async (params) => {
      const url = new URL(String(params?.url || ""));
      if (url.protocol !== "https:" && url.protocol !== "http:") throw failure(-32602, "Only web links open.");
      window.open(url.href, "_blank", "noopener,noreferrer");
      return {};
    },
  };

  const notifications = {
    "ui/notifications/initialized": () => {
      log("initialized");
      showTool();
    },
    "ui/notifications/size-changed": (params) => {
      const height = Number(params?.height);
      if (Number.isFinite(height) && height > 0) frame.style.height = `${Math.min(Math.ceil(height), MAX_HEIGHT)}px`;
    },
    "notifications/message": (params) => log("screen says:", JSON.stringify(params?.data ?? "").slice(0, 500)),
  };

  window.addEventListener("message", async (event) => {
    // Only the frame speaks to this page, and only while it shows the screen's document.
    if (event.source !== frame.contentWindow || event.origin !== "null") return;
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0" || typeof message.method !== "string") return;
    const hasId = typeof message.id === "string" || typeof message.id === "number";
    if (!hasId) {
      notifications[message.method]?.(message.params);
      return;
    }
    const handler = Object.hasOwn(requests, message.method) ? requests[message.method] : null;
    if (!handler) {
      send({ id: message.id, error: failure(-32601, `${message.method} is not offered on this page`) });
      return;
    }
    try {
      send({ id: message.id, result: await handler(message.params) });
    } catch (error) {
      const known = error && typeof error.code === "number";
      send({ id: message.id, error: known ? error : failure(-32603, error?.message || error) });
    }
  });

  frame.src = config.frame; // after the listener: the view's first message is ui/initialize
})();
