"use strict";
// ACP agents on the phone: the connections (`#/acp`) and one session's conversation
// (`#/acp/<connection>/<session>`) streamed from GET /acp/connections/:id/stream, with the prompt
// box, Cancel, New session, and the agent's permission requests and elicitations answered in place.
// A classic script loaded before app.js; it reads app.js's helpers ($, el, api, enc, notice,
// failed, connected) only when called. Everything the agent wrote is shown with textContent only.

const ACP_MAX_ITEMS = 2000; // conversation items kept in the DOM
const ACP_RETRY_MS = [300, 1000, 2000, 5000];
const PLAN_MARK = { pending: "○", in_progress: "◐", completed: "●" };
const DIFF_LINES = 40; // changed lines shown per diff, the rest counted

const acp = {
  connections: [],
  listing: false, // the connections screen is showing
  view: null, // the conversation in view (see openAcpChat)
  asking: [], // questions waiting on a person, on every connection: [{connection, interaction}]
  opened: 0,
};

// ---- routing (called by app.js's route) ----

/** Shows the ACP screen the hash names; false when the hash is not an ACP one. */
function acpRoute(hash) {
  const chat = hash.match(/^#\/acp\/([^/]+)\/(.+)$/);
  if (chat) {
    openAcpChat(decodeURIComponent(chat[1]), decodeURIComponent(chat[2]));
    return true;
  }
  if (/^#\/acp\/?$/.test(hash)) {
    acpLeave();
    acp.listing = true;
    showMain("acp-view", "Agents (ACP)");
    loadAcpConnections();
    return true;
  }
  return false;
}

/** Leaving the ACP screens: the stream closes. */
function acpLeave() {
  acp.listing = false;
  const view = acp.view;
  acp.view = null;
  acp.opened++;
  if (view) renderAcpAsking();
  if (view) {
    clearTimeout(view.retry);
    if (view.socket) view.socket.close();
  }
}

// ---- the connections ----

async function loadAcpConnections() {
  try {
    acp.connections = (await api("GET", "/acp/connections")).connections;
    connected();
  } catch (error) {
    return failed(error);
  }
  renderAcpConnections();
}

function agentName(c) {
  return (c.agent_info && c.agent_info.name) || (c.command && c.command[0]) || c.id;
}

function renderAcpConnections() {
  if (!acp.listing) return;
  const items = acp.connections.map((c) => {
    const button = (label, onclick, className = "") => el("button", { type: "button", textContent: label, onclick, className });
    const head = el("div", { className: "row" },
      el("span", { className: "name", textContent: `${agentName(c)} · ${c.id}` }),
      el("span", { className: `badge ${c.state}`, textContent: c.state }),
      el("span", { className: "badge", textContent: `gen ${c.generation}` }),
      c.interactions_pending ? el("span", { className: "badge ask", textContent: `${c.interactions_pending} question` }) : null);
    const sub = el("div", { className: "sub", textContent: c.settled_reason ? `${c.settled_reason} · ${c.cwd}` : c.cwd });
    const sessions = el("ul", { className: "acp-sessions" }, ...c.sessions.map((s) => {
      const open = el("button", { type: "button", onclick: () => (location.hash = `#/acp/${enc(c.id)}/${enc(s.session_id)}`) },
        el("span", { className: "name", textContent: s.title || s.session_id }),
        s.turn_running ? el("span", { className: "badge working", textContent: "turn running" }) : null,
        s.attached ? null : el("span", { className: "badge", textContent: "not attached" }));
      open.dataset.session = s.session_id;
      return el("li", {}, open);
    }));
    const actions = el("div", { className: "acp-actions" },
      c.state === "ready" ? button("New session", () => newAcpSession(c.id), "primary") : null,
      c.state === "settled" ? button("Reconnect", () => acpConnectionAction(c.id, "reconnect")) : null,
      button("Close", () => confirm(`Close ${c.id}? Its agent process is stopped.`) && acpConnectionAction(c.id, "close")));
    const card = el("li", { className: "acp-conn" }, head, sub, sessions, actions);
    card.dataset.connection = c.id;
    card.dataset.state = c.state;
    return card;
  });
  $("acp-connections").replaceChildren(...items);
  $("acp-empty").hidden = acp.connections.length > 0;
}

async function startAcpConnection() {
  const start = $("acp-start");
  start.disabled = true;
  start.textContent = "Starting…";
  $("acp-error").hidden = true;
  try {
    await api("POST", "/acp/connections", {});
  } catch (error) {
    // 409 names the setting to configure (ego_executable); 502/504 say why the agent failed.
    if (error instanceof HttpError) {
      $("acp-error").textContent = error.message;
      $("acp-error").hidden = false;
    } else failed(error);
  } finally {
    start.disabled = false;
    start.textContent = "Start an agent";
  }
  loadAcpConnections();
}

async function acpConnectionAction(id, action) {
  try {
    if (action === "close") await api("DELETE", `/acp/connections/${enc(id)}`);
    else await api("POST", `/acp/connections/${enc(id)}/${action}`);
  } catch (error) {
    failed(error);
  }
  loadAcpConnections();
}

async function newAcpSession(cid) {
  try {
    const created = await api("POST", `/acp/connections/${enc(cid)}/sessions`, {});
    location.hash = `#/acp/${enc(cid)}/${enc(created.session_id)}`;
  } catch (error) {
    failed(error);
  }
}

// ---- one session's conversation ----

function openAcpChat(cid, sid) {
  acpLeave();
  const opened = acp.opened;
  const view = {
    cid, sid, opened,
    socket: null, retry: 0, attempt: 0, opens: 0,
    seq: null, // the last frame rendered: the stream resumes after it
    startSeq: null, // the frame this view started after: older ones it never shows
    gap: false, gone: false,
    generation: 0, state: "", attached: true, canLoad: false,
    running: false,
    stick: true, // the log follows new items
    followedTo: 0, // the scrollTop it last followed to
    turns: new Set(), // "generation:id" of this session's session/prompt requests without an answer yet
    questions: new Map(), // request id -> {node, kind, options, listed}: waiting
    settled: new Map(), // the same once settled (the newest 100), so the answer frame can say how
    tools: new Map(), // toolCallId -> node
    last: null, // {role, text node} that the next chunk of the same role joins
    plan: null, // this turn's plan node, redrawn by each plan update
  };
  acp.view = view;
  showMain("acp-chat", sid);
  renderAcpAsking();
  $("acp-log").replaceChildren();
  $("acp-gap").hidden = true;
  $("acp-meta").replaceChildren();
  $("acp-text").disabled = false;
  renderAcpControls();
  refreshAcpSnapshot(view).then((ok) => {
    if (!ok || view !== acp.view) return;
    openAcpStream(view);
  });
}

/** Reads the connection; false (and says so) when it is gone. `sync` takes the session's
 * turn_running as the truth (the stream cannot tell when the turn's request is not in view). */
async function refreshAcpSnapshot(view, sync = false) {
  let c;
  try {
    c = await api("GET", `/acp/connections/${enc(view.cid)}`);
  } catch (error) {
    if (view !== acp.view) return false;
    if (error.status === 404) {
      view.gone = true;
      acpNote(view, "This agent connection is gone.", "bad");
      renderAcpControls();
    } else failed(error);
    return false;
  }
  if (view !== acp.view) return false;
  connected();
  view.snapshot = c;
  view.generation = c.generation;
  view.state = c.state;
  view.canLoad = !!(c.agent_capabilities && c.agent_capabilities.loadSession);
  const s = c.sessions.find((x) => x.session_id === view.sid);
  view.attached = !!(s && s.attached);
  if (s && (view.seq === null || sync)) view.running = s.turn_running;
  renderAcpMeta(view);
  renderAcpControls();
  return true;
}

function renderAcpMeta(view) {
  const c = view.snapshot || {};
  const parts = [
    el("span", { className: `badge ${view.state}`, textContent: view.state || "…" }),
    el("span", { className: "badge", textContent: `gen ${view.generation}` }),
    el("span", { textContent: `${c.agent_info ? agentName(c) : ""} ${view.cid}`.trim() }),
  ];
  if (!view.attached && view.state === "ready") {
    parts.push(view.canLoad
      ? el("button", { type: "button", className: "small", textContent: "Load session", onclick: () => reloadAcp(view) })
      : el("span", { className: "badge", textContent: "not attached" }));
  }
  $("acp-meta").replaceChildren(...parts);
}

function renderAcpControls() {
  const view = acp.view;
  if (!view) return;
  $("acp-cancel").hidden = !view.running;
  const usable = !view.gone && view.state !== "settled";
  $("acp-send-button").disabled = !usable;
  $("acp-new").disabled = !usable;
}

function openAcpStream(view) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const after = view.seq === null ? "" : `?after=${view.seq}`;
  const socket = new WebSocket(`${scheme}//${location.host}/acp/connections/${enc(view.cid)}/stream${after}`);
  view.socket = socket;
  socket.onopen = () => {
    view.opens++;
    view.attempt = 0;
    connected();
  };
  socket.onmessage = (message) => {
    if (view !== acp.view || socket !== view.socket) return;
    let frame;
    try {
      frame = JSON.parse(message.data);
    } catch {
      return;
    }
    acpFrame(view, frame);
  };
  // Closed (network change, daemon restart, page in the background): resume after the last frame.
  socket.onclose = () => {
    if (view !== acp.view || socket !== view.socket) return;
    view.socket = null;
    if (view.gap || view.gone) return;
    const wait = ACP_RETRY_MS[Math.min(view.attempt++, ACP_RETRY_MS.length - 1)];
    view.retry = setTimeout(() => resumeAcpStream(view), wait);
  };
}

