// ACP agents on /mobile in headless Chromium at a phone viewport: the real daemon (TCP + Basic Auth
// on loopback) driving the scripted agent tuicd/tests/fixtures/acp/fake_acp_agent.py, the page
// starting the connection, opening a session, and following its turns over the stream WebSocket.
// Usage: node tests/mobile/acp.mjs <tuicd binary> <screenshot dir>
// Prints one line per check and "N passed, M failed"; exits non-zero on any failure.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

import { DEADLINE_MS, bed, freePort, until } from "./lib.mjs";

const [tuicd, shots] = process.argv.slice(2);
if (!tuicd || !shots) throw new Error("usage: acp.mjs <tuicd binary> <screenshot dir>");
fs.mkdirSync(shots, { recursive: true });

const USER = "phone";
const PASSWORD = "correct horse";
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync"];
const AGENT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../tuicd/tests/fixtures/acp/fake_acp_agent.py");

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tuic-mobile-acp-"));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const auth = "Basic " + Buffer.from(`${USER}:${PASSWORD}`).toString("base64");
const hash = execFileSync(tuicd, ["hash-password", "--cost", "4"], { input: PASSWORD }).toString().trim();

function writeConfig(agent) {
  fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify({
    services: { server: { enabled: true, port, bind_address: "127.0.0.1" },
      auth: { username: USER, password_hash: hash, auth_rate_limit_max: 100 } },
    ...(agent ? { ego_executable: "python3", ego_args: [AGENT] } : {}) }));
}

