"use strict";
// One session as a terminal (a classic script: app.js calls it). xterm.js (xterm.js, built by
// vendor/build.sh) is fed the session's raw bytes from its stream (`?binary=1`), starting at the
// oldest byte the daemon's 2 MiB ring holds, so the scrollback the daemon keeps is all there;
// typing goes back as the stream's input frames. The fit addon sizes it to the screen and the PTY
// follows (POST /sessions/:id/resize); a `resize` frame from the daemon (its size rule, when
// several clients share the session) wins.

const SCROLLBACK = 20000;
const RESIZE_MS = 120;
// Flow control: a browser takes a WebSocket's frames as fast as they come, far faster than
// xterm.js parses a flood. Past HIGH bytes waiting to be parsed the page drops further output
// unparsed (so it stays quick to answer a tap, and its input still goes on the open stream); below
// LOW it reopens the stream at the first byte it dropped, from the daemon's ring (a `lagged` frame
// says what the ring no longer holds).
const HIGH = 512 * 1024;
const LOW = 64 * 1024;
const THEME = {
  background: "#0d0f12", foreground: "#e8eaed", cursor: "#6cc4a1", cursorAccent: "#0d0f12",
  selectionBackground: "#3a4a5c",
};
const FONT = 'ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace';

// Queries a program sends its terminal are the daemon's to answer (it is the terminal, once,
// whether no client or five are attached): xterm.js must not answer them again from the phone,
// least of all while it replays the ring. Each handler runs before xterm's own and ends the
// sequence there.
const REPORTS = [
  { final: "c" }, { prefix: ">", final: "c" }, { prefix: "=", final: "c" }, // device attributes
  { final: "n" }, { prefix: "?", final: "n" }, // status and cursor position reports
  { intermediates: "$", final: "p" }, { prefix: "?", intermediates: "$", final: "p" }, // DECRQM
  { prefix: ">", final: "q" }, // XTVERSION
];
const REPORT_WINDOW_OPS = [11, 13, 14, 15, 16, 18, 19, 20, 21];

function muteReplies(term) {
  const parser = term.parser;
  for (const id of REPORTS) parser.registerCsiHandler(id, () => true);
  parser.registerCsiHandler({ final: "t" }, (params) => REPORT_WINDOW_OPS.includes(params[0]));
  // Colour queries (a `?` in place of a colour); setting a colour still reaches xterm.
  for (const osc of [4, 10, 11, 12, 17, 19]) parser.registerOscHandler(osc, (data) => data.includes("?"));
  parser.registerDcsHandler({ intermediates: "$", final: "q" }, () => true); // DECRQSS
}

