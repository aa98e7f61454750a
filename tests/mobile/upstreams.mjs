// The /mobile checks of upstream MCP servers that need a person to sign in (OAuth), against
// tests/mobile/oauth_upstream.py: `plain` (its authorization server on its own origin), `offsite`
// (on another host), `evil` (a javascript: authorization endpoint). mobile.mjs runs them.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";

/** Starts the upstreams and writes them into `dir`'s mcp-upstreams.json, before the daemon starts. */
export async function startUpstreams(dir) {
  const server = spawn("python3", [path.join(path.dirname(new URL(import.meta.url).pathname), "oauth_upstream.py")],
    { stdio: ["pipe", "pipe", "inherit"] });
  const first = await readline.createInterface({ input: server.stdout })[Symbol.asyncIterator]().next();
  if (first.done) throw new Error("oauth_upstream.py did not start");
  const ports = JSON.parse(first.value);
  const asBase = `http://127.0.0.1:${ports.port}`;
  fs.writeFileSync(path.join(dir, "mcp-upstreams.json"), JSON.stringify({ servers: ["plain", "offsite", "evil"].map((name) => ({
    id: `mobile-${name}`, name, transport: { type: "http", url: `${asBase}/mcp/${name}` },
    auth: { type: "oauth2", client_id: "tuic-mobile-test", scopes: [] } })) }));
  // Closing its stdin ends it.
  return { asBase, offsiteOrigin: `http://127.0.0.2:${ports.port2}`, stop: () => server.stdin.end() };
}

