// A live app registers its site's origin: its flows then load in an iframe on that site, and
// closing the flow tells the host page.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import {
  api,
  artifacts,
  assertNoSetCookie,
  baseUrl,
  collectErrors,
  collectSetCookies,
  createApp,
  launchBrowser,
  makeLiveReady,
  servePartnerSite,
  serveHostPage,
  waitForServer,
} from "../lib/harness.mjs";

let browser;
let host;
let app;

before(async () => {
  await waitForServer();
  app = createApp("Live Partner", "live");
  // The host page takes the flow link from its own address, because the link is made after
  // the page's origin (its port) is known and registered.
  host = await serveHostPage(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Partner app</title>
<script>
  window.__messages = [];
  window.addEventListener("message", (e) => window.__messages.push({ origin: e.origin, data: e.data }));
</script></head>
<body>
  <iframe id="flow" title="Electricity enrollment" width="400" height="640"></iframe>
  <script>
    document.getElementById("flow").src = new URLSearchParams(location.search).get("flow");
  </script>
</body></html>`);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await host?.close();
});

test("a live app's registered origin frames its flow and hears it close", async () => {
  const origin = new URL(host.url).origin;
  // Not ready yet (no brand, contacts, keys or origins): no enrollment flow opens.
  const early = await api("POST", "/v1/app/accounts", app.token, {
    email: "live-origins-early@example.com",
    first_name: "Ana",
    last_name: "Díaz",
  });
  const refused = await fetch(`${baseUrl}/v1/app/accounts/${early.uuid}/flow-login`, {
    method: "POST",
    headers: { authorization: `Bearer ${app.token}`, "content-type": "application/json" },
    body: JSON.stringify({ scope: "enrollment" }),
  });
  assert.equal(refused.status, 409);
  assert.equal((await refused.json()).error.code, "app_not_ready");
  makeLiveReady(app.app_uuid, [origin]);
  // The server keeps an app it has just read for up to a second (`cache_ttl_ms`): changes the
  // command line makes show after that.
  let me;
  for (let tries = 0; tries < 30; tries++) {
    me = await api("GET", "/v1/app", app.token);
    if (me.allowed_origins.length > 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(me.environment, "live");
  assert.deepEqual(me.allowed_origins, [origin]);

  const account = await api("POST", "/v1/app/accounts", app.token, {
    email: "live-origins@example.com",
    first_name: "Ana",
    last_name: "Díaz",
  });
  const link = await api("POST", `/v1/app/accounts/${account.uuid}/flow-login`, app.token, { scope: "enrollment" });

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await servePartnerSite(context);
  const setCookies = collectSetCookies(context);
  const page = await context.newPage();
  await page.bringToFront();
  const errors = collectErrors(page);
  try {
    await page.goto(`${host.url}?flow=${encodeURIComponent(link.login_link)}`);
    const flow = page.frameLocator("#flow");
    // Framing was allowed (a refused frame never hydrates) and the session read the account.
    await flow.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
    await flow.locator("section.steps[data-step=address]").waitFor({ timeout: 10_000 });
    assert.equal(await flow.locator("[data-testid=app-name]").textContent(), "Live Partner");

    await flow.getByRole("button", { name: "Close" }).click();
    // The flow also tells its host its height (service-flow-resize): the close message is the one.
    await page.waitForFunction(() => window.__messages.some((m) => m.data?.type === "service-flow-close"), null, { timeout: 5_000 });
    const [message] = await page.evaluate(() => window.__messages.filter((m) => m.data?.type === "service-flow-close"));
    assert.deepEqual(message.data, { type: "service-flow-close", reason: "exited", scope: "enrollment" });
    assert.equal(message.origin, new URL(baseUrl).origin);

    await page.screenshot({ path: path.join(artifacts, "live-origins-1280.png") });
    assert.deepEqual(errors, []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
  }
});
