// /mobile in headless Chromium, as a person on a phone meets it: the real daemon with remote access
// (TCP + Basic Auth on loopback), a phone-sized touch viewport, and the browser's own credentials.
// Usage: node tests/mobile/mobile.mjs <tuicd binary> <screenshot dir>
// Prints one line per check and "N passed, M failed"; exits non-zero on any failure.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

import { DEADLINE_MS, bed, freePort, until, waitBuffer } from "./lib.mjs";
import { startUpstreams, upstreamChecks } from "./upstreams.mjs";

const [tuicd, shots] = process.argv.slice(2);
if (!tuicd || !shots) throw new Error("usage: mobile.mjs <tuicd binary> <screenshot dir>");
fs.mkdirSync(shots, { recursive: true });

const USER = "phone";
const PASSWORD = "correct horse";
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync"];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tuic-mobile-"));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const auth = "Basic " + Buffer.from(`${USER}:${PASSWORD}`).toString("base64");
const hash = execFileSync(tuicd, ["hash-password", "--cost", "4"], { input: PASSWORD }).toString().trim();
fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify({ services: {
  server: { enabled: true, port, bind_address: "127.0.0.1" },
  // The wrong-password check must not lock the right one out of the rest of the run.
  auth: { username: USER, password_hash: hash, auth_rate_limit_max: 100 } },
  // The agent-side tools whose writes ask a person first: the confirms the phone answers.
  ai_terminal_mcp_enabled: true }));

// Protected MCP upstreams behind an OAuth authorization server, each needs_auth at start.
const upstreams = await startUpstreams(dir);

