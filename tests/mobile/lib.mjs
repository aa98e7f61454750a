// What the /mobile browser tests share: a free TCP port, the daemon they start (TCP with Basic
// Auth), the REST calls they make as the phone's user, waits on conditions with a deadline, and
// the check recorder that prints `ok` / `FAIL` lines and the tally.

import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

export const DEADLINE_MS = 10_000;

/** A TCP port nothing listens on now. */
export function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The last lines of a log file. */
export function tail(file) {
  try {
    return fs.readFileSync(file, "utf8").split("\n").slice(-8).join("\n");
  } catch {
    return "(no log)";
  }
}

/** Polls `ok` until it answers true, or fails naming `what` after the deadline. */
export async function until(what, ok) {
  const deadline = Date.now() + DEADLINE_MS;
  for (let pause = 20; ; pause = Math.min(pause * 2, 200)) {
    if (await ok()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** Waits until the page's terminal (xterm.js's buffer: scrollback and screen) holds `text`. */
export async function waitBuffer(page, text) {
  try {
    await page.waitForFunction((t) => {
      const term = window.__tuicTerm;
      if (!term) return false;
      const b = term.buffer.active;
      let all = "";
      for (let y = 0; y < b.length; y++) all += b.getLine(y).translateToString(true) + "\n";
      return all.includes(t);
    }, text, { timeout: DEADLINE_MS });
  } catch {
    throw new Error(`the terminal never showed ${JSON.stringify(text)}`);
  }
}

/**
 * The test bed of one script: the daemon `tuicd` run on config dir `dir`, reached at `base` with
 * the Basic Auth header `auth`. Answers the functions the checks call.
 */
export function bed({ tuicd, dir, base, auth }) {
  let daemon = null;
  const results = [];
  const log = path.join(dir, "tuicd.log");

  async function api(method, route, body) {
    const headers = { authorization: auth, "x-requested-with": "tuic-mobile-test" };
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(base + route, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  }

  return {
    results,
    api,

    /** Creates a session in the bed's directory; answers its id. */
    async create(body) {
      return (await api("POST", "/sessions", { cwd: dir, ...body })).session_id;
    },

    /** Waits until the session's own output (read over the API, not the page) shows `text`. */
    async waitPty(id, text) {
      let last = "";
      try {
        await until(JSON.stringify(text), async () => (last = (await api("GET", `/sessions/${id}/output?format=text`)).data).includes(text));
      } catch {
        throw new Error(`the PTY never showed ${JSON.stringify(text)}:\n${last.slice(-400)}`);
      }
    },

    /** Runs one check; its body may answer a figure, printed after its time. */
    async check(name, body) {
      const started = Date.now();
      try {
        const figure = await body();
        results.push({ name, ok: true });
        console.log(`ok   ${name} (${Date.now() - started} ms)${figure ? `: ${figure}` : ""}`);
      } catch (error) {
        results.push({ name, ok: false });
        console.log(`FAIL ${name}: ${error.message.split("\n").slice(0, 12).join("\n  ")}`);
        if (daemon) console.log(`  daemon log tail:\n${tail(log)}`);
      }
    },

    /** Prints the tally; answers the exit code. */
    tally() {
      const failed = results.filter((r) => !r.ok).length;
      console.log(`${results.length - failed} passed, ${failed} failed`);
      return failed ? 1 : 0;
    },

    async startDaemon() {
      const out = fs.openSync(log, "a");
      daemon = spawn(tuicd, ["--config-dir", dir], { stdio: ["ignore", "ignore", out] });
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          if ((await fetch(`${base}/health`, { headers: { authorization: auth } })).ok) return;
        } catch {}
        if (daemon.exitCode !== null || Date.now() > deadline) throw new Error(`tuicd did not start:\n${tail(log)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },

    /** SIGTERM, then waits for the exit, so a restart gets the same port back. */
    async stopDaemon() {
      if (!daemon) return;
      const stopping = daemon;
      daemon = null;
      if (stopping.exitCode !== null) return;
      const exited = new Promise((resolve) => stopping.once("exit", resolve));
      stopping.kill("SIGTERM");
      await exited;
    },
  };
}
