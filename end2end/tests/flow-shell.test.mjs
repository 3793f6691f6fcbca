// The flow shell, embedded in a partner's page on another site, hydrates, explains itself when
// opened without a flow link, and can be closed by keyboard.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { artifacts, assertNoSetCookie, baseUrl, collectErrors, collectSetCookies, createApp, launchBrowser, serveHostPage, waitForServer } from "../lib/harness.mjs";

let browser;
let host;
let app;

before(async () => {
  await waitForServer();
  app = createApp("Sunny Solar");
  host = await serveHostPage(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Partner app</title></head>
<body>
  <h1>Partner app</h1>
  <iframe id="flow" title="Electricity enrollment" width="400" height="640"
          src="${baseUrl}/flow/enrollment?app=${app.app_uuid}"></iframe>
</body></html>`);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await host?.close();
});

test("the flow hydrates inside a cross-site iframe and explains itself without a session", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const setCookies = collectSetCookies(page);
  await page.bringToFront();
  const errors = collectErrors(page);
  await page.goto(host.url);
  const flow = page.frameLocator("#flow");
  await flow.locator("[data-testid=app-name]").waitFor();
  assert.equal(await flow.locator("[data-testid=app-name]").textContent(), "Sunny Solar");
  await flow.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
  // Opened without a flow link's session: a clear page, not an error dump.
  await flow.locator("[data-testid=no-session]").waitFor({ timeout: 5_000 });
  await page.screenshot({ path: path.join(artifacts, "flow-shell-1280.png") });
  assert.deepEqual(errors, []);
  await assertNoSetCookie(setCookies);
  await page.close();
});

test("the flow works at 360 px wide and by keyboard", async () => {
  const page = await browser.newPage({ viewport: { width: 360, height: 740 } });
  const setCookies = collectSetCookies(page);
  await page.bringToFront();
  const errors = collectErrors(page);
  await page.goto(`${baseUrl}/flow/enrollment?app=${app.app_uuid}`);
  await page.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), "Close");
  await page.keyboard.press("Enter");
  await page.locator("[data-testid=closed]").waitFor({ timeout: 5_000 });
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 360, `nothing is wider than the screen: ${width}`);
  await page.screenshot({ path: path.join(artifacts, "flow-shell-360.png") });
  assert.deepEqual(errors, []);
  await assertNoSetCookie(setCookies);
  await page.close();
});
