// /mobile's terminal (xterm.js) in headless Chromium: the real daemon (TCP + Basic Auth on
// loopback), a phone-sized touch viewport, and every check read back from xterm.js's own buffer
// (the page exposes its Terminal as window.__tuicTerm): 256 and true colours, htop full-screen at
// the size the page fitted, the whole scrollback, the key row (Esc, Tab, arrows, sticky Ctrl;
// Ctrl+C stopping `yes`, timed), a line kept while offline, the daemon answering terminal queries
// alone, and the desktop layout.
// Usage: node tests/mobile/terminal.mjs <tuicd binary> <screenshot dir>
// Prints one line per check (with its figures) and "N passed, M failed"; exits non-zero on any failure.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

import { DEADLINE_MS, bed, freePort, until, waitBuffer } from "./lib.mjs";

const [tuicd, shots] = process.argv.slice(2);
if (!tuicd || !shots) throw new Error("usage: terminal.mjs <tuicd binary> <screenshot dir>");
fs.mkdirSync(shots, { recursive: true });

const USER = "phone";
const PASSWORD = "correct horse";
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const DESKTOP = { viewport: { width: 1280, height: 800 } };
const FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync"];
const PROMPT = "tuic-prompt$ ";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tuic-mobile-term-"));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const auth = "Basic " + Buffer.from(`${USER}:${PASSWORD}`).toString("base64");
const hash = execFileSync(tuicd, ["hash-password", "--cost", "4"], { input: PASSWORD }).toString().trim();
fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify({ services: {
  server: { enabled: true, port, bind_address: "127.0.0.1" },
  auth: { username: USER, password_hash: hash, auth_rate_limit_max: 100 } } }));