/** Reopens the stream after the last rendered frame, unless the journal has dropped it. */
async function resumeAcpStream(view) {
  clearTimeout(view.retry);
  if (view !== acp.view || view.socket || view.gap || view.gone) return;
  view.socket = "resuming"; // one resume at a time
  let ok = false;
  try {
    ok = await refreshAcpSnapshot(view);
  } finally {
    if (view.socket === "resuming") view.socket = null;
  }
  if (view !== acp.view || view.gone) return;
  if (!ok) {
    view.retry = setTimeout(() => resumeAcpStream(view), ACP_RETRY_MS[ACP_RETRY_MS.length - 1]);
    return;
  }
  const c = view.snapshot;
  if (view.seq !== null && view.seq + 1 < c.first_sequence) return acpGap(view, view.seq, c.first_sequence);
  openAcpStream(view);
}

/** Test hook and manual drop: closes the stream as a network loss would. */
function acpDropStream() {
  const view = acp.view;
  if (view && view.socket && typeof view.socket !== "string") view.socket.close();
}

function acpWake() {
  const view = acp.view;
  if (view && !view.socket && !view.gap && !view.gone) resumeAcpStream(view);
}

// A phone asleep for a while may hold a socket that looks open but is dead (the stream has no
// heartbeat): back in front after a while, the page reopens it after the last frame.
const ACP_STALE_MS = 5000;
let hiddenAt = 0;
function acpVisibility() {
  if (document.visibilityState !== "visible") {
    hiddenAt = Date.now();
    return;
  }
  if (hiddenAt && Date.now() - hiddenAt > ACP_STALE_MS) acpDropStream();
  hiddenAt = 0;
  acpWake();
}

