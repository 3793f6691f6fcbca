// A deployment as the README describes it: the binary and the built site copied together into a
// fresh folder and started from there with no build tool's variables. Its assets answer, and its
// flow page hydrates in a cross-site iframe and closes itself with the message partners wait for.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { assertNoSetCookie, collectErrors, collectSetCookies, launchBrowser, root, serveHostPage, serverBin } from "../lib/harness.mjs";
import { execFileSync } from "node:child_process";

let dir;
let server;
let base;
let browser;
let host;
let env;

async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "switchboard-deploy-"));
  // The README's deploy steps: the binary and the site, side by side.
  cpSync(serverBin, path.join(dir, "switchboard"));
  cpSync(path.join(root, "target", "site"), path.join(dir, "site"), { recursive: true });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // Nothing of the build's environment leaks into the deployed process.
  env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LEPTOS_") && !k.startsWith("SWITCHBOARD_") && k !== "DATABASE_URL"));
  env.SWITCHBOARD_MARKET__DEFAULT_DIRECTORY_SIZE = "0";
  server = spawn(path.join(dir, "switchboard"), ["serve", "--addr", `127.0.0.1:${port}`], {
    cwd: dir,
    env,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error("the deployed server did not become ready");
    await new Promise((r) => setTimeout(r, 200));
  }
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await host?.close();
  server?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("a copied release binary finds the site beside it and serves its assets", async () => {
  for (const [file, type] of [
    ["/pkg/switchboard.wasm", "application/wasm"],
    ["/pkg/switchboard.js", "text/javascript"],
    ["/pkg/switchboard.css", "text/css"],
  ]) {
    const r = await fetch(`${base}${file}`, { headers: { "accept-encoding": "br" } });
    assert.equal(r.status, 200, `${file} is served`);
    assert.match(r.headers.get("content-type") ?? "", new RegExp(type), file);
  }
});

test("the deployed flow hydrates in a cross-site iframe and posts service-flow-close", async () => {
  const out = execFileSync(path.join(dir, "switchboard"), ["apps", "create", "--name", "Deployed Energy", "--environment", "sandbox", "--json"], {
    cwd: dir,
    env,
    encoding: "utf8",
  });
  const app = JSON.parse(out.trim().split("\n").pop());
  host = await serveHostPage(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Partner app</title></head>
<body>
  <iframe id="flow" title="Electricity enrollment" width="400" height="640"
          src="${base}/flow/enrollment?app=${app.app_uuid}"></iframe>
  <script>
    window.closed_with = null;
    window.addEventListener("message", (e) => {
      if (e.data && e.data.type === "service-flow-close") window.closed_with = e.data;
    });
  </script>
</body></html>`);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const setCookies = collectSetCookies(page, base);
  await page.bringToFront();
  const errors = collectErrors(page);
  await page.goto(host.url);
  const flow = page.frameLocator("#flow");
  await flow.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
  await flow.locator("[data-testid=no-session]").waitFor({ timeout: 5_000 });
  await flow.getByRole("button", { name: "Close" }).click();
  await page.waitForFunction(() => window.closed_with !== null, null, { timeout: 5_000 });
  const message = await page.evaluate(() => window.closed_with);
  assert.equal(message.reason, "exited");
  assert.equal(message.scope, "enrollment");
  assert.deepEqual(errors, []);
  await assertNoSetCookie(setCookies);
  await page.close();
});
