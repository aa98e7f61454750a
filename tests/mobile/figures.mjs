// /mobile's figures on a slow phone network: first paint and time to live output under Chromium's
// network throttling (CDP Network.emulateNetworkConditions), and the page's weight (xterm.js
// included) as transferred (gzipped by the daemon) and uncompressed.
// Usage: node tests/mobile/figures.mjs <tuicd binary> [runs=5] [kbps=400] [rtt_ms=400]
// Each run is a fresh browser context (empty cache, no service worker) opening a session's view
// directly (/mobile#/s/<id>) while the session prints a line every 100 ms.
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

const [tuicd, runsArg = "5", kbpsArg = "400", rttArg = "400"] = process.argv.slice(2);
if (!tuicd) throw new Error("usage: figures.mjs <tuicd binary> [runs] [kbps] [rtt_ms]");
const RUNS = Number(runsArg);
const KBPS = Number(kbpsArg);
const RTT_MS = Number(rttArg);
const FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync"];
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tuic-mobile-figures-"));
const port = await new Promise((resolve) => {
  const server = net.createServer().listen(0, "127.0.0.1", () => {
    const { port } = server.address();
    server.close(() => resolve(port));
  });
});
const base = `http://127.0.0.1:${port}`;
const auth = "Basic " + Buffer.from("phone:pw").toString("base64");
const hash = execFileSync(tuicd, ["hash-password", "--cost", "4"], { input: "pw" }).toString().trim();
fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify({ services: {
  server: { enabled: true, port, bind_address: "127.0.0.1" }, auth: { username: "phone", password_hash: hash } } }));
const daemon = spawn(tuicd, ["--config-dir", dir], { stdio: "ignore" });
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: FLAGS });
try {
  await ready();
  const created = await fetch(`${base}/sessions`, { method: "POST", headers: { authorization: auth,
    "content-type": "application/json", "x-requested-with": "tuic-figures" },
  body: JSON.stringify({ shell: "/bin/sh", args: ["-c", "i=0; while :; do i=$((i+1)); echo tick-$i; sleep 0.1; done"] }) });
  const { session_id: id } = await created.json();
  for (const [label, throttle] of [[`${KBPS} kbps, ${RTT_MS} ms RTT`, true], ["unthrottled loopback", false]]) {
    const rows = [];
    for (let run = 0; run < RUNS; run++) rows.push(await measure(id, throttle));
    const med = (key) => median(rows.map((r) => r[key]));
    console.log(`${label} (${RUNS} runs, medians): first paint ${med("paint").toFixed(0)} ms, ` +
      `first contentful paint ${med("fcp").toFixed(0)} ms, live output ${med("live").toFixed(0)} ms ` +
      `(range ${Math.min(...rows.map((r) => r.live)).toFixed(0)}-${Math.max(...rows.map((r) => r.live)).toFixed(0)}), ` +
      `shell transferred ${(rows[0].transferred / 1024).toFixed(1)} KB, uncompressed ${(rows[0].raw / 1024).toFixed(1)} KB`);
  }
} finally {
  await browser.close();
  daemon.kill("SIGTERM");
  fs.rmSync(dir, { recursive: true, force: true });
}

async function measure(id, throttle) {
  // The credentials as a browser sends them once it has them (preemptively): Playwright's
  // httpCredentials answers each 401 through request interception, which would add its own delay.
  const context = await browser.newContext({ ...PHONE, extraHTTPHeaders: { authorization: auth } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  if (throttle) {
    const bytesPerSecond = (KBPS * 1000) / 8;
    await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: RTT_MS,
      downloadThroughput: bytesPerSecond, uploadThroughput: bytesPerSecond });
  }
  const shell = new Map(); // requestId -> url, for the page's own files
  let transferred = 0;
  let raw = 0;
  cdp.on("Network.responseReceived", (e) => {
    if (new URL(e.response.url).pathname.startsWith("/mobile")) shell.set(e.requestId, e.response.url);
  });
  cdp.on("Network.dataReceived", (e) => shell.has(e.requestId) && (raw += e.dataLength));
  cdp.on("Network.loadingFinished", (e) => shell.has(e.requestId) && (transferred += e.encodedDataLength));
  // Live output: a tick the session writes after the page was asked for (the terminal first
  // replays the ring, then follows the session).
  const started = Date.now();
  const recent = await (await fetch(`${base}/sessions/${id}/output?format=raw&limit=64`, { headers: { authorization: auth } })).json();
  const ticks = recent.data.match(/tick-(\d+)/g) || ["tick-0"];
  const line = `tick-${Number(ticks[ticks.length - 1].slice(5)) + 1}`;
  await page.goto(`${base}/mobile#/s/${id}`);
  await page.waitForFunction((t) => {
    const term = window.__tuicTerm;
    if (!term) return false;
    const b = term.buffer.active;
    for (let y = Math.max(0, b.length - 200); y < b.length; y++) if (b.getLine(y).translateToString(true) === t) return true;
    return false;
  }, line, { timeout: 30_000 });
  const live = Date.now() - started;
  const paints = await page.evaluate(() => Object.fromEntries(performance.getEntriesByType("paint").map((p) => [p.name, p.startTime])));
  await context.close();
  return { paint: paints["first-paint"], fcp: paints["first-contentful-paint"], live, transferred, raw };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function ready() {
  const until = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/health`, { headers: { authorization: auth } })).ok) return;
    } catch {}
    if (Date.now() > until) throw new Error("tuicd did not start");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