function acpGap(view, after, first) {
  view.gap = true;
  const box = $("acp-gap");
  const reload = el("button", { type: "button", className: "small", textContent: "Reload", onclick: () => reloadAcp(view) });
  box.replaceChildren(el("span", { textContent:
    `History is incomplete: frames after ${after} are no longer kept (the journal starts at ${first}). ` }), reload);
  box.hidden = false;
}

/** Starts over: the agent replays the session (session/load) when it can, else the kept frames. */
async function reloadAcp(view) {
  if (view !== acp.view) return;
  clearTimeout(view.retry);
  if (view.socket && typeof view.socket !== "string") {
    const old = view.socket;
    view.socket = null;
    old.onclose = null;
    old.close();
  }
  if (!(await refreshAcpSnapshot(view, true))) return;
  const loading = view.canLoad;
  Object.assign(view, { gap: false, seq: loading ? view.snapshot.sequence : null, startSeq: null, last: null, plan: null,
    attempt: 0 });
  view.turns.clear();
  view.questions.clear();
  view.settled.clear();
  view.tools.clear();
  $("acp-gap").hidden = true;
  $("acp-log").replaceChildren();
  openAcpStream(view);
  if (loading) {
    try {
      await api("POST", `/acp/connections/${enc(view.cid)}/sessions/${enc(view.sid)}/load`, {});
    } catch (error) {
      failed(error);
    }
    await refreshAcpSnapshot(view, true);
  }
}

