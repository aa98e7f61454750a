"use strict";
// tuic on a phone: the sessions list, one session as a terminal (term.js) with a key row and quick
// replies, a question banner on every screen, the ui tool's confirms, and ACP agents (acp.js). At
// desktop width the list stays beside the terminal. Same-origin with the API, so the browser's
// Basic Auth (over TCP) covers every fetch, the /events stream and the WebSocket.

const POLL_MS = 3000;
const RETRY_MS = 2000;
const NOTICE_MS = 5000;
// Every event the page acts on; `ui=confirm` makes this page an answerer for ui confirms.
const EVENTS = "/events?ui=confirm&types=session-created,session-closed,ui-confirm-requested,ui-confirm-resolved" +
  ",upstream-status-changed,mcp-oauth-start,acp-notice";
const QUICK = [["Yes", "y\r"], ["No", "n\r"], ["Enter", "\r"], ["Ctrl-C", "\x03"]];

const $ = (id) => document.getElementById(id);
const enc = encodeURIComponent;

const app = {
  sessions: [],
  current: null, // the session in view: {id, socket, term, fit, cursor, ended, choice, ctrl, unsent}
  opened: 0, // bumped on every navigation, so a late answer for an old view is dropped
  confirms: new Map(),
  showing: null,
  events: null,
};

// ---- the API ----

class HttpError extends Error {
  constructor(status, body) {
    super(body.error || `HTTP ${status}`);
    this.status = status;
    this.code = body.code;
  }
}

async function api(method, path, body) {
  const init = { method, cache: "no-store", headers: { "X-Requested-With": "tuic-mobile" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let json = {};
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    json = { error: text };
  }
  if (!response.ok) throw new HttpError(response.status, json);
  return json;
}

function setConn(state, label) {
  const conn = $("conn");
  conn.dataset.state = state;
  conn.textContent = label || state;
}

let noticeTimer = 0;
// A sticky notice stays until the connection is back; the others fade.
function notice(text, sticky) {
  const box = $("notice");
  box.textContent = text;
  box.hidden = false;
  box.dataset.sticky = sticky ? "1" : "";
  clearTimeout(noticeTimer);
  if (!sticky) noticeTimer = setTimeout(() => (box.hidden = true), NOTICE_MS);
}

function connected() {
  setConn("live");
  if ($("notice").dataset.sticky) $("notice").hidden = true;
  // A line that could not be sent offline goes now, unless the person has changed it since.
  const view = app.current;
  if (view && view.unsent != null && !view.sending && $("text").value === view.unsent) sendLine();
}

function failed(error) {
  if (error.status === 401) {
    setConn("denied", "signed out");
    notice("The daemon refused the credentials (wrong password?). Reload the page to sign in again.", true);
  } else if (error instanceof HttpError) {
    notice(error.message);
  } else {
    setConn("offline");
    notice("The daemon is not reachable. Retrying…", true);
  }
}

async function write(data) {
  if (!app.current) return;
  try {
    await api("POST", `/sessions/${enc(app.current.id)}/write`, { data });
  } catch (error) {
    failed(error);
  }
}

// ---- building the DOM (textContent only: names and output come from programs) ----

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const child of children) if (child != null) node.append(child);
  return node;
}

function nameOf(s) {
  return s.display_name || s.alias || s.session_id;
}

function asks(s) {
  const st = s.state || {};
  if (s.exited || !(st.awaiting_input || st.question_text || st.choice_prompt)) return null;
  return st.question_text || (st.choice_prompt && st.choice_prompt.title) || "waiting for input";
}

function badges(s) {
  const st = s.state || {};
  const out = [];
  const type = st.agent_type || s.agent_type;
  if (type) out.push(el("span", { className: "badge", textContent: type }));
  if (s.exited) out.push(el("span", { className: "badge exited", textContent: "exited" }));
  else if (st.agent_state) out.push(el("span", { className: `badge ${st.agent_state}`, textContent: st.agent_state.replace("_", " ") }));
  else if (s.shell_state) out.push(el("span", { className: `badge ${s.shell_state}`, textContent: s.shell_state }));
  if (asks(s)) out.push(el("span", { className: "badge ask", textContent: "question" }));
  return out;
}

// ---- the sessions list and the question banner ----

let polling = false;
async function poll() {
  if (polling) return;
  polling = true;
  try {
    app.sessions = await api("GET", "/sessions");
    connected();
  } catch (error) {
    failed(error);
    return;
  } finally {
    polling = false;
  }
  renderList();
  renderQuestion();
  if (app.current) renderMeta();
}

function renderList() {
  const items = app.sessions.map((s) => {
    const st = s.state || {};
    const sub = st.agent_intent || st.intent_title || s.cwd;
    const open = el("button", { type: "button", onclick: () => (location.hash = `#/s/${enc(s.session_id)}`) },
      el("div", { className: "row" }, el("span", { className: "name", textContent: nameOf(s) }), ...badges(s)),
      el("div", { className: "sub", textContent: sub }));
    open.dataset.session = s.session_id;
    if (app.current && [s.session_id, s.alias, s.tuic_session].includes(app.current.id)) open.ariaCurrent = "page";
    return el("li", {}, open);
  });
  $("sessions").replaceChildren(...items);
  $("empty").hidden = app.sessions.length > 0;
}

