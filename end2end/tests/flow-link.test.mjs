// A partner embeds a flow link in an iframe on its own site: the flow opens its session from
// the link (no cookie), reads the account through the v1 API, and tells the host when the
// customer closes it.

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
  serveHostPage,
  waitForServer,
} from "../lib/harness.mjs";

let browser;
let app;

before(async () => {
  await waitForServer();
  app = createApp("Bright Home Energy");
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

test("a flow link works in a cross-site iframe without cookies and reports its close", async () => {
  const account = await api("POST", "/v1/app/accounts", app.token, {
    email: "ana@example.com",
    first_name: "Ana",
    last_name: "Díaz",
  });
  const link = await api("POST", `/v1/app/accounts/${account.uuid}/flow-login`, app.token, { scope: "enrollment" });
  const host = await serveHostPage(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Partner app</title>
<script>
  window.__messages = [];
  window.addEventListener("message", (e) => window.__messages.push({ origin: e.origin, data: e.data }));
</script></head>
<body><iframe id="flow" title="Electricity enrollment" width="400" height="640" src="${link.login_link}"></iframe></body></html>`);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const setCookies = collectSetCookies(context);
  const page = await context.newPage();
  await page.bringToFront();
  const errors = collectErrors(page);
  try {
    await page.goto(host.url);
    const flow = page.frameLocator("#flow");
    await flow.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
    // The session read the account: the flow starts at the first step the account needs.
    await flow.locator("section.steps[data-step=address]").waitFor({ timeout: 10_000 });
    await flow.getByRole("heading", { name: "Your home" }).waitFor();
    assert.equal(await flow.locator("[data-testid=app-name]").textContent(), "Bright Home Energy");

    const frame = page.frames().find((f) => f.url().includes("/flow/enrollment"));
    assert.ok(frame, "the iframe landed on the enrollment flow");
    assert.ok(!frame.url().includes("session="), `the session token left the address: ${frame.url()}`);

    await flow.getByRole("button", { name: "Close" }).click();
    // The flow also tells its host its height (service-flow-resize): the close message is the one.
    await page.waitForFunction(() => window.__messages.some((m) => m.data?.type === "service-flow-close"), null, { timeout: 5_000 });
    const [message] = await page.evaluate(() => window.__messages.filter((m) => m.data?.type === "service-flow-close"));
    assert.deepEqual(message.data, { type: "service-flow-close", reason: "exited", scope: "enrollment" });
    assert.equal(message.origin, new URL(baseUrl).origin);

    assert.deepEqual(await context.cookies(), [], "the flow needs no cookie");
    await page.screenshot({ path: path.join(artifacts, "flow-link-1280.png") });
    assert.deepEqual(errors, []);

    // The link was spent: opening it again shows a clear page.
    const again = await context.newPage();
    const response = await again.goto(link.login_link);
    assert.equal(response.status(), 410);
    await again.getByRole("heading", { name: "This link has expired" }).waitFor();
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});

test("a flow opened in a native webview tells the app through its bridge (React Native, iOS, Android)", async () => {
  const bridges = [
    ["react-native", "window.ReactNativeWebView = { postMessage: (s) => window.__native.push(s) };"],
    ["ios", "window.webkit = { messageHandlers: { switchboard: { postMessage: (s) => window.__native.push(s) } } };"],
    ["android", "window.SwitchboardAndroid = { postMessage: (s) => window.__native.push(s) };"],
  ];
  for (const [name, bridge] of bridges) {
    const account = await api("POST", "/v1/app/accounts", app.token, {
      email: `webview-${name}@example.com`,
      first_name: "Ana",
      last_name: "Díaz",
    });
    const link = await api("POST", `/v1/app/accounts/${account.uuid}/flow-login`, app.token, { scope: "enrollment" });
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    // What the app's webview provides before any page script runs.
    await context.addInitScript(`window.__native = []; ${bridge}`);
    const page = await context.newPage();
    const errors = collectErrors(page);
    const messages = (p) => p.evaluate(() => window.__native.map((s) => JSON.parse(s)));
    try {
      await page.goto(link.login_link);
      await page.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
      await page.getByRole("button", { name: "Close" }).click();
      await page.waitForFunction(() => window.__native.some((s) => JSON.parse(s).type === "service-flow-close"), null, { timeout: 5_000 });
      const got = await messages(page);
      assert.deepEqual(
        got.filter((m) => m.type === "service-flow-close"),
        [{ type: "service-flow-close", reason: "exited", scope: "enrollment" }],
        `${name}: the close message`,
      );
      assert.ok(got.some((m) => m.type === "service-flow-resize" && m.height > 0), `${name}: the height too`);
      assert.deepEqual(errors, [], name);

      // The spent link's page tells the app the same way.
      const again = await context.newPage();
      assert.equal((await again.goto(link.login_link)).status(), 410);
      await again.waitForFunction(() => window.__native.some((s) => JSON.parse(s).reason === "expired"), null, { timeout: 5_000 });
      assert.deepEqual(await messages(again), [{ type: "service-flow-close", reason: "expired" }], `${name}: expired`);
    } finally {
      await context.close();
    }
  }
});