// ---- frames ----

function acpFrame(view, frame) {
  if (frame.kind === "hello") {
    if (view.seq === null) view.seq = frame.seq;
    if (view.startSeq === null) view.startSeq = frame.seq;
    view.state = frame.state || view.state;
    renderAcpMeta(view);
    // What waits on a person now, read once the view knows which frames it will show.
    loadAcpInteractions(view);
    return;
  }
  if (frame.kind === "gap") return acpGap(view, frame.missed_after, frame.first_sequence);
  if (view.seq !== null && frame.seq <= view.seq) return; // already rendered
  view.seq = frame.seq;
  const log = $("acp-log");
  if (frame.kind === "state") acpState(view, frame);
  else if (frame.kind === "invalid") acpNote(view, `The agent wrote a line that was not JSON-RPC (${frame.reason}, ${frame.bytes} bytes).`);
  else if (frame.kind === "client") acpClient(view, frame);
  else if (frame.kind === "agent") acpAgent(view, frame);
  while (log.childElementCount > ACP_MAX_ITEMS) {
    const first = log.firstElementChild;
    if (first.dataset.tool) view.tools.delete(first.dataset.tool);
    first.remove();
  }
  followAcpLog();
}

// The log follows new items while the person is at its bottom (scrolled up, it stays put).
let followQueued = false;
function followAcpLog() {
  if (followQueued || !acp.view || !acp.view.stick) return;
  followQueued = true;
  requestAnimationFrame(() => {
    followQueued = false;
    const log = $("acp-log");
    if (!acp.view || !acp.view.stick) return;
    log.scrollTop = log.scrollHeight;
    acp.view.followedTo = log.scrollTop;
  });
}

function acpState(view, frame) {
  const generationChanged = frame.generation !== view.generation;
  view.state = frame.state;
  view.generation = frame.generation;
  if (frame.state === "settled") {
    acpNote(view, `The agent stopped${frame.reason ? `: ${frame.reason}` : ""}.`, "bad");
    view.running = false;
    view.turns.clear();
    for (const rid of [...view.questions.keys()]) settleQuestion(view, rid, "no longer asked: the agent stopped");
  } else if (frame.state === "ready" && generationChanged) {
    acpNote(view, `The agent restarted (generation ${frame.generation}).`);
    refreshAcpSnapshot(view);
  }
  renderAcpMeta(view);
  renderAcpControls();
}

const blocksText = (blocks) => (Array.isArray(blocks) ? blocks : [blocks]).map(blockText).join("");

function blockText(block) {
  if (!block || typeof block !== "object") return "";
  if (block.type === "text") return String(block.text ?? "");
  if (block.type === "resource_link") return `[${block.name || block.uri}]`;
  if (block.type === "resource") return `[${(block.resource && block.resource.uri) || "resource"}]`;
  return `[${block.type}]`;
}

function acpClient(view, frame) {
  const m = frame.message || {};
  const params = m.params || {};
  if (m.method === "session/prompt") {
    if (params.sessionId !== view.sid) return;
    view.turns.add(`${frame.generation}:${m.id}`);
    view.running = true;
    view.plan = null;
    acpItem(view, "user", blocksText(params.prompt || []));
    view.last = null;
    renderAcpControls();
  } else if (m.method === "session/cancel") {
    if (params.sessionId === view.sid) acpNote(view, "Cancel sent.");
  } else if (!m.method && m.id != null) {
    // tuicd's answer to one of the agent's questions, whoever gave it.
    const q = view.questions.get(String(m.id)) || view.settled.get(String(m.id));
    if (q) settleQuestion(view, String(m.id), answerText(q, m));
  }
}