function renderQuestion() {
  const asking = app.sessions.filter((s) => asks(s));
  const banner = $("question");
  banner.hidden = asking.length === 0;
  if (!asking.length) return;
  const first = asking[0];
  const more = asking.length > 1 ? ` (+${asking.length - 1} more)` : "";
  banner.replaceChildren(el("b", { textContent: `${nameOf(first)} asks: ` }), `${asks(first)}${more}`);
  banner.onclick = () => (location.hash = `#/s/${enc(first.session_id)}`);
}

// ---- one session: the terminal, quick replies, a line to send ----

/**
 * Sends the line typed in the box (and Enter). The text leaves the box only once the daemon has
 * it: offline it stays, and goes when the connection is back (connected()).
 */
async function sendLine() {
  const view = app.current;
  const input = $("text");
  const text = input.value;
  if (!view || view.ended || view.sending) return;
  view.sending = true;
  try {
    await api("POST", `/sessions/${enc(view.id)}/write`, { data: `${text}\r` });
    view.unsent = null;
    if (input.value === text) input.value = "";
  } catch (error) {
    failed(error);
    if (!(error instanceof HttpError)) {
      view.unsent = text;
      notice("Not sent: the daemon is not reachable. The text stays here and is sent when the connection is back.", true);
    }
  } finally {
    view.sending = false;
  }
}

function session() {
  return app.current && app.sessions.find((s) => s.session_id === app.current.id);
}

function renderMeta() {
  const s = session();
  if (!s) return;
  const st = s.state || {};
  $("title").textContent = nameOf(s);
  const parts = [s.alias, st.agent_intent, s.cwd].filter(Boolean).map((t) => el("span", { textContent: t }));
  $("meta").replaceChildren(...badges(s), ...parts);
  if (!app.current.choice && st.choice_prompt) renderChips(st.choice_prompt);
  else if (!st.choice_prompt && !st.awaiting_input) renderChips(null);
}

function renderChips(choice) {
  if (!app.current) return;
  app.current.choice = choice;
  const options = (choice && choice.options) || [];
  const chips = options.map((o) =>
    el("button", { type: "button", className: "choice", textContent: `${o.key}. ${o.label}`, onclick: () => write(o.send || o.key) }));
  for (const [label, data] of QUICK) chips.push(el("button", { type: "button", textContent: label, onclick: () => write(data) }));
  $("chips").replaceChildren(...chips);
}

function showEnded(text) {
  const view = app.current;
  if (!view || view.ended) return;
  view.ended = true;
  $("ended").textContent = text;
  $("ended").hidden = false;
  for (const b of $("detail-view").querySelectorAll("footer button, footer input")) b.disabled = true;
  if (view.term) view.term.options.disableStdin = true;
  view.unsent = null;
}

async function openSession(id) {
  closeSession();
  const opened = ++app.opened;
  const view = { id, opened, socket: null, term: null, cursor: null, pending: 0, throttled: false, ended: false, choice: null,
    ctrl: false, unsent: null };
  app.current = view;
  showMain("detail-view", id);
  $("ended").hidden = true;
  $("title").textContent = id;
  $("text").value = "";
  for (const b of $("detail-view").querySelectorAll("footer button, footer input")) b.disabled = false;
  renderChips(null);
  renderMeta();
  renderList();
  termOpen(view);
  try {
    // A live session streams the whole ring (from its oldest byte) into the terminal; an exited
    // one's ring is read once.
    const info = await api("GET", `/sessions/${enc(id)}`);
    if (opened !== app.opened) return;
    if (info.exited) {
      const ring = await api("GET", `/sessions/${enc(id)}/output?format=raw&limit=${RING_BYTES}`);
      if (opened !== app.opened) return;
      view.term.write(ring.data);
      return showEnded(exitText(info.exit_code));
    }
    stream(opened);
  } catch (error) {
    if (opened !== app.opened) return;
    if (error.status === 404) showEnded("This session is gone.");
    else failed(error);
  }
}

// `session-closed` reasons; the WebSocket's `exit` frame, when it comes first, also has the code.
const CLOSED = { explicit_close: "The session was closed.", shutdown: "The daemon shut down." };

function exitText(code) {
  return code == null ? "The session has exited." : `The session has exited (code ${code}).`;
}

// The daemon's ring (GET /output?format=raw answers at most this much).
const RING_BYTES = 2 * 1024 * 1024;