/** Opens the terminal for `view` in #term, sized to it. */
function termOpen(view) {
  const host = $("term");
  host.replaceChildren();
  const wide = window.matchMedia("(min-width: 900px)").matches;
  const term = new Terminal({
    scrollback: SCROLLBACK, fontFamily: FONT, fontSize: wide ? 14 : 13, theme: THEME, cursorBlink: false,
    allowTransparency: false, macOptionIsMeta: true, rightClickSelectsWord: false,
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  muteReplies(term);
  term.open(host);
  view.term = term;
  view.fit = fit;
  window.__tuicTerm = term; // tests read the screen from it
  term.onData((data) => termInput(view, data));
  term.onBinary((data) => termInput(view, data, true));
  touchScroll(view, host);
  view.observer = new ResizeObserver(() => termFit(view));
  view.observer.observe(host);
  termFit(view);
}

// xterm.js 6 scrolls by wheel only (no touch: xtermjs/xterm.js#5489), so a vertical swipe is
// turned into lines here: the scrollback moves on the main screen; a full-screen program (the
// alternate screen has no scrollback) gets arrow keys, as xterm's alternate scroll mode sends.
function touchScroll(view, host) {
  let lastY = null;
  let rest = 0;
  host.addEventListener("touchstart", (event) => {
    lastY = event.touches.length === 1 ? event.touches[0].clientY : null;
    rest = 0;
  }, { passive: true });
  host.addEventListener("touchmove", (event) => {
    const term = view.term;
    if (lastY === null || event.touches.length !== 1 || !term) return;
    const y = event.touches[0].clientY;
    rest += lastY - y;
    lastY = y;
    const cell = term.element.querySelector(".xterm-screen").clientHeight / term.rows || 16;
    const lines = Math.trunc(rest / cell);
    event.preventDefault();
    if (!lines) return;
    rest -= lines * cell;
    if (term.buffer.active.type === "normal") term.scrollLines(lines);
    else if (!view.ended) {
      const key = keyBytes(lines < 0 ? "ArrowUp" : "ArrowDown", term.modes.applicationCursorKeysMode, false);
      sendInput(view, key.repeat(Math.min(Math.abs(lines), 20)));
    }
  }, { passive: false });
  host.addEventListener("touchend", () => (lastY = null), { passive: true });
}

function termClose(view) {
  if (!view.term) return;
  view.observer.disconnect();
  clearTimeout(view.resizeTimer);
  view.term.dispose();
  view.term = null;
  if (window.__tuicTerm && !window.__tuicTerm.element) window.__tuicTerm = null;
  setCtrl(view, false);
}

/** Fits the terminal to its box; the PTY follows a moment later. */
function termFit(view) {
  if (!view.term || $("detail-view").hidden) return;
  const dims = view.fit.proposeDimensions();
  if (!dims || !(dims.cols > 1) || !(dims.rows > 1)) return;
  view.wanted = { rows: dims.rows, cols: dims.cols };
  if (dims.cols !== view.term.cols || dims.rows !== view.term.rows) view.term.resize(dims.cols, dims.rows);
  clearTimeout(view.resizeTimer);
  view.resizeTimer = setTimeout(() => pushSize(view), RESIZE_MS);
}

/** Asks the daemon for the size this screen fits; it answers with a `resize` frame when its rule picks another. */
async function pushSize(view, again) {
  const size = view.wanted;
  if (!size || view.ended || app.current !== view) return;
  if (!again && view.sent && view.sent.rows === size.rows && view.sent.cols === size.cols) return;
  view.sent = size;
  try {
    await api("POST", `/sessions/${enc(view.id)}/resize`, size);
  } catch (error) {
    view.sent = null; // tried again when the stream reconnects
    if (error.status !== 410 && error.status !== 404) failed(error);
  }
}

/** The daemon's size for the session (its `resize` frame): the terminal draws at it. */
function termResized(view, frame) {
  const rows = frame.rows ?? (frame.size && frame.size.rows);
  const cols = frame.cols ?? (frame.size && frame.size.cols);
  if (!view.term || !(rows > 0) || !(cols > 0)) return;
  if (rows !== view.term.rows || cols !== view.term.cols) view.term.resize(cols, rows);
}

// ---- input: typing, the key row, sticky Ctrl ----

function termInput(view, data, binary) {
  if (view.ended || app.current !== view) return;
  if (view.ctrl && !binary) {
    data = withCtrl(data);
    setCtrl(view, false);
  }
  sendInput(view, data, binary);
}

/** Input goes on the stream (in order with every keystroke); without one, through POST /write. */
function sendInput(view, data, binary) {
  const socket = view.socket;
  if (socket && socket.readyState === WebSocket.OPEN) {
    if (binary) socket.send(Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff));
    else socket.send(data);
  } else {
    write(data);
  }
}

function setCtrl(view, on) {
  view.ctrl = on;
  const button = $("keys").querySelector('[data-key="Control"]');
  if (button) button.ariaPressed = on ? "true" : "false";
}

function tapKey(key) {
  const view = app.current;
  if (!view || !view.term || view.ended) return;
  if (key === "Control") {
    setCtrl(view, !view.ctrl);
    view.term.focus(); // the next key is typed on the keyboard
    return;
  }
  const data = keyBytes(key, view.term.modes.applicationCursorKeysMode, view.ctrl);
  setCtrl(view, false);
  sendInput(view, data);
}

function buildKeyRow() {
  const buttons = KEY_ROW.map(([label, key, name]) => {
    const button = el("button", { type: "button", textContent: label, title: name, tabIndex: -1, onclick: () => tapKey(key) });
    button.ariaLabel = name;
    button.dataset.key = key;
    if (key === "Control") button.ariaPressed = "false";
    // Tapping a key must leave the focus (and the phone's keyboard) on the terminal.
    button.addEventListener("mousedown", (event) => event.preventDefault());
    return button;
  });
  $("keys").replaceChildren(...buttons);
}

// ---- output ----

/** One output frame of the binary stream: an 8-byte big-endian cursor, then raw bytes. */
function termOutput(view, buffer) {
  if (view.throttled) return;
  const cursor = Number(new DataView(buffer).getBigUint64(0));
  const bytes = new Uint8Array(buffer, 8);
  view.cursor = cursor + bytes.length;
  termWrite(view, bytes, bytes.length);
}

/** Writes output to the terminal, holding the stream while too much waits to be parsed. */
function termWrite(view, data, size) {
  if (!view.term) return;
  view.pending += size;
  view.term.write(data, () => {
    view.pending -= size;
    if (view.throttled && view.pending < LOW && app.current === view) {
      view.throttled = false;
      if (view.ended) return;
      const old = view.socket;
      stream(view.opened);
      if (old) old.close();
    }
  });
  if (view.pending > HIGH) view.throttled = true;
}