function answerText(q, m) {
  if (m.error) return `refused: ${m.error.message || "error"}`;
  const r = m.result || {};
  if (q.kind === "permission") {
    const outcome = r.outcome || {};
    if (outcome.outcome !== "selected") return outcome.outcome || "answered";
    const option = (q.options || []).find((o) => o.optionId === outcome.optionId);
    return `answered: ${option ? option.name : outcome.optionId}`;
  }
  return r.action === "accept" ? `accepted: ${JSON.stringify(r.content || {})}` : `${r.action || "answered"}`;
}

function acpAgent(view, frame) {
  const m = frame.message || {};
  const params = m.params || {};
  if (m.method === "session/update") {
    if (params.sessionId === view.sid) acpUpdate(view, params.update || {});
  } else if (m.method === "session/request_permission" || m.method === "elicitation/create") {
    if (params.sessionId !== view.sid || m.id == null) return;
    if (m.method === "session/request_permission") {
      addQuestion(view, { request_id: String(m.id), kind: "permission", tool_call: params.toolCall, options: params.options });
    } else {
      addQuestion(view, { request_id: String(m.id), kind: "elicitation", message: params.message,
        requested_schema: params.requestedSchema });
    }
  } else if (!m.method && m.id != null && view.turns.delete(`${frame.generation}:${m.id}`)) {
    // The answer to one of this session's prompts: the turn's end.
    const stop = m.error ? `error: ${m.error.message || m.error.code}` : (m.result && m.result.stopReason) || "ended";
    acpItem(view, "end", `Turn ended: ${stop}`).dataset.stop = m.error ? "error" : stop;
    view.last = null;
    view.plan = null;
    view.running = view.turns.size > 0;
    renderAcpControls();
  } else if (!m.method && m.id != null && view.running && view.turns.size === 0) {
    // A turn whose request came before what this view saw may just have ended: ask.
    refreshAcpSnapshot(view, true);
  }
}

function acpUpdate(view, u) {
  switch (u.sessionUpdate) {
    case "agent_message_chunk": return acpText(view, "agent", blockText(u.content), u.messageId);
    case "user_message_chunk": return acpText(view, "user", blockText(u.content), u.messageId);
    case "agent_thought_chunk": return acpText(view, "thought", blockText(u.content), u.messageId);
    case "tool_call": case "tool_call_update": return acpTool(view, u);
    case "plan": return acpPlan(view, u.entries || []);
    case "current_mode_update": return acpNote(view, `Mode: ${u.currentModeId}`);
    default: return undefined; // commands, config, session info: not part of the conversation
  }
}

/** Streamed text: chunks of one role in a row join one item (unless their messageIds differ). */
function acpText(view, role, text, messageId) {
  if (!text) return;
  const last = view.last;
  if (last && last.role === role && last.node.isConnected && (messageId == null || last.messageId === messageId)) {
    view.last.text.appendData(text);
    return;
  }
  const node = acpItem(view, role, "");
  const t = document.createTextNode(text);
  node.querySelector(".body").append(t);
  view.last = { role, node, text: t, messageId };
}

function acpItem(view, kind, text) {
  const node = el("div", { className: `acp-item ${kind}` }, el("div", { className: "body", textContent: text }));
  node.dataset.kind = kind;
  $("acp-log").append(node);
  if (kind !== "agent" && kind !== "thought" && kind !== "user") view.last = null;
  return node;
}

function acpNote(view, text, tone = "") {
  const node = acpItem(view, "note", text);
  if (tone) node.classList.add(tone);
  return node;
}