const { api, create, waitPty, check, tally, startDaemon, stopDaemon } = bed({ tuicd, dir, base, auth });
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: FLAGS });
try {
  await run();
} finally {
  await browser.close();
  await stopDaemon();
  upstreams.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.exit(tally());

// ---- the checks ----

async function run() {
  await startDaemon();
  // Each upstream's consent is asked (and refused: no page is open yet) before the page opens, so
  // no consent dialog lands in the middle of the session checks.
  await until("the three upstreams' consents to be settled", async () =>
    (fs.readFileSync(path.join(dir, "tuicd.log"), "utf8").match(/authorization not started/g) || []).length >= 3);
  const shell = await create({ display_name: "phone-shell", shell: "/bin/sh",
    args: ["-c", "echo ready; while read l; do echo \"got:$l\"; done; echo bye"] });
  const context = await browser.newContext({ ...PHONE, httpCredentials: { username: USER, password: PASSWORD } });
  const page = await context.newPage();

  await check("the page lists a session the test created", async () => {
    await page.goto(`${base}/mobile`);
    await page.locator("#sessions").getByText("phone-shell").waitFor({ timeout: DEADLINE_MS });
    await page.screenshot({ path: path.join(shots, "mobile-list.png") });
  });

  await check("a session created while the page is open appears (SSE)", async () => {
    // The page holds /events open as a confirm answerer, so it hears session-created at once.
    await until("the page's /events stream", async () => (await api("GET", "/ui/confirms")).answerers.confirm === 1);
    await create({ display_name: "phone-late", shell: "/bin/sh", args: ["-c", "exec sleep 60"] });
    await page.locator("#sessions").getByText("phone-late").waitFor({ timeout: DEADLINE_MS });
  });

  await check("live output arrives over the WebSocket, into the terminal", async () => {
    await page.locator("#sessions").getByText("phone-shell").tap();
    await waitBuffer(page, "ready");
    await api("POST", `/sessions/${shell}/write`, { data: "from-the-desk\n" });
    await waitBuffer(page, "got:from-the-desk");
  });

  await check("a quick-reply chip reaches the PTY", async () => {
    await page.locator("#chips").getByText("Yes", { exact: true }).tap();
    await waitPty(shell, "got:y");
    await waitBuffer(page, "got:y");
  });

  await check("the text input writes a line", async () => {
    await page.locator("#text").fill("typed on the phone");
    await page.locator("#send button").tap();
    await waitPty(shell, "got:typed on the phone");
    await page.screenshot({ path: path.join(shots, "mobile-session.png") });
  });

  await check("detected numbered choices become chips, and the question banner shows on every screen", async () => {
    const agent = await create({ display_name: "phone-agent", agent_type: "claude", shell: "/bin/sh", args: ["-c",
      "printf '⏺ I am about to delete the build cache.\\r\\n\\r\\nDo you want to proceed?\\r\\n1. Yes\\r\\n2. No\\r\\n'; " +
      "stty -icanon -echo min 1; c=$(dd bs=1 count=1 2>/dev/null); echo \"picked:$c\"; exec sleep 60"] });
    await page.locator("#question").getByText("Do you want to proceed?").waitFor({ timeout: DEADLINE_MS });
    await page.screenshot({ path: path.join(shots, "mobile-question-banner.png") });
    await page.locator("#question").tap();
    await page.locator("#chips button.choice").getByText("1. Yes").waitFor({ timeout: DEADLINE_MS });
    await page.screenshot({ path: path.join(shots, "mobile-choices.png") });
    await page.locator("#chips button.choice").getByText("1. Yes").tap();
    await waitPty(agent, "picked:1");
  });

  await check("an agent's confirm-gated write is asked on the phone: Decline keeps it out, Confirm lets it in", async () => {
    const ask = (text) => mcp("tools/call", { name: "ai_terminal_send_input", arguments: { session_id: shell, text } });
    const declined = ask("declined-on-phone");
    await page.locator("#confirm").getByText("declined-on-phone").waitFor({ timeout: DEADLINE_MS });
    await page.locator("#confirm-no").tap();
    const refusal = await declined;
    if (!refusal.result || !refusal.result.isError || !refusal.result.content[0].text.includes("declined by the user")) {
      throw new Error(`the agent got ${JSON.stringify(refusal)}`);
    }
    const approved = ask("approved-on-phone");
    await page.locator("#confirm").getByText("approved-on-phone").waitFor({ timeout: DEADLINE_MS });
    await page.screenshot({ path: path.join(shots, "mobile-confirm.png") });
    await page.locator("#confirm-yes").tap();
    const answer = await approved;
    if (!answer.result || answer.result.isError) throw new Error(`the agent got ${JSON.stringify(answer)}`);
    await page.locator("#confirm").waitFor({ state: "hidden", timeout: DEADLINE_MS });
    await waitPty(shell, "got:approved-on-phone");
    const out = await api("GET", `/sessions/${shell}/output?format=text`);
    if (out.data.includes("declined-on-phone")) throw new Error("the declined text reached the PTY");
  });

  await check("a session that exits while viewed says so and stops taking input", async () => {
    await page.goto(`${base}/mobile#/s/${shell}`);
    await waitBuffer(page, "got:typed on the phone");
    await api("POST", `/sessions/${shell}/write`, { data: "\x04" });
    await page.locator("#ended").getByText("exited").waitFor({ timeout: DEADLINE_MS });
    if (!(await page.locator("#text").isDisabled())) throw new Error("the input still takes text");
    await page.screenshot({ path: path.join(shots, "mobile-exited.png") });
  });

  await check("installable: manifest and a service worker that caches the shell", async () => {
    await page.goto(`${base}/mobile`);
    const cached = await page.evaluate(async () => {
      await navigator.serviceWorker.ready;
      const cache = await caches.open("tuic-mobile-shell-v2");
      return (await cache.keys()).map((r) => new URL(r.url).pathname).sort();
    });
    if (!cached.includes("/mobile") || !cached.includes("/mobile/app.js") || !cached.includes("/mobile/xterm.js")) {
      throw new Error(`cached: ${cached}`);
    }
    if (cached.some((p) => !p.startsWith("/mobile"))) throw new Error(`an API answer was cached: ${cached}`);
    // Chromium never offers to install from an incognito-like context: ask a real profile.
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), "tuic-mobile-profile-"));
    const real = await chromium.launchPersistentContext(profile, { executablePath: "/usr/bin/chromium", headless: true,
      args: FLAGS, ...PHONE, httpCredentials: { username: USER, password: PASSWORD } });
    try {
      const installed = real.pages()[0] || (await real.newPage());
      await installed.goto(`${base}/mobile`);
      await installed.evaluate(() => navigator.serviceWorker.ready);
      const cdp = await real.newCDPSession(installed);
      const { installabilityErrors } = await cdp.send("Page.getInstallabilityErrors");
      if (installabilityErrors.length) throw new Error(JSON.stringify(installabilityErrors));
    } finally {
      await real.close();
      fs.rmSync(profile, { recursive: true, force: true });
    }
  });

  await upstreamChecks({ page, browser, check, api, mcp, until, context: { ...PHONE, httpCredentials: { username: USER, password: PASSWORD } },
    base, shots, DEADLINE_MS, ...upstreams });

  await check("a wrong password gets the browser's 401, and no session is shown", async () => {
    const wrong = await browser.newContext({ ...PHONE, httpCredentials: { username: USER, password: "wrong" } });
    const other = await wrong.newPage();
    const response = await other.goto(`${base}/mobile`);
    if (response.status() !== 401) throw new Error(`status ${response.status()}`);
    if (await other.getByText("phone-late").count()) throw new Error("a session name leaked");
    await wrong.close();
  });

  await check("through a tunnel to the Unix socket (as ssh -L forwards it) the page works without a password", async () => {
    // As ssh -L does: one socket connection per browser connection. Either side ending (the daemon
    // stopping later in this run included) ends both, never an unhandled error.
    const pairs = [];
    const tunnel = net.createServer((client) => {
      const upstream = net.connect(path.join(dir, "mcp.sock"));
      const end = () => { client.destroy(); upstream.destroy(); };
      client.on("error", end);
      upstream.on("error", end);
      client.pipe(upstream).pipe(client);
      pairs.push(end);
    });
    await new Promise((resolve) => tunnel.listen(0, "127.0.0.1", resolve));
    const plain = await browser.newContext(PHONE);
    const other = await plain.newPage();
    try {
      await other.goto(`http://127.0.0.1:${tunnel.address().port}/mobile`);
      await other.locator("#sessions").getByText("phone-late").waitFor({ timeout: DEADLINE_MS });
    } finally {
      await plain.close();
      tunnel.close();
      pairs.forEach((end) => end());
    }
  });

  await check("the daemon down: the cached shell says so, and the page recovers when it is back", async () => {
    await stopDaemon();
    await page.locator("#conn[data-state=offline]").waitFor({ timeout: DEADLINE_MS });
    await page.reload();
    await page.locator("#notice").getByText("not reachable").waitFor({ timeout: DEADLINE_MS });
    await page.screenshot({ path: path.join(shots, "mobile-offline.png") });
    await startDaemon();
    await create({ display_name: "phone-after-restart", shell: "/bin/sh", args: ["-c", "exec sleep 60"] });
    await page.locator("#sessions").getByText("phone-after-restart").waitFor({ timeout: DEADLINE_MS });
    await page.locator("#conn[data-state=live]").waitFor({ timeout: DEADLINE_MS });
  });

  await context.close();
}

// ---- helpers ----

/** One JSON-RPC call to /mcp over the Unix socket, as a local agent makes it. */
function mcp(method, params) {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
  return new Promise((resolve, reject) => {
    const request = http.request({ socketPath: path.join(dir, "mcp.sock"), path: "/mcp", method: "POST", headers: {
      "content-type": "application/json", accept: "application/json, text/event-stream",
      "content-length": Buffer.byteLength(body) } }, (response) => {
      let data = "";
      response.on("data", (chunk) => (data += chunk));
      response.on("end", () => {
        try {
          resolve(JSON.parse(data));
        } catch {
          reject(new Error(`/mcp answered ${response.statusCode}: ${data}`));
        }
      });
    });
    request.on("error", reject);
    request.end(body);
  });
}
