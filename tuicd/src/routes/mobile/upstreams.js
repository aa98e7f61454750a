"use strict";
// Upstream MCP servers that need a person to sign in (OAuth), on every screen: Authorize, then the
// authorization server's page as a link the person taps (a phone blocks a window opened after a
// network round trip), Cancel while it waits, and the status until it is ready. A classic script
// loaded before app.js; it reads app.js's helpers only when called.

// Statuses that bring an upstream onto the page; once shown it stays until dismissed, so the
// person sees it turn ready. A dismissed one comes back when its status changes.
const ASKING = ["needs_auth", "authenticating"];
const STATUS_TEXT = { needs_auth: "needs authorization", authenticating: "Awaiting authorization…" };

const upstreams = {
  shown: new Map(), // name -> the upstream as GET /mcp/upstream-status answers it
  prompts: new Map(), // name -> {url, origin, cross, at} or {refused, at}
  dismissed: new Map(), // name -> its status when dismissed
  loads: 0, // numbers the status reads, so one sent before a flow started cannot end its prompt
  loading: false,
  again: false,
};

async function loadUpstreams() {
  if (upstreams.loading) return void (upstreams.again = true);
  upstreams.loading = true;
  const asked = ++upstreams.loads;
  try {
    const all = (await api("GET", "/mcp/upstream-status")).upstreams;
    // An upstream removed from the configuration leaves the page.
    for (const name of upstreams.shown.keys()) if (!all.some((u) => u.name === name)) upstreams.shown.delete(name);
    for (const u of all) {
      if (upstreams.dismissed.get(u.name) === u.status) continue;
      upstreams.dismissed.delete(u.name);
      if (!ASKING.includes(u.status) && !upstreams.shown.has(u.name)) continue;
      upstreams.shown.set(u.name, u);
      const prompt = upstreams.prompts.get(u.name);
      if (prompt && u.status !== "authenticating" && prompt.at < asked) upstreams.prompts.delete(u.name);
    }
    renderUpstreams();
  } catch (error) {
    failed(error);
  } finally {
    upstreams.loading = false;
    if (upstreams.again) {
      upstreams.again = false;
      loadUpstreams();
    }
  }
}

// `started` is the authorize answer or an `mcp-oauth-start` event: {authorization_url, as_origin,
// cross_domain_as}. Only an http(s) address becomes a link.
function oauthStarted(name, started) {
  let url = null;
  try {
    url = new URL(started.authorization_url);
  } catch {}
  const at = upstreams.loads;
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    upstreams.prompts.set(name, { at, refused: `Not opened: the sign-in address is not http(s): ${started.authorization_url}` });
  } else {
    upstreams.prompts.set(name, { at, url: url.href, origin: started.as_origin || url.origin, cross: !!started.cross_domain_as });
  }
  const shown = upstreams.shown.get(name) || { name };
  upstreams.shown.set(name, { ...shown, status: "authenticating" });
  renderUpstreams();
  loadUpstreams();
}

async function authorize(name) {
  try {
    oauthStarted(name, await api("POST", `/mcp/upstreams/${enc(name)}/authorize`));
  } catch (error) {
    failed(error);
  }
}

async function cancelAuthorization(name) {
  try {
    await api("POST", `/mcp/upstreams/${enc(name)}/authorize/cancel`);
  } catch (error) {
    // 404: the flow already ended (completed, expired, cancelled elsewhere).
    if (error.status !== 404) failed(error);
  }
  upstreams.prompts.delete(name);
  loadUpstreams();
}

// A phone cannot load the daemon's loopback callback: the person pastes the address it ended on.
async function finishPasted(input) {
  try {
    const url = input.value.trim();
    input.value = "";
    // Success shows as the status turning ready; a refusal (expired, cancelled) says why.
    await api("POST", "/mcp/oauth/callback", { url });
  } catch (error) {
    failed(error);
  }
  loadUpstreams();
}

// One line (name, status, its last error, the buttons) until a sign-in waits: then its link, the
// paste field and Cancel below.
function upstreamRow(u) {
  const prompt = upstreams.prompts.get(u.name);
  const waiting = u.status === "authenticating";
  const button = (label, onclick, className = "") => el("button", { type: "button", textContent: label, onclick, className });
  const dismiss = () => {
    upstreams.shown.delete(u.name);
    upstreams.dismissed.set(u.name, u.status);
    renderUpstreams();
  };
  const buttons = u.status === "needs_auth" ? [button("Later", dismiss), button("Authorize", () => authorize(u.name), "primary")]
    : waiting ? [] : [button("Dismiss", dismiss)];
  const row = el("div", { className: "upstream" },
    el("div", { className: "head" },
      el("div", { className: "who" }, el("span", { className: "name", textContent: u.name }),
        el("div", { className: "sub" }, el("span", { className: `badge ${u.status}`, textContent: STATUS_TEXT[u.status] || u.status }),
          u.status !== "ready" && u.last_error ? ` ${u.last_error}` : null)),
      ...buttons));
  row.dataset.upstream = u.name;
  row.dataset.status = u.status;
  if (!waiting) return row;
  if (prompt && prompt.refused) row.append(el("p", { className: "warn", textContent: prompt.refused }));
  if (prompt && prompt.url) {
    if (prompt.cross) {
      row.append(el("p", { className: "warn", textContent:
        `The sign-in page is on another domain than this server: ${prompt.origin}. Go on only if you expect it.` }));
    }
    row.append(el("a", { className: "signin", href: prompt.url, target: "_blank", rel: "noopener noreferrer",
      textContent: `Sign in at ${prompt.origin}` }));
    const input = el("input", { type: "url", placeholder: "Or paste where the sign-in ended",
      ariaLabel: "Address the sign-in ended on" });
    const paste = el("form", { className: "send" }, input, el("button", { type: "submit", textContent: "Finish" }));
    paste.onsubmit = (event) => {
      event.preventDefault();
      if (input.value.trim()) finishPasted(input);
    };
    row.append(paste);
  }
  row.append(button("Cancel", () => cancelAuthorization(u.name)));
  return row;
}

function renderUpstreams() {
  const box = $("upstreams");
  // Never under the person's thumb: an address being pasted keeps its field until it is sent.
  if (box.contains(document.activeElement) && document.activeElement.value) return;
  box.replaceChildren(...[...upstreams.shown.values()].map(upstreamRow));
  box.hidden = upstreams.shown.size === 0;
}