function acpTool(view, u) {
  let node = view.tools.get(u.toolCallId);
  if (!node || !node.isConnected) {
    node = acpItem(view, "tool", "");
    node.dataset.tool = u.toolCallId;
    node.tool = { title: "tool call", kind: "", status: "pending", content: [], locations: [] };
    view.tools.set(u.toolCallId, node);
  }
  const t = node.tool;
  for (const key of ["title", "kind", "status", "content", "locations"]) if (u[key] != null) t[key] = u[key];
  node.dataset.status = t.status;
  const head = el("div", { className: "row" }, el("span", { className: "name", textContent: t.title }),
    t.kind ? el("span", { className: "badge", textContent: t.kind }) : null,
    el("span", { className: `badge ${t.status}`, textContent: String(t.status).replace("_", " ") }));
  const parts = [head];
  for (const loc of t.locations || []) if (loc && loc.path) parts.push(el("div", { className: "sub", textContent: loc.path }));
  for (const c of t.content || []) {
    if (c.type === "diff") parts.push(diffView(c));
    else if (c.type === "content") parts.push(el("div", { className: "tool-out", textContent: blockText(c.content) }));
    else if (c.type === "terminal") parts.push(el("div", { className: "sub", textContent: `terminal ${c.terminalId}` }));
  }
  node.querySelector(".body").replaceChildren(...parts);
}

/** A diff, compactly: the path, then the changed lines between the common head and tail. */
function diffView(d) {
  const old = d.oldText == null ? [] : String(d.oldText).split("\n");
  const now = String(d.newText ?? "").split("\n");
  let head = 0;
  while (head < old.length && head < now.length && old[head] === now[head]) head++;
  let tail = 0;
  while (tail < old.length - head && tail < now.length - head && old[old.length - 1 - tail] === now[now.length - 1 - tail]) tail++;
  const lines = [...old.slice(head, old.length - tail).map((l) => ["del", `- ${l}`]),
    ...now.slice(head, now.length - tail).map((l) => ["add", `+ ${l}`])];
  const shown = lines.slice(0, DIFF_LINES).map(([cls, text]) => el("div", { className: cls, textContent: text }));
  if (lines.length > DIFF_LINES) shown.push(el("div", { className: "sub", textContent: `… ${lines.length - DIFF_LINES} more lines` }));
  const label = d.oldText == null ? `${d.path} (new file)` : `${d.path} (line ${head + 1})`;
  return el("div", { className: "diff" }, el("div", { className: "path", textContent: label }), ...shown);
}

function acpPlan(view, entries) {
  if (!view.plan || !view.plan.isConnected) view.plan = acpItem(view, "plan", "");
  const rows = entries.map((e) => {
    const row = el("li", { textContent: `${PLAN_MARK[e.status] || "·"} ${e.content}` });
    row.dataset.status = e.status;
    return row;
  });
  view.plan.querySelector(".body").replaceChildren(el("b", { textContent: "Plan" }), el("ul", {}, ...rows));
}

// ---- questions (permission requests and elicitations) ----

/** What is still waiting on a person: questions no longer listed (after being listed) are settled. */
async function loadAcpInteractions(view) {
  let pending;
  try {
    pending = (await api("GET", `/acp/connections/${enc(view.cid)}/interactions`)).interactions;
  } catch (error) {
    if (error.status !== 404) failed(error);
    return;
  }
  if (view !== acp.view) return;
  const listed = new Set();
  for (const i of pending) {
    if (i.session_id !== view.sid) continue;
    listed.add(i.request_id);
    // Asked before the frames this view shows: only this list has it. Asked in a frame the stream
    // has not delivered yet: it comes in its place in the conversation.
    if (i.sequence <= view.startSeq) addQuestion(view, i);
    const q = view.questions.get(i.request_id);
    if (q) q.listed = true;
  }
  // One listed earlier and not now was answered (or cancelled) elsewhere. One never listed yet may
  // be younger than this answer, so it stays until the stream or a later read settles it.
  for (const [rid, q] of [...view.questions]) if (q.listed && !listed.has(rid)) settleQuestion(view, rid, "answered elsewhere");
}

function addQuestion(view, i) {
  if (view.questions.has(i.request_id)) return;
  const node = acpItem(view, "ask", "");
  node.dataset.request = i.request_id;
  const q = { node, kind: i.kind, options: i.options || [], listed: false, summary: null };
  view.questions.set(i.request_id, q);
  const body = node.querySelector(".body");
  if (i.kind === "permission") {
    const call = i.tool_call || {};
    q.summary = `Permission: ${call.title || "the agent asks"}`;
    body.append(el("div", { className: "row" }, el("b", { textContent: "Permission: " }),
      el("span", { className: "name", textContent: call.title || "the agent asks" }),
      call.kind ? el("span", { className: "badge", textContent: call.kind }) : null));
    const buttons = el("div", { className: "acp-actions" }, ...q.options.map((o) => el("button", {
      type: "button", textContent: o.name, className: /^allow/.test(o.kind) ? "primary" : "",
      onclick: () => answerPermission(view, i.request_id, o.optionId) })));
    body.append(buttons);
  } else {
    q.summary = `Question: ${i.message || ""}`;
    body.append(el("b", { textContent: "Question: " }), el("span", { textContent: i.message || "" }));
    body.append(elicitationForm(view, i));
  }
}