/** The checks, on `page` (at /mobile) with the suite's helpers; `context` is the phone's browser context options. */
export async function upstreamChecks({ page, browser, check, api, mcp, until, context, base, shots, DEADLINE_MS, asBase, offsiteOrigin }) {
  const upstream = (name, status) => page.locator(`#upstreams [data-upstream="${name}"]${status ? `[data-status="${status}"]` : ""}`);
  const waitStatus = (name, status) => upstream(name, status).waitFor({ timeout: DEADLINE_MS });

  await check("an upstream that needs authorization is listed; Authorize gives the sign-in link, following it makes it ready", async () => {
    await page.goto(`${base}/mobile`);
    await waitStatus("plain", "needs_auth");
    await page.screenshot({ path: path.join(shots, "mobile-upstreams.png") });
    await upstream("plain").getByRole("button", { name: "Authorize" }).tap();
    const link = upstream("plain", "authenticating").locator("a.signin");
    await link.waitFor({ timeout: DEADLINE_MS });
    const href = await link.getAttribute("href");
    if (!href.startsWith(`${asBase}/as/plain/authorize?`)) throw new Error(`link ${href}`);
    if ((await link.getAttribute("target")) !== "_blank" || !(await link.getAttribute("rel")).includes("noopener")) {
      throw new Error("the link does not open apart from the page");
    }
    if (!(await link.textContent()).includes(asBase)) throw new Error("the link does not name the authorization server");
    await upstream("plain").getByText("Awaiting authorization…").waitFor({ timeout: DEADLINE_MS });
    await page.screenshot({ path: path.join(shots, "mobile-authorize.png") });
    // The scripted browser step: the AS approves at once and redirects to the daemon's callback.
    const callback = await fetch(href);
    if (!callback.ok) throw new Error(`the callback answered ${callback.status}: ${await callback.text()}`);
    await waitStatus("plain", "ready");
    const call = await mcp("tools/call", { name: "plain__hello", arguments: {} });
    if (call.result?.content?.[0]?.text !== "hello from plain") throw new Error(`the call got ${JSON.stringify(call)}`);
  });

  await check("an off-domain authorization server is named before the person goes on; Cancel returns it to needs_auth", async () => {
    await upstream("offsite").getByRole("button", { name: "Authorize" }).tap();
    await upstream("offsite").getByText(`another domain than this server: ${offsiteOrigin}`).waitFor({ timeout: DEADLINE_MS });
    if (!(await upstream("offsite").locator("a.signin").textContent()).includes(offsiteOrigin)) throw new Error("origin not named");
    await page.screenshot({ path: path.join(shots, "mobile-authorize-offsite.png") });
    await upstream("offsite").getByRole("button", { name: "Cancel" }).tap();
    await waitStatus("offsite", "needs_auth");
    if (await upstream("offsite").locator("a").count()) throw new Error("the link outlived the cancel");
    await until("offsite needs_auth in the API", async () => (await api("GET", "/mcp/upstream-status")).upstreams.find((u) => u.name === "offsite")?.status === "needs_auth");
  });

  await check("a flow started elsewhere (mcp-oauth-start) shows the link; the address it ended on, pasted, finishes it", async () => {
    const started = await api("POST", "/mcp/upstreams/offsite/authorize");
    const link = upstream("offsite", "authenticating").locator("a.signin");
    await link.waitFor({ timeout: DEADLINE_MS });
    if (new URL(await link.getAttribute("href")).href !== new URL(started.authorization_url).href) throw new Error("another link");
    await upstream("offsite").getByText(`another domain than this server: ${offsiteOrigin}`).waitFor({ timeout: DEADLINE_MS });
    // A phone cannot load the daemon's loopback callback: its browser stops at that address.
    const redirect = await fetch(started.authorization_url, { redirect: "manual" });
    const ended = redirect.headers.get("location");
    if (!ended || !ended.startsWith("http://127.0.0.1:")) throw new Error(`the AS answered ${redirect.status} ${ended}`);
    await upstream("offsite").locator("input").fill(ended);
    await upstream("offsite").getByRole("button", { name: "Finish" }).tap();
    await waitStatus("offsite", "ready");
  });

  await check("the daemon's consent (kind oauth_consent) names the authorization server's origin; Confirm gives the link", async () => {
    // A refused token: the next call finds the upstream needs a new authorization, and asks.
    await fetch(`${asBase}/control/revoke`, { method: "POST" });
    await mcp("tools/call", { name: "plain__hello", arguments: {} });
    await page.locator("#confirm").getByText(`sign in at ${asBase}`).waitFor({ timeout: DEADLINE_MS });
    await page.screenshot({ path: path.join(shots, "mobile-oauth-consent.png") });
    await page.locator("#confirm-yes").tap();
    const link = upstream("plain", "authenticating").locator("a.signin");
    await link.waitFor({ timeout: DEADLINE_MS });
    if (!(await fetch(await link.getAttribute("href"))).ok) throw new Error("the callback refused the redirect");
    await waitStatus("plain", "ready");
  });

  await check("a non-http sign-in address is refused with a message, from the button and from the event", async () => {
    const refused = "Not opened: the sign-in address is not http(s): javascript:";
    await upstream("evil").getByRole("button", { name: "Authorize" }).tap();
    await upstream("evil", "authenticating").getByText(refused).waitFor({ timeout: DEADLINE_MS });
    if (await page.locator("#upstreams a").count()) throw new Error("a link was offered");
    await upstream("evil").getByRole("button", { name: "Cancel" }).tap();
    await waitStatus("evil", "needs_auth");
    await api("POST", "/mcp/upstreams/evil/authorize");
    await upstream("evil", "authenticating").getByText(refused).waitFor({ timeout: DEADLINE_MS });
    if (await page.locator("#upstreams a").count()) throw new Error("a link was offered");
    await api("POST", "/mcp/upstreams/evil/authorize/cancel");
    await waitStatus("evil", "needs_auth");
  });

  await check("a hostile upstream name and error from the server are shown as text", async () => {
    // The daemon refuses such names today; the page must not count on it. No service worker here,
    // so the test can stand in for the status answer.
    const hostile = `<img src=x onerror="window.pwned=1">`;
    const other = await browser.newContext({ ...context, serviceWorkers: "block" });
    try {
      const shown = await other.newPage();
      await shown.route("**/mcp/upstream-status", (route) => route.fulfill({ json: { upstreams: [{ name: hostile,
        status: "needs_auth", tool_count: 0, tools: [], last_error: "<b id=injected>boom</b>" }] } }));
      await shown.goto(`${base}/mobile`);
      await shown.locator("#upstreams").getByText(hostile).waitFor({ timeout: DEADLINE_MS });
      await shown.locator("#upstreams").getByText("<b id=injected>boom</b>").waitFor({ timeout: DEADLINE_MS });
      if (await shown.locator("#upstreams img, #injected").count()) throw new Error("markup from the server was parsed");
      if (await shown.evaluate(() => window.pwned)) throw new Error("the hostile handler ran");
    } finally {
      await other.close();
    }
  });
}