const { api, check, tally, startDaemon, stopDaemon } = bed({ tuicd, dir, base, auth });
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
  writeConfig(false);
  await startDaemon();
  const context = await browser.newContext({ ...PHONE, httpCredentials: { username: USER, password: PASSWORD } });
  const page = await context.newPage();
  const sockets = [];
  page.on("websocket", (ws) => sockets.push(ws.url()));
  const dialogs = [];
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    dialog.dismiss().catch(() => {});
  });
  const log = page.locator("#acp-log");
  const agentSays = (text) => log.locator(".acp-item.agent").filter({ hasText: text });
  const ends = log.locator(".acp-item.end");
  let cid = null;
  let sid = null;

  const prompt = async (text) => {
    await page.locator("#acp-text").fill(text);
    await page.locator("#acp-send-button").tap();
  };
  /** Waits for the turn end after the `before` shown so far, returning its stop reason. */
  const ended = async (before) => {
    await ends.nth(before).waitFor({ timeout: DEADLINE_MS });
    return ends.nth(before).getAttribute("data-stop");
  };
  /** Sends `text` and waits for its turn's end, returning the stop reason shown. */
  const turn = async (text) => {
    const before = await ends.count();
    await prompt(text);
    return ended(before);
  };

  await check("no agent configured: Start shows the 409 naming ego_executable", async () => {
    await page.goto(`${base}/mobile`);
    await page.locator("#nav").getByText("Agents (ACP)").tap();
    await page.locator("#acp-view").waitFor({ timeout: DEADLINE_MS });
    await page.locator("#acp-start").tap();
    await page.locator("#acp-error").getByText("ego_executable").waitFor({ timeout: DEADLINE_MS });
    await stopDaemon();
    writeConfig(true);
    await startDaemon();
  });

  await check("start a connection, New session, \"hello\" → \"Received: hello\"", async () => {
    await page.reload();
    await page.locator("#acp-start").tap();
    const card = page.locator("#acp-connections li.acp-conn[data-state=ready]");
    await card.waitFor({ timeout: DEADLINE_MS });
    cid = await card.getAttribute("data-connection");
    if (!(await card.textContent()).includes("gen 1")) throw new Error("no generation shown");
    await card.getByText("New session").tap();
    await page.locator("#acp-chat").waitFor({ timeout: DEADLINE_MS });
    sid = decodeURIComponent(new URL(page.url()).hash.split("/")[3]);
    if (!sid) throw new Error(`no session in ${page.url()}`);
    const stop = await turn("hello");
    if (stop !== "end_turn") throw new Error(`stop ${stop}`);
    await log.locator(".acp-item.user").getByText("hello", { exact: true }).waitFor({ timeout: DEADLINE_MS });
    if ((await agentSays("Received: hello").textContent()) !== "Received: hello") throw new Error("the agent text is not joined");
    await page.screenshot({ path: path.join(shots, "acp-hello.png") });
    // The connection list shows the session.
    await page.locator("#back").tap();
    await page.locator(`#acp-connections li[data-connection="${cid}"] button[data-session="${sid}"]`).waitFor({ timeout: DEADLINE_MS });
    await page.screenshot({ path: path.join(shots, "acp-list.png") });
    await page.locator(`#acp-connections button[data-session="${sid}"]`).tap();
    await agentSays("Received: hello").waitFor({ timeout: DEADLINE_MS });
  });

  await check("\"ask\": the permission question in place, Allow → \"permission: selected allow\", none pending", async () => {
    const before = await ends.count();
    await prompt("ask");
    const question = log.locator(".acp-item.ask:not(.settled)");
    await question.getByRole("button", { name: "Reject" }).waitFor({ timeout: DEADLINE_MS });
    await page.screenshot({ path: path.join(shots, "acp-permission.png") });
    await question.getByRole("button", { name: "Allow" }).tap();
    await agentSays("permission: selected allow").waitFor({ timeout: DEADLINE_MS });
    await log.locator(".acp-item.ask.settled").getByText("answered: Allow").waitFor({ timeout: DEADLINE_MS });
    const pending = (await api("GET", `/acp/connections/${cid}/interactions`)).interactions;
    if (pending.length) throw new Error(`still pending: ${JSON.stringify(pending)}`);
    if ((await ended(before)) !== "end_turn") throw new Error("the turn did not end");
  });

  await check("a permission answered elsewhere leaves the page", async () => {
    const before = await ends.count();
    await prompt("ask");
    const question = log.locator(".acp-item.ask:not(.settled)");
    await question.getByRole("button", { name: "Allow" }).waitFor({ timeout: DEADLINE_MS });
    let pending = [];
    await until("the interaction to be listed", async () =>
      (pending = (await api("GET", `/acp/connections/${cid}/interactions`)).interactions).length === 1);
    await api("POST", `/acp/connections/${cid}/permissions/${pending[0].request_id}/response`, { option_id: "reject" });
    await question.waitFor({ state: "detached", timeout: DEADLINE_MS });
    await agentSays("permission: selected reject").waitFor({ timeout: DEADLINE_MS });
    if ((await ended(before)) !== "end_turn") throw new Error("the turn did not end");
  });

  await check("a question asked while another screen shows: the banner leads to it", async () => {
    // The conversation is rebuilt from the journal on return: the same turns, so the same count.
    const before = await ends.count();
    await page.locator("#back").tap();
    await page.locator("#nav").getByText("Terminals").tap();
    await page.locator("#list-view").waitFor({ timeout: DEADLINE_MS });
    await api("POST", `/acp/connections/${cid}/sessions/${sid}/prompt`, { prompt: "ask" });
    await page.locator("#acp-question").getByText("Run echo hi").waitFor({ timeout: DEADLINE_MS });
    await page.screenshot({ path: path.join(shots, "acp-banner.png") });
    await page.locator("#acp-question").tap();
    const question = log.locator(".acp-item.ask:not(.settled)");
    await question.getByRole("button", { name: "Allow" }).tap();
    await agentSays("permission: selected allow").nth(1).waitFor({ timeout: DEADLINE_MS });
    await page.locator("#acp-question").waitFor({ state: "hidden", timeout: DEADLINE_MS });
    // In its place: right after the prompt that raised it, not where the page happened to be.
    const before_ = await page.evaluate(() => {
      const asks = document.querySelectorAll("#acp-log .acp-item.ask");
      const prev = asks[asks.length - 1].previousElementSibling;
      return `${prev.dataset.kind}:${prev.textContent}`;
    });
    if (before_ !== "user:ask") throw new Error(`the question follows ${before_}`);
    if ((await ended(before)) !== "end_turn") throw new Error("the turn did not end");
  });

  await check("\"elicit\": a form, the name filled, Accept → the agent says it", async () => {
    const before = await ends.count();
    await prompt("elicit");
    const field = log.locator(".acp-item.ask:not(.settled) form input[name=name]");
    await field.waitFor({ timeout: DEADLINE_MS });
    await page.screenshot({ path: path.join(shots, "acp-elicitation.png") });
    await field.fill("Ada Lovelace");
    await log.locator(".acp-item.ask:not(.settled)").getByRole("button", { name: "Accept" }).tap();
    const said = agentSays("elicitation:");
    await said.waitFor({ timeout: DEADLINE_MS });
    const text = await said.textContent();
    if (!text.includes('"name": "Ada Lovelace"') || !text.includes('"action": "accept"')) throw new Error(text);
    if ((await ended(before)) !== "end_turn") throw new Error("the turn did not end");
  });

  await check("\"slow 300\": a second prompt gets the 409, Cancel ends the turn as cancelled", async () => {
    const before = await ends.count();
    await prompt("slow 300");
    await page.locator("#acp-cancel").waitFor({ timeout: DEADLINE_MS });
    await agentSays("[5]").waitFor({ timeout: DEADLINE_MS });
    await prompt("meanwhile");
    await page.locator("#notice").getByText("a turn is running").waitFor({ timeout: DEADLINE_MS });
    await page.locator("#acp-cancel").tap();
    await ends.nth(before).waitFor({ timeout: DEADLINE_MS });
    const stop = await ends.nth(before).getAttribute("data-stop");
    if (stop !== "cancelled") throw new Error(`stop ${stop}`);
    await page.locator("#acp-cancel").waitFor({ state: "hidden", timeout: DEADLINE_MS });
    const text = await agentSays("[5]").last().textContent();
    if (text.includes("[299]")) throw new Error("the turn ran to its end");
  });

  await check("the stream dropped mid-turn resumes after the last frame: [0]..[199] whole, no duplicate", async () => {
    const before = await ends.count();
    const opens = await page.evaluate(() => acp.view.opens);
    const urls = sockets.length;
    await prompt("slow 200");
    await page.waitForFunction(() => {
      const items = document.querySelectorAll("#acp-log .acp-item.agent");
      return items.length && items[items.length - 1].textContent.includes("[20]");
    }, null, { timeout: DEADLINE_MS });
    await page.evaluate(() => acpDropStream());
    await page.waitForFunction((n) => acp.view.opens > n, opens, { timeout: DEADLINE_MS });
    await ends.nth(before).waitFor({ timeout: DEADLINE_MS });
    const stop = await ends.nth(before).getAttribute("data-stop");
    if (stop !== "end_turn") throw new Error(`stop ${stop}`);
    const got = await log.locator(".acp-item.agent").last().textContent();
    const want = Array.from({ length: 200 }, (_, i) => `[${i}]`).join("");
    if (got !== want) throw new Error(`got ${got.length} chars: ${got.slice(0, 80)}…${got.slice(-80)}`);
    const resumed = sockets.slice(urls);
    if (!resumed.some((u) => /[?&]after=\d+/.test(u))) throw new Error(`no resume with after=: ${resumed}`);
  });

  await check("agent text with markup is shown as text, no element made", async () => {
    const evil = "<img src=x onerror=alert(1)>";
    await turn(evil);
    await agentSays(`Received: ${evil}`).waitFor({ timeout: DEADLINE_MS });
    await log.locator(".acp-item.user").getByText(evil, { exact: true }).waitFor({ timeout: DEADLINE_MS });
    const images = await page.locator("img").count();
    if (images) throw new Error(`${images} img elements`);
    if (dialogs.length) throw new Error(`a dialog opened: ${dialogs}`);
    await page.screenshot({ path: path.join(shots, "acp-text.png") });
  });

  await check("offline while the journal rolls past the page: the gap is said, Reload replays the session", async () => {
    await context.setOffline(true);
    await page.evaluate(() => acpDropStream());
    await page.waitForFunction(() => acp.view.socket === null, null, { timeout: DEADLINE_MS });
    // More frames than the journal keeps (8192), while the page cannot reach the daemon.
    await api("POST", `/acp/connections/${cid}/sessions/${sid}/prompt`, { prompt: "fast 9000" });
    await until("the fast turn to end", async () =>
      !(await api("GET", `/acp/connections/${cid}`)).sessions.find((s) => s.session_id === sid).turn_running);
    await context.setOffline(false);
    await page.locator("#acp-gap").getByText("History is incomplete").waitFor({ timeout: DEADLINE_MS });
    await page.screenshot({ path: path.join(shots, "acp-gap.png") });
    await page.locator("#acp-gap").getByRole("button", { name: "Reload" }).tap();
    await page.locator("#acp-gap").waitFor({ state: "hidden", timeout: DEADLINE_MS });
    // session/load replays the earlier prompts and answers.
    await agentSays("Received: hello").waitFor({ timeout: DEADLINE_MS });
    await log.locator(".acp-item.user").getByText("elicit", { exact: true }).waitFor({ timeout: DEADLINE_MS });
    if (await log.locator(".acp-item.agent").filter({ hasText: "[8999]" }).count()) throw new Error("dropped frames shown");
    if ((await turn("after the gap")) !== "end_turn") throw new Error("the next turn did not end");
    await agentSays("Received: after the gap").waitFor({ timeout: DEADLINE_MS });
  });

  await check("thoughts, tool calls with a diff, and plans render as text (frames fed to the renderer)", async () => {
    // The scripted agent sends none of these: the frames are fed as the stream would deliver them.
    await page.evaluate((sid) => {
      const view = acp.view;
      let seq = view.seq;
      const update = (u) => acpFrame(view, { seq: ++seq, generation: view.generation, kind: "agent",
        message: { jsonrpc: "2.0", method: "session/update", params: { sessionId: sid, update: u } } });
      update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "thinking <b>hard</b>" } });
      update({ sessionUpdate: "plan", entries: [{ content: "step one", status: "in_progress", priority: "high" },
        { content: "step two", status: "pending", priority: "low" }] });
      update({ sessionUpdate: "tool_call", toolCallId: "t1", title: "Edit main.rs", kind: "edit", status: "pending",
        content: [{ type: "diff", path: "/x/main.rs", oldText: "a\nb\nc", newText: "a\nB <i>x</i>\nc" }] });
      update({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed" });
      update({ sessionUpdate: "plan", entries: [{ content: "step one", status: "completed", priority: "high" },
        { content: "step two", status: "in_progress", priority: "low" }] });
      update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: " still" } });
    }, sid);
    await log.locator(".acp-item.thought").filter({ hasText: "thinking <b>hard</b>" }).waitFor({ timeout: DEADLINE_MS });
    const tool = log.locator(".acp-item.tool[data-tool=t1]");
    if ((await tool.getAttribute("data-status")) !== "completed") throw new Error("the tool call's status was not updated");
    for (const text of ["Edit main.rs", "edit", "completed", "/x/main.rs"]) await tool.getByText(text).first().waitFor({ timeout: DEADLINE_MS });
    if ((await tool.locator(".diff .del").textContent()) !== "- b") throw new Error("the removed line");
    if ((await tool.locator(".diff .add").textContent()) !== "+ B <i>x</i>") throw new Error("the added line");
    const plans = log.locator(".acp-item.plan");
    if ((await plans.count()) !== 1) throw new Error(`${await plans.count()} plans: an update should redraw it`);
    if ((await plans.locator("li[data-status=completed]").textContent()) !== "● step one") throw new Error("the plan entry");
    if (await log.locator("b:not(.acp-item.plan b, .acp-item.ask b), i").count()) throw new Error("agent markup became elements");
    await page.screenshot({ path: path.join(shots, "acp-tools.png") });
  });

  await check("the DOM stays bounded: never more items than the cap", async () => {
    const cap = await page.evaluate(() => ACP_MAX_ITEMS);
    // Many short turns' worth of items, fed as frames, as the stream would.
    const count = await page.evaluate((n) => {
      const view = acp.view;
      let seq = view.seq;
      for (let i = 0; i < n; i++) {
        acpFrame(view, { seq: ++seq, generation: view.generation, kind: "invalid", reason: "not JSON", bytes: i });
      }
      return document.querySelectorAll("#acp-log .acp-item").length;
    }, cap + 500);
    if (count > cap) throw new Error(`${count} items`);
  });

  await context.close();
}

// ---- helpers (as in mobile.mjs) ----