function settleQuestion(view, rid, text) {
  const q = view.questions.get(rid);
  if (!q) {
    // Settled already (by the interactions list or a refused answer): the answer frame says how.
    const done = view.settled.get(rid);
    if (done) done.node.querySelector(".answer").textContent = text;
    return;
  }
  view.questions.delete(rid);
  view.settled.set(rid, q);
  if (view.settled.size > 100) view.settled.delete(view.settled.keys().next().value);
  q.node.classList.add("settled");
  q.node.dataset.settled = "1";
  q.node.querySelector(".body").replaceChildren(el("div", { textContent: q.summary }),
    el("div", { className: "sub answer", textContent: text }));
}

async function answerPermission(view, rid, optionId) {
  await answerQuestion(view, rid, `/acp/connections/${enc(view.cid)}/permissions/${enc(rid)}/response`, { option_id: optionId });
}

async function answerQuestion(view, rid, path, body) {
  const q = view.questions.get(rid);
  if (q) for (const b of q.node.querySelectorAll("button, input, select")) b.disabled = true;
  try {
    await api("POST", path, body);
    // The stream's answer frame settles it with the outcome.
  } catch (error) {
    if (error.status === 404 || error.status === 409) {
      loadAcpInteractions(view);
      settleQuestion(view, rid, "answered elsewhere");
      return;
    }
    if (q) for (const b of q.node.querySelectorAll("button, input, select")) b.disabled = false;
    failed(error);
  }
}

/** A small form from the requested schema: strings, numbers, booleans and enums. */
function elicitationForm(view, i) {
  const schema = i.requested_schema || {};
  const props = schema.properties || {};
  const required = new Set(schema.required || []);
  const fields = [];
  const form = el("form", { className: "elicit" });
  for (const [name, p] of Object.entries(props)) {
    const label = p.title || name;
    let input;
    if (Array.isArray(p.enum)) {
      input = el("select", {}, ...p.enum.map((v, n) => el("option", { value: String(v), textContent: (p.enumNames && p.enumNames[n]) || String(v) })));
    } else if (p.type === "boolean") {
      input = el("input", { type: "checkbox", checked: !!p.default });
    } else {
      input = el("input", { type: p.type === "number" || p.type === "integer" ? "number" : "text", required: required.has(name) });
      if (p.type === "integer") input.step = "1";
      if (p.default != null) input.value = String(p.default);
    }
    input.name = name;
    fields.push([name, p, input]);
    form.append(el("label", {}, el("span", { textContent: label }), input,
      p.description ? el("span", { className: "sub", textContent: p.description }) : null));
  }
  const path = `/acp/connections/${enc(view.cid)}/elicitations/${enc(i.request_id)}/response`;
  const decline = el("button", { type: "button", textContent: "Decline",
    onclick: () => answerQuestion(view, i.request_id, path, { action: "decline" }) });
  form.append(el("div", { className: "acp-actions" }, decline, el("button", { type: "submit", className: "primary", textContent: "Accept" })));
  form.onsubmit = (event) => {
    event.preventDefault();
    const content = {};
    for (const [name, p, input] of fields) {
      if (p.type === "boolean") content[name] = input.checked;
      else if (input.value === "" && !required.has(name)) continue;
      else if (p.type === "number") content[name] = Number(input.value);
      else if (p.type === "integer") content[name] = parseInt(input.value, 10);
      else content[name] = input.value;
    }
    answerQuestion(view, i.request_id, path, { action: "accept", content });
  };
  return form;
}

