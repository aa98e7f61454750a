// The browser half of the DNS-rebinding attack (issue 29), driven by rebinding.py.
// Usage: node rebinding.mjs <port>
// Headless Chromium resolves evil.test to 127.0.0.1 (--host-resolver-rules). It opens
// http://evil.test:<port>/, served first by the attacker's server; the page polls its own origin
// until the answers stop coming from the attacker (the driver has swapped the attacker's server
// for the ssh -L stand-in: the rebind), then runs its attacks on its own and leaves the results in
// window.results. Afterwards, as a control, a page at http://localhost:<port>/ reaches the daemon
// through the same tunnel. Prints one JSON object per line: {"phase": ...}.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
// playwright-core lives in tests/node_modules (tests/mobile/setup.sh, tests/interop/setup.sh).
import { chromium } from "playwright-core";

const port = Number(process.argv[2]);
if (!port) throw new Error("usage: node rebinding.mjs <port>");
const DEADLINE_MS = 30_000;
const say = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "tuic-sec-chromium-"));
const args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", `--host-resolver-rules=MAP evil.test 127.0.0.1`];
const context = await chromium.launchPersistentContext(profile, { executablePath: "/usr/bin/chromium", headless: true, args });
let code = 0;
try {
  const page = context.pages()[0] || (await context.newPage());
  page.on("console", (m) => say({ phase: "console", text: m.text() }));
  const response = await page.goto(`http://evil.test:${port}/`, { timeout: DEADLINE_MS });
  const served = await response.text();
  if (!served.includes("evil-page")) throw new Error(`the attacker's page did not load: ${served.slice(0, 200)}`);
  await page.waitForFunction(() => window.phase === "polling", null, { timeout: DEADLINE_MS });
  say({ phase: "loaded", origin: await page.evaluate(() => location.origin) });
  // The driver swaps the servers now; the page notices by itself and attacks.
  await page.waitForFunction(() => window.results, null, { timeout: DEADLINE_MS, polling: 100 });
  say({ phase: "attacked", results: await page.evaluate(() => window.results) });

  // Control: the same browser through the same tunnel under a loopback name is let in.
  const own = await context.newPage();
  const ownResponse = await own.goto(`http://localhost:${port}/health`, { timeout: DEADLINE_MS });
  const listed = await own.evaluate(async () => {
    const r = await fetch("/sessions", { cache: "no-store" });
    return { status: r.status, body: (await r.text()).slice(0, 300) };
  });
  say({ phase: "control", health: ownResponse.status(), sessions: listed });
} catch (e) {
  say({ phase: "error", error: String(e && e.stack || e) });
  code = 1;
} finally {
  await context.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
process.exit(code);
