// Answers one pending ACP permission request from /mobile, the way a person on a phone would:
// headless Chromium (playwright-core, /usr/bin/chromium) at a phone viewport opens the daemon's
// /mobile page over its TCP listener with Basic Auth, goes to the conversation of the connection
// and session (`#/acp/<cid>/<sid>`), waits for the question with the given request id, and taps
// the option button whose name is given (the caller picks the allow_once option's name from GET
// .../interactions: the page shows names, the ids differ per agent). Then waits until the page
// shows the question answered. Used by tests/acp/run.py (check mobile_permission).
//
// Usage: node tests/acp/mobile_permission.mjs <base url> <user> <password> <connection id>
//          <session id> <request id> <option name> [<screenshot dir>]
// Prints what it did; exits 0 when the question shows as answered with that option, non-zero
// with the reason otherwise. Every wait has a deadline, and the whole run is bounded.
import fs from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";

const [base, user, password, cid, sid, rid, optionName, shots] = process.argv.slice(2);
if (!optionName) {
  console.error("usage: mobile_permission.mjs <base url> <user> <password> <cid> <sid> <request id> <option name> [<shots>]");
  process.exit(2);
}
const STEP_MS = 20_000; // one wait on the page
const TOTAL_MS = 90_000; // the whole run, browser start included
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync"];

const overall = setTimeout(() => {
  console.error(`mobile_permission: gave up after ${TOTAL_MS / 1000} s (${step})`);
  process.exit(3);
}, TOTAL_MS);
overall.unref();

let step = "starting chromium";
let browser = null;
let page = null;
let code = 0;
try {
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: FLAGS, timeout: STEP_MS });
  const context = await browser.newContext({ ...PHONE, httpCredentials: { username: user, password } });
  page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("dialog", (dialog) => dialog.dismiss().catch(() => {}));

  step = "opening /mobile";
  const response = await page.goto(`${base}/mobile#/acp/${encodeURIComponent(cid)}/${encodeURIComponent(sid)}`,
    { timeout: STEP_MS });
  if (!response || !response.ok()) throw new Error(`GET /mobile: ${response ? response.status() : "no response"}`);

  step = "the conversation";
  await page.locator("#acp-chat").waitFor({ timeout: STEP_MS });

  step = `the question ${rid}`;
  const question = page.locator(`#acp-log .acp-item.ask[data-request="${rid}"]:not(.settled)`);
  await question.waitFor({ timeout: STEP_MS });
  const names = await question.locator(".acp-actions button").allTextContents();
  const button = question.getByRole("button", { name: optionName, exact: true });
  if ((await button.count()) !== 1) {
    throw new Error(`${await button.count()} buttons named ${JSON.stringify(optionName)}; the question shows ${JSON.stringify(names)}`);
  }
  if (shots) {
    fs.mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: path.join(shots, "question.png"), timeout: STEP_MS });
  }

  step = `tapping ${JSON.stringify(optionName)}`;
  await button.tap({ timeout: STEP_MS });

  step = "the question shown as answered";
  const settled = page.locator(`#acp-log .acp-item.ask.settled[data-request="${rid}"]`);
  await settled.waitFor({ timeout: STEP_MS });
  const answer = (await settled.locator(".answer").textContent({ timeout: STEP_MS })) || "";
  if (answer !== `answered: ${optionName}`) throw new Error(`the page says ${JSON.stringify(answer)}, want "answered: ${optionName}"`);
  if (shots) await page.screenshot({ path: path.join(shots, "answered.png"), timeout: STEP_MS });
  if (errors.length) throw new Error(`page errors: ${errors.join(" | ").slice(0, 400)}`);
  console.log(`tapped ${JSON.stringify(optionName)} of ${JSON.stringify(names)}; the page says ${JSON.stringify(answer)}`);
} catch (error) {
  code = 1;
  console.error(`mobile_permission: ${step}: ${String(error.message || error).split("\n")[0]}`);
  if (page && shots) {
    try {
      fs.mkdirSync(shots, { recursive: true });
      await page.screenshot({ path: path.join(shots, "failure.png"), timeout: 5_000 });
    } catch {}
  }
} finally {
  if (browser) await Promise.race([browser.close(), new Promise((resolve) => setTimeout(resolve, 10_000))]);
}
process.exit(code);