/** The banner on every other screen: an agent waits on a person. */
async function loadAcpAsking() {
  const asking = [];
  try {
    for (const c of (await api("GET", "/acp/connections")).connections) {
      if (!c.interactions_pending) continue;
      for (const i of (await api("GET", `/acp/connections/${enc(c.id)}/interactions`)).interactions) {
        asking.push({ connection: c.id, name: agentName(c), interaction: i });
      }
    }
  } catch (error) {
    if (!(error instanceof HttpError)) return; // offline: the page says so elsewhere
    if (error.status !== 404) return failed(error);
  }
  acp.asking = asking;
  renderAcpAsking();
}

function renderAcpAsking() {
  const view = acp.view;
  const elsewhere = acp.asking.filter((a) => !view || view.cid !== a.connection || view.sid !== a.interaction.session_id);
  const banner = $("acp-question");
  banner.hidden = elsewhere.length === 0;
  if (!elsewhere.length) return;
  const [first] = elsewhere;
  const what = first.interaction.kind === "permission"
    ? `permission for ${(first.interaction.tool_call && first.interaction.tool_call.title) || "a tool call"}`
    : first.interaction.message || "a question";
  const more = elsewhere.length > 1 ? ` (+${elsewhere.length - 1} more)` : "";
  banner.replaceChildren(el("b", { textContent: `${first.name} asks: ` }), `${what}${more}`);
  banner.onclick = () => (location.hash = `#/acp/${enc(first.connection)}/${enc(first.interaction.session_id)}`);
}

// ---- the dock: prompt, cancel, new session ----

async function sendAcpPrompt(event) {
  event.preventDefault();
  const view = acp.view;
  const input = $("acp-text");
  const text = input.value;
  if (!view || !text.trim()) return;
  try {
    const sent = await api("POST", `/acp/connections/${enc(view.cid)}/sessions/${enc(view.sid)}/prompt`, { prompt: text });
    if (input.value === text) input.value = "";
    // Running until its end frame; unless the stream already went past the request (a quick turn
    // may have ended before this answer arrived), in which case the stream knows better.
    if (view === acp.view && (view.seq === null || view.seq < sent.sequence)) view.running = true;
    renderAcpControls();
  } catch (error) {
    // 409: a turn is already running (or the session is not attached): the message says which.
    failed(error);
  }
}

async function cancelAcpTurn() {
  const view = acp.view;
  if (!view) return;
  try {
    const answer = await api("POST", `/acp/connections/${enc(view.cid)}/sessions/${enc(view.sid)}/cancel`);
    if (!answer.turn_running && view.turns.size === 0) view.running = false;
    renderAcpControls();
  } catch (error) {
    failed(error);
  }
}

// ---- events ----

/** `acp-notice` from /events: a question asked or settled, a connection ready or settled. */
function acpNotice(n) {
  if (acp.listing) loadAcpConnections();
  if (n.notice !== "ready") loadAcpAsking();
  const view = acp.view;
  if (!view || view.cid !== n.connection) return;
  if (n.notice === "interaction_pending" || n.notice === "interaction_settled") loadAcpInteractions(view);
  else refreshAcpSnapshot(view);
}

/** Called once by app.js at start, when its helpers exist. */
function acpInit() {
  $("acp-start").onclick = startAcpConnection;
  $("acp-send").onsubmit = sendAcpPrompt;
  $("acp-cancel").onclick = cancelAcpTurn;
  $("acp-new").onclick = () => acp.view && newAcpSession(acp.view.cid);
  const log = $("acp-log");
  log.addEventListener("scroll", () => {
    // Our own scroll (its event comes a frame later, when more may have arrived) keeps following.
    if (acp.view) acp.view.stick = log.scrollTop + 2 >= acp.view.followedTo || log.scrollHeight - log.scrollTop - log.clientHeight < 60;
  }, { passive: true });
  // A notice or the keyboard resizing the log keeps it at the bottom when it was there.
  if (window.ResizeObserver) new ResizeObserver(followAcpLog).observe(log);
  // Back from the background or the network: resume the stream at once.
  document.addEventListener("visibilitychange", acpVisibility);
  window.addEventListener("online", acpWake);
  window.addEventListener("pageshow", acpWake);
}