const { api, create, waitPty, check, tally, startDaemon, stopDaemon } = bed({ tuicd, dir, base, auth });
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: FLAGS });
try {
  await run();
} finally {
  await browser.close();
  await stopDaemon();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.exit(tally());

// ---- the checks ----

async function run() {
  await startDaemon();
  const credentials = { httpCredentials: { username: USER, password: PASSWORD } };
  const context = await browser.newContext({ ...PHONE, ...credentials });
  const page = await context.newPage();
  page.on("pageerror", (error) => console.log(`  page error: ${error.message}`));

  await check("the terminal fits the phone and the PTY follows its size", async () => {
    const id = await create({ display_name: "fit", shell: "/bin/sh", args: ["-c", "echo fit-ready; exec sleep 120"] });
    await openTerm(page, id);
    await waitBuffer(page, "fit-ready");
    // The layout may still settle (the key row, the keyboard inset) after the first output: the
    // PTY must end at the size the terminal has then, read afresh each time.
    let size = null;
    await until("the PTY at the terminal's size", async () => {
      size = await page.evaluate(() => ({ rows: window.__tuicTerm.rows, cols: window.__tuicTerm.cols }));
      const info = await api("GET", `/sessions/${id}`);
      return info.rows === size.rows && info.cols === size.cols;
    });
    if (size.cols < 30 || size.cols > 60 || size.rows < 15) throw new Error(`a ${size.cols}x${size.rows} terminal on a 390 px phone`);
    // Nothing sits beside or below the screen: the terminal is as wide as the page.
    const box = await page.locator("#term .xterm-screen").boundingBox();
    if (box.width < 330 || box.x + box.width > 390) throw new Error(`the screen spans ${box.x}..${box.x + box.width}`);
    return `${size.cols}x${size.rows}`;
  });

  await check("256 colours and true colour reach the cells (and are drawn)", async () => {
    const id = await create({ display_name: "colours", shell: "/bin/sh", args: ["-c",
      "printf 'A\\033[31mR\\033[0m \\033[38;5;196mX\\033[0m \\033[48;5;21mY\\033[0m \\033[38;2;255;128;0mZ\\033[0m \\033[1;38;5;46mG\\033[0m\\r\\ncolours-done\\r\\n'; exec sleep 120"] });
    await openTerm(page, id);
    await waitBuffer(page, "colours-done");
    const cells = await page.evaluate(() => {
      const buffer = window.__tuicTerm.buffer.active;
      for (let y = 0; y < buffer.length; y++) {
        const line = buffer.getLine(y);
        if (!line.translateToString(true).startsWith("AR X Y Z G")) continue;
        const at = (x) => {
          const c = line.getCell(x);
          return { ch: c.getChars(), fgPalette: c.isFgPalette(), fgRGB: c.isFgRGB(), fg: c.getFgColor(),
            bgPalette: c.isBgPalette(), bg: c.getBgColor(), bold: c.isBold() };
        };
        return { R: at(1), X: at(3), Y: at(5), Z: at(7), G: at(9) };
      }
      return null;
    });
    if (!cells) throw new Error("the colour line is not in the buffer");
    const want = [
      ["R", cells.R.fgPalette && cells.R.fg === 1, "16-colour red (1)"],
      ["X", cells.X.fgPalette && cells.X.fg === 196, "palette 196 foreground"],
      ["Y", cells.Y.bgPalette && cells.Y.bg === 21, "palette 21 background"],
      ["Z", cells.Z.fgRGB && cells.Z.fg === 0xff8000, "true colour #ff8000"],
      ["G", cells.G.fgPalette && cells.G.fg === 46 && cells.G.bold, "bold palette 46"],
    ];
    for (const [ch, ok, what] of want) if (!ok) throw new Error(`${ch} is not ${what}: ${JSON.stringify(cells[ch])}`);
    // Drawn too: xterm.js puts its palette in <style> elements, which the page's CSP must allow.
    const drawn = await page.evaluate(() => {
      const colour = (ch) => {
        const span = [...document.querySelectorAll("#term .xterm-rows span")].find((s) => s.textContent === ch);
        return span ? getComputedStyle(span).color : null;
      };
      const back = (ch) => {
        const span = [...document.querySelectorAll("#term .xterm-rows span")].find((s) => s.textContent === ch);
        return span ? getComputedStyle(span).backgroundColor : null;
      };
      return { X: colour("X"), Y: back("Y"), Z: colour("Z") };
    });
    if (drawn.X !== "rgb(255, 0, 0)" || drawn.Y !== "rgb(0, 0, 255)" || drawn.Z !== "rgb(255, 128, 0)") {
      throw new Error(`drawn as ${JSON.stringify(drawn)}`);
    }
    await page.screenshot({ path: path.join(shots, "terminal-colours.png") });
  });

  await check("the whole scrollback the ring holds: 5000 lines printed before the page opened", async () => {
    const id = await create({ display_name: "history", shell: "/bin/sh", args: ["-c",
      "i=1; while [ $i -le 5000 ]; do echo \"line-$i\"; i=$((i+1)); done; echo history-done; exec sleep 120"] });
    await until("the session to print its 5000 lines", async () =>
      (await api("GET", `/sessions/${id}/output?format=raw&limit=64`)).data.includes("history-done"));
    await openTerm(page, id);
    await waitBuffer(page, "history-done");
    const lines = await page.evaluate(() => {
      const buffer = window.__tuicTerm.buffer.active;
      const all = [];
      for (let y = 0; y < buffer.length; y++) all.push(buffer.getLine(y).translateToString(true));
      return all.filter((l) => /^line-\d+$/.test(l)).map((l) => Number(l.slice(5)));
    });
    if (lines.length !== 5000 || lines[0] !== 1 || lines[4999] !== 5000) {
      throw new Error(`${lines.length} lines, first ${lines[0]}, last ${lines[lines.length - 1]}`);
    }
    // Reachable by touch: a swipe down the terminal scrolls the scrollback back (xterm.js 6 has no
    // touch scrolling of its own; the page adds it).
    const bottom = await page.evaluate(() => window.__tuicTerm.buffer.active.viewportY);
    const cdp = await page.context().newCDPSession(page);
    const box = await page.locator("#term").boundingBox();
    const x = box.x + box.width / 2;
    await cdp.send("Input.dispatchTouchEvent", { type: "touchStart", touchPoints: [{ x, y: box.y + 60 }] });
    for (let i = 1; i <= 10; i++) {
      await cdp.send("Input.dispatchTouchEvent", { type: "touchMove", touchPoints: [{ x, y: box.y + 60 + i * 40 }] });
    }
    await cdp.send("Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [] });
    await cdp.detach();
    const scrolled = await page.evaluate(() => window.__tuicTerm.buffer.active.viewportY);
    if (!(scrolled < bottom - 10)) throw new Error(`a 400 px swipe moved the view from line ${bottom} to ${scrolled}`);
    return `a 400 px swipe scrolled back ${bottom - scrolled} lines`;
  });

  await check("htop full-screen: header meters at the top, the F-key footer on the last row of the fitted size", async () => {
    const htop = fs.existsSync("/usr/bin/htop") ? "/usr/bin/htop" : null;
    if (!htop) throw new Error("htop is not installed (tests/mobile/setup.sh installs it)");
    const id = await create({ display_name: "htop", shell: htop, env: { HOME: dir } });
    await openTerm(page, id);
    const screen = await waitScreen(page, "htop's header and footer", (s) =>
      s.alternate && s.rows.some((r) => r.includes("Tasks:")) && s.rows[s.rows.length - 1].startsWith("F1Help") &&
      s.rows.some((r) => /PID\s+USER/.test(r)));
    const header = screen.rows.findIndex((r) => /Mem\[|Tasks:/.test(r));
    const table = screen.rows.findIndex((r) => /PID\s+USER/.test(r));
    if (header < 0 || header > 8 || table <= header) throw new Error(`header at ${header}, table at ${table}:\n${screen.rows.join("\n")}`);
    const info = await api("GET", `/sessions/${id}`);
    if (info.rows !== screen.rows.length || info.cols !== screen.cols) {
      throw new Error(`htop drew ${screen.cols}x${screen.rows.length}, the PTY is ${info.cols}x${info.rows}`);
    }
    await page.screenshot({ path: path.join(shots, "terminal-htop.png") });
    // Typing goes through xterm.js (onData) as input frames: q quits htop, the main screen is back.
    await page.evaluate(() => window.__tuicTerm.focus());
    await page.keyboard.type("q");
    await until("htop to exit", async () => (await api("GET", `/sessions/${id}`)).exited);
    return `footer on row ${screen.rows.length}, table header on row ${table + 1}`;
  });

  await check("an exited session (a tombstone) shows what its ring held, and says it has exited", async () => {
    const id = await create({ display_name: "tomb", shell: "/bin/sh", args: ["-c", "printf '\\033[32mtomb-line\\033[0m\\r\\n'; exit 3"] });
    await until("the session to exit", async () => (await api("GET", `/sessions/${id}`)).exited);
    await openTerm(page, id);
    await page.locator("#ended").getByText("code 3").waitFor({ timeout: DEADLINE_MS });
    await waitBuffer(page, "tomb-line");
  });

  await check("the key row sends Esc, Tab, arrows (as the cursor key mode says) and a sticky Ctrl", async () => {
    const id = await create({ display_name: "keys", shell: "/bin/sh", args: ["-c",
      "stty -icanon -echo min 1 time 0; echo keys-ready; while :; do c=$(dd bs=1 count=1 2>/dev/null | od -An -tx1 | tr -d ' '); echo \"k:$c\"; done"] });
    await openTerm(page, id);
    await waitBuffer(page, "keys-ready");
    const keys = page.locator("#keys");
    const expect = async (what, hex) => {
      for (const h of hex) await waitPtyCount(id, `k:${h}`, (counts[h] = (counts[h] || 0) + 1), what);
    };
    const counts = {};
    await keys.getByRole("button", { name: "Escape", exact: true }).tap();
    await expect("Esc", ["1b"]);
    await keys.getByRole("button", { name: "Tab", exact: true }).tap();
    await expect("Tab", ["09"]);
    await keys.getByRole("button", { name: "Up", exact: true }).tap();
    await expect("Up", ["1b", "5b", "41"]);
    await keys.getByRole("button", { name: "Page down", exact: true }).tap();
    await expect("PgDn", ["1b", "5b", "36", "7e"]);
    // Ctrl is sticky: it shows pressed, applies to the next key typed, then lets go.
    await keys.getByRole("button", { name: /^Control/ }).tap();
    if ((await keys.locator('[data-key="Control"]').getAttribute("aria-pressed")) !== "true") throw new Error("Ctrl does not show pressed");
    await page.keyboard.type("a");
    await expect("Ctrl+A", ["01"]);
    if ((await keys.locator('[data-key="Control"]').getAttribute("aria-pressed")) !== "false") throw new Error("Ctrl stays pressed");
    await page.keyboard.type("b");
    await expect("b", ["62"]);
    // Application cursor mode (DECCKM, as vim and less set it): the arrows send ESC O.
    await page.evaluate(() => window.__tuicTerm.write("\x1b[?1h"));
    await page.waitForFunction(() => window.__tuicTerm.modes.applicationCursorKeysMode, null, { timeout: DEADLINE_MS });
    await keys.getByRole("button", { name: "Left", exact: true }).tap();
    await expect("Left in application mode", ["1b", "4f", "44"]);
  });

  await check("Ctrl+C from the key row stops `yes` in a shell; timed from the tap to the prompt", async () => {
    const id = await create({ display_name: "flood", shell: "/bin/bash", args: ["--norc", "--noprofile", "-i"],
      env: { PS1: PROMPT, HOME: dir } });
    await openTerm(page, id);
    await waitBuffer(page, PROMPT);
    await page.evaluate(() => window.__tuicTerm.focus());
    await page.keyboard.type("yes flood-line\n");
    await until("yes to flood", async () => (await api("GET", `/sessions/${id}`)).total_written > 4 * 1024 * 1024);
    // Timed from the moment the key reaches the page (Playwright's own actions take a while to
    // reach a page busy with a flood) to the Ctrl-C on the socket, the prompt back in the PTY and
    // on the page's screen.
    await page.evaluate(() => {
      const send = WebSocket.prototype.send;
      WebSocket.prototype.send = function (data) {
        if (data === "\x03" && !window.__ctrlC) window.__ctrlC = Date.now();
        return send.call(this, data);
      };
      document.addEventListener("keydown", (event) => {
        if (event.key === "c" && !window.__keyC) window.__keyC = Date.now();
      }, true);
    });
    await page.locator("#keys").getByRole("button", { name: /^Control/ }).tap();
    await page.keyboard.type("c");
    const deadline = Date.now() + DEADLINE_MS;
    let tailRaw = "";
    while (!(tailRaw = (await api("GET", `/sessions/${id}/output?format=raw&limit=64`)).data).endsWith(PROMPT)) {
      if (Date.now() > deadline) throw new Error(`no prompt after Ctrl+C: ${JSON.stringify(tailRaw)}`);
    }
    const ptyAt = Date.now();
    await page.waitForFunction((p) => {
      const b = window.__tuicTerm.buffer.active;
      return b.getLine(b.baseY + b.cursorY).translateToString(true).startsWith(p.trimEnd());
    }, PROMPT, { timeout: DEADLINE_MS });
    const shownAt = Date.now();
    const { keyC, ctrlC } = await page.evaluate(() => ({ keyC: window.__keyC, ctrlC: window.__ctrlC }));
    const sent = ctrlC - keyC;
    const pty = ptyAt - keyC;
    const shown = shownAt - keyC;
    if (!(pty < 500)) throw new Error(`the prompt came back ${pty} ms after the key`);
    // A second command runs: the shell is really back.
    await page.keyboard.type("echo after-flood\n");
    await waitBuffer(page, "\nafter-flood\n");
    // While the stream is held for flow control the key goes by POST /write instead.
    const how = ctrlC ? `on the socket ${sent} ms` : "by POST /write (the stream was held for flow control)";
    return `from the key: Ctrl-C ${how}, the prompt back in the PTY ${pty} ms, on the phone's screen ${shown} ms`;
  });

  await check("Send while offline keeps the line, and sends it when the daemon is reachable again", async () => {
    const id = await create({ display_name: "offline", shell: "/bin/sh", args: ["-c",
      "echo line-ready; while read l; do echo \"got:$l\"; done"] });
    await openTerm(page, id);
    await waitBuffer(page, "line-ready");
    await context.setOffline(true);
    await page.locator("#text").fill("typed-while-offline");
    await page.locator("#send button").tap();
    await page.locator("#notice").getByText("Not sent").waitFor({ timeout: DEADLINE_MS });
    if ((await page.locator("#text").inputValue()) !== "typed-while-offline") throw new Error("the line left the box");
    await page.screenshot({ path: path.join(shots, "terminal-offline-send.png") });
    await context.setOffline(false);
    await waitPty(id, "got:typed-while-offline");
    await page.waitForFunction(() => document.getElementById("text").value === "", null, { timeout: DEADLINE_MS });
    const out = (await api("GET", `/sessions/${id}/output?format=text`)).data;
    if (out.split("got:typed-while-offline").length !== 2) throw new Error(`sent more than once:\n${out}`);
  });

  await check("terminal queries are the daemon's to answer: the page adds no reply of its own", async () => {
    const id = await create({ display_name: "queries", shell: "/bin/sh", args: ["-c",
      "stty -icanon -echo min 0 time 10; printf 'asking\\033[c\\033[>c\\033[6n\\033[5n\\033[?1$p\\033]11;?\\007\\r\\n';" +
      " a=$(dd bs=512 count=1 2>/dev/null | od -An -tx1 | tr -d ' \\n'); echo \"daemon-answered:$a\";" +
      " stty min 1 time 0; while :; do c=$(dd bs=1 count=1 2>/dev/null | od -An -tx1 | tr -d ' '); echo \"in:$c\"; done"] });
    await waitPty(id, "daemon-answered:1b");
    await openTerm(page, id);
    await waitBuffer(page, "daemon-answered");
    await page.evaluate(() => window.__tuicTerm.focus());
    await page.keyboard.type("z");
    await waitPty(id, "in:7a");
    const out = (await api("GET", `/sessions/${id}/output?format=text`)).data;
    const inputs = out.split("\n").filter((l) => l.startsWith("in:"));
    if (inputs[0] !== "in:7a") throw new Error(`the page sent ${inputs.slice(0, 8).join(" ")} before the key`);
  });

  await check("at desktop width the sessions list stays beside the terminal", async () => {
    const wide = await browser.newContext({ ...DESKTOP, ...credentials });
    const desk = await wide.newPage();
    try {
      const id = await create({ display_name: "desk", shell: "/bin/sh", args: ["-c", "echo desk-ready; exec sleep 120"] });
      await openTerm(desk, id);
      await waitBuffer(desk, "desk-ready");
      const list = await desk.locator("#list-view").boundingBox();
      const term = await desk.locator("#term").boundingBox();
      if (!list || !term || list.x + list.width > term.x + 1 || term.width < 700) {
        throw new Error(`list ${JSON.stringify(list)}, terminal ${JSON.stringify(term)}`);
      }
      await desk.locator("#sessions").getByText("colours").waitFor({ timeout: DEADLINE_MS });
      if ((await desk.locator(`#sessions button[data-session="${id}"]`).getAttribute("aria-current")) !== "page") {
        throw new Error("the list does not mark the open session");
      }
      await desk.screenshot({ path: path.join(shots, "terminal-desktop.png") });
      // Another session from the list opens in the same place.
      await desk.locator("#sessions").getByText("colours").click();
      await waitBuffer(desk, "colours-done");
      const cols = await desk.evaluate(() => window.__tuicTerm.cols);
      if (cols < 90) throw new Error(`${cols} columns at 1280 px`);
      return `${cols} columns beside the list`;
    } finally {
      await wide.close();
    }
  });

  await context.close();
}

// ---- helpers ----

/** Opens a session's view and waits for its terminal. */
async function openTerm(page, id) {
  await page.goto(`${base}/mobile#/s/${id}`);
  await page.waitForFunction(() => window.__tuicTerm && window.__tuicTerm.element, null, { timeout: DEADLINE_MS });
}

/** Waits until the visible screen satisfies `ok` ({alternate, cols, rows: [text]}); answers it. */
async function waitScreen(page, what, ok) {
  let last = null;
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    last = await page.evaluate(() => {
      const t = window.__tuicTerm;
      const b = t.buffer.active;
      const rows = [];
      for (let y = 0; y < t.rows; y++) rows.push(b.getLine(b.viewportY + y).translateToString(true));
      return { alternate: b.type === "alternate", cols: t.cols, rows };
    });
    if (ok(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${last.rows.join("\n")}`);
    await page.waitForTimeout(50);
  }
}

/** Waits until the session's output shows `text` on `count` lines. */
async function waitPtyCount(id, text, count, what) {
  let last = "";
  try {
    await until(`${what}: ${text} x${count}`, async () => {
      last = (await api("GET", `/sessions/${id}/output?format=text`)).data;
      return last.split("\n").filter((l) => l === text).length >= count;
    });
  } catch {
    throw new Error(`${what}: the PTY never got ${text} (x${count}):\n${last.slice(-300)}`);
  }
}
