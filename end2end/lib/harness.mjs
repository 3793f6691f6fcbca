// Shared by the browser tests: waits for the server that `cargo leptos end-to-end` started,
// creates apps (and registers their origins) through the CLI, serves a partner's host page from another site, starts
// the system's Chromium (never a downloaded browser), and checks that the service never sets a cookie.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, "..", "..");
export const artifacts = path.join(root, "end2end", "artifacts");
export const baseUrl = process.env.SWITCHBOARD_URL ?? "http://127.0.0.1:3000";

export async function waitForServer(timeoutMs = 180_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await fetch(`${baseUrl}/readyz`);
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server at ${baseUrl} did not become ready`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/// The server binary under test: `SWITCHBOARD_BIN`, else the release build (what ships), else
/// the debug build.
export const serverBin =
  process.env.SWITCHBOARD_BIN ??
  [path.join(root, "target", "release", "switchboard"), path.join(root, "target", "debug", "switchboard")].find(
    (p) => existsSync(p),
  );

/// The server's own binary, run on the same DATABASE_URL as the server under test.
function switchboard(args) {
  return execFileSync(serverBin, args, { cwd: root, encoding: "utf8" });
}

/// Calls the API with a token; asserts the call succeeded and returns its JSON body. A test
/// shares the account's rate limit with the flow it drives, so a 429 waits out its
/// Retry-After and tries again, as a partner's client would.
export async function api(method, url, token, body) {
  let r;
  for (let attempt = 0; ; attempt++) {
    r = await fetch(`${baseUrl}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (r.status !== 429 || attempt === 4) break;
    const wait = Math.max(1, Number(r.headers.get("retry-after")) || 1);
    await new Promise((done) => setTimeout(done, wait * 1000));
  }
  const json = await r.json();
  assert.ok(r.ok, `${method} ${url}: ${JSON.stringify(json)}`);
  return json;
}

/// Creates an app with the server's own CLI; returns {app_uuid, token}. `environment` is
/// "sandbox" (the default) or "live".
export function createApp(name, environment = "sandbox") {
  const out = switchboard(["apps", "create", "--name", name, "--environment", environment, "--json"]);
  return JSON.parse(out.trim().split("\n").pop());
}

/// Registers the origins that may embed the app's flows (`apps set-origins`).
export function setOrigins(appUuid, origins) {
  const args = ["apps", "set-origins", "--app", appUuid];
  for (const origin of origins) args.push("--origin", origin);
  if (origins.length === 0) args.push("--clear");
  switchboard(args);
}

/// Gives a live app what its readiness checklist asks for (brand, support contacts, payment
/// keys, the origins given), so that its enrollment flows open (`apps readiness` passes).
/// `keys: false` keeps the payment keys the app has (a test with keys of its own at the
/// processor's stand-in).
export function makeLiveReady(appUuid, origins, { keys = true } = {}) {
  switchboard(["apps", "set-branding", "--app", appUuid, "--primary-color", "#1b4d3e", "--logo-url", "https://partner.example/logo.png"]);
  switchboard(["apps", "set-support", "--app", appUuid, "--email", "help@partner.example", "--phone", "512 555 0100"]);
  if (keys) {
    switchboard(["apps", "set-payment-keys", "--app", appUuid, "--publishable-key", "pk_test_readyPUBLIC0123", "--secret-key", "sk_test_readySECRET0123", "--webhook-secret", "whsec_readySigningSecret0123"]);
  }
  setOrigins(appUuid, origins);
  switchboard(["apps", "readiness", "--app", appUuid]);
}

/// Answers for the partner's own site in `context`, where `makeLiveReady` points the app's
/// logo (https://partner.example/logo.png), so that its flows load the logo as a partner's
/// would.
export async function servePartnerSite(context) {
  const logo = readFileSync(path.join(root, "server/tests/api/fixtures/logo.png"));
  await context.route("https://partner.example/**", (route) =>
    route.fulfill({ status: 200, contentType: "image/png", body: logo }),
  );
}

/// Serves `html` at http://localhost:<port>/ : another site than the server's 127.0.0.1.
export async function serveHostPage(html) {
  const server = createServer((req, res) => {
    if (req.url === "/favicon.ico") {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
  });
  await new Promise((resolve) => server.listen(0, "localhost", resolve));
  const { port } = server.address();
  return { url: `http://localhost:${port}/`, close: () => new Promise((r) => server.close(r)) };
}

export async function launchBrowser() {
  mkdirSync(artifacts, { recursive: true });
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/// Collects console errors and page errors of every frame of `page`.
export function collectErrors(page) {
  const errors = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  return errors;
}

/// Watches every response that `target` (a page, its frames included, or a whole browser
/// context) receives from the service at `origin`, and keeps the `Set-Cookie` headers among
/// them. The flows run on bearer tokens only: the service must never try to set a cookie,
/// whatever a browser's cookie policy would have done with it. `Set-Cookie` is read from the
/// raw headers (`headerValue`), which the browser reports even for a cookie it refuses.
export function collectSetCookies(target, origin = baseUrl) {
  const service = new URL(origin).origin;
  const reads = [];
  const cookies = [];
  const unread = [];
  let responses = 0;
  target.on("response", (response) => {
    let url;
    try {
      url = new URL(response.url());
    } catch {
      return;
    }
    if (url.origin !== service) return;
    responses += 1;
    const what = `${response.request().method()} ${url.pathname} (${response.status()})`;
    // A response whose raw headers never arrive (its page closed first) must not hang the test.
    let timer;
    const timeout = new Promise((resolve) => {
      timer = setTimeout(resolve, 5_000, undefined);
    });
    reads.push(
      Promise.race([response.headerValue("set-cookie"), timeout])
        .then(
          (value) => {
            if (value === undefined) unread.push(what);
            else if (value !== null) cookies.push(`${what}: ${value}`);
          },
          () => unread.push(what),
        )
        .finally(() => clearTimeout(timer)),
    );
  });
  return {
    /// The responses from the service seen so far.
    get responses() {
      return responses;
    },
    /// Every `Set-Cookie` seen so far, as "METHOD path (status): value".
    async setCookies() {
      await Promise.all(reads);
      return cookies;
    },
    /// The responses whose headers could not be read.
    get unread() {
      return unread;
    },
  };
}

/// Asserts that the service answered `collector`'s target at least once and that none of its
/// answers carried `Set-Cookie`. Call it while the pages are still open.
export async function assertNoSetCookie(collector) {
  const cookies = await collector.setCookies();
  assert.ok(
    collector.responses > collector.unread.length,
    `no response from the service could be read (${collector.responses} seen, unread: ${collector.unread.join(", ")})`,
  );
  assert.deepEqual(cookies, [], "the service sent Set-Cookie");
}