function stream(opened) {
  const view = app.current;
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  // Resumes after the last byte shown; the first time, from the oldest byte the ring holds.
  const from = view.cursor == null ? "" : `&cursor=${view.cursor}`;
  const socket = new WebSocket(`${scheme}//${location.host}/sessions/${enc(view.id)}/stream?binary=1${from}`);
  socket.binaryType = "arraybuffer";
  view.socket = socket;
  socket.onopen = () => {
    connected();
    pushSize(view, true);
  };
  socket.onmessage = (message) => {
    if (opened !== app.opened || socket !== view.socket) return;
    if (typeof message.data !== "string") return termOutput(view, message.data);
    const frame = JSON.parse(message.data);
    // Output dropped for flow control: the reopened stream replays it, and what followed it.
    if (view.throttled && ["output", "lagged", "exit", "closed"].includes(frame.type)) return;
    if (frame.type === "output") {
      // Not asked for, but understood: a JSON output frame carries text.
      view.cursor = frame.total_written;
      termWrite(view, frame.data, frame.data.length);
    } else if (frame.type === "lagged") {
      if (view.term) view.term.write(`\r\n\x1b[0m[${frame.missed} bytes skipped]\r\n`);
      view.cursor = frame.cursor;
    } else if (frame.type === "resize") {
      termResized(view, frame);
    } else if (frame.type === "parsed") {
      parsed(frame.event);
    } else if (frame.type === "exit") {
      showEnded(exitText(frame.exit_code));
      poll();
    }
  };
  // A dropped stream (daemon restart, network change) resumes at the last cursor; a session that
  // is gone by then says so.
  socket.onclose = () => {
    // Output dropped for flow control: termWrite reopens the stream once the terminal has caught up.
    if (opened !== app.opened || view.ended || view.throttled || socket !== view.socket) return;
    setTimeout(() => opened === app.opened && resume(opened), RETRY_MS);
  };
}

async function resume(opened) {
  try {
    const info = await api("GET", `/sessions/${enc(app.current.id)}`);
    if (opened !== app.opened) return;
    if (info.exited) return showEnded(exitText(info.exit_code));
    stream(opened);
  } catch (error) {
    if (opened !== app.opened) return;
    if (error.status === 404) return showEnded("This session is gone.");
    failed(error);
    setTimeout(() => opened === app.opened && resume(opened), RETRY_MS);
  }
}

function parsed(event) {
  if (event.type === "choice-prompt") renderChips(event);
  if (["question", "choice-prompt", "agent-state", "shell-state"].includes(event.type)) poll();
}

function closeSession() {
  const view = app.current;
  app.current = null;
  app.opened++;
  if (!view) return;
  if (view.socket) view.socket.close();
  termClose(view);
}

// The screens: the two lists (reached from the nav) and the two detail views (with Back).
const MAINS = ["list-view", "detail-view", "acp-view", "acp-chat"];
const TOP = ["list-view", "acp-view"];

function showMain(id, title) {
  for (const main of MAINS) $(main).hidden = main !== id;
  document.body.dataset.view = id; // at desktop width the list stays beside a session
  const top = TOP.includes(id);
  $("back").hidden = top;
  $("nav").hidden = !top;
  for (const link of $("nav").querySelectorAll("a")) link.ariaCurrent = link.dataset.view === id ? "page" : null;
  $("title").textContent = title;
}

function route() {
  const match = location.hash.match(/^#\/s\/(.+)$/);
  if (match) {
    acpLeave();
    return openSession(decodeURIComponent(match[1]));
  }
  closeSession();
  if (acpRoute(location.hash)) return;
  showMain("list-view", "Sessions");
}

// ---- events ----

function listen() {
  const events = new EventSource(EVENTS);
  app.events = events;
  events.onopen = () => {
    connected();
    loadConfirms();
    loadUpstreams();
    poll();
    acpWake();
    loadAcpAsking();
  };
  events.addEventListener("session-created", poll);
  events.addEventListener("session-closed", (e) => {
    const closed = JSON.parse(e.data);
    if (app.current && closed.session_id === app.current.id) showEnded(CLOSED[closed.reason] || exitText(null));
    poll();
  });
  events.addEventListener("ui-confirm-requested", (e) => addConfirm(JSON.parse(e.data)));
  events.addEventListener("ui-confirm-resolved", (e) => dropConfirm(JSON.parse(e.data).id));
  events.addEventListener("upstream-status-changed", loadUpstreams);
  events.addEventListener("acp-notice", (e) => acpNotice(JSON.parse(e.data)));
  events.addEventListener("mcp-oauth-start", (e) => {
    const started = JSON.parse(e.data);
    oauthStarted(started.name, started);
  });
  // EventSource retries a dropped connection itself; one refused outright (401) is closed for good.
  events.onerror = () => {
    if (events.readyState === EventSource.CLOSED) setTimeout(listen, RETRY_MS * 2);
  };
}

// ---- start ----

$("back").onclick = () => (location.hash = location.hash.startsWith("#/acp/") ? "#/acp" : "#/");
acpInit();
$("send").onsubmit = (event) => {
  event.preventDefault();
  sendLine();
};
buildKeyRow();
window.addEventListener("online", poll);
$("confirm-yes").onclick = () => answer(true);
$("confirm-no").onclick = () => answer(false);
$("confirm").oncancel = (event) => event.preventDefault();
window.addEventListener("hashchange", route);
route();
poll();
setInterval(() => {
  poll();
  if (acp.listing) loadAcpConnections();
}, POLL_MS);
listen();
if ("serviceWorker" in navigator && window.isSecureContext) {
  navigator.serviceWorker.register("/mobile/sw.js", { scope: "/mobile" }).catch(() => {});
}
