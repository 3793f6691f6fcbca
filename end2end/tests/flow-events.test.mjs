// A partner listens to the flow's `service-flow-event` messages: a customer who opens the
// enrollment flow and leaves it at the plans is told step by step with one public session id
// (never the token), and no end; the same events reach the server, whose funnel (the API and
// the dashboard's page) counts the session. The full enrollment's events are checked in
// enrollment-flow.test.mjs.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { api, artifacts, baseUrl, collectErrors, createApp, launchBrowser, root, serverBin, waitForServer } from "../lib/harness.mjs";
import { flowLink, hostPage, messages } from "../lib/accounts.mjs";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let browser;
let app;

before(async () => {
  await waitForServer();
  app = createApp("Flow Events Energy");
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

/// The flow's events the host heard so far.
async function events(page) {
  return (await messages(page)).filter((m) => m && m.type === "service-flow-event");
}

test("an abandoned enrollment tells its host each step with one session id, and the funnel counts it", async () => {
  const account = await api("POST", "/v1/app/accounts", app.token, { email: "abandon@example.com", first_name: "Ana", last_name: "Díaz" });
  const link = await flowLink(app, account.uuid, "enrollment");
  const host = await hostPage(link, "Electricity enrollment");
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = collectErrors(page);
  try {
    await page.goto(host.url);
    const flow = page.frameLocator("#flow");
    await flow.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
    await flow.locator("section.steps[data-step=address]").waitFor({ timeout: 15_000 });
    await page.waitForFunction(
      () => window.__messages.filter((m) => m.data && m.data.type === "service-flow-event").length >= 2,
      null,
      { timeout: 10_000 },
    );
    const told = await events(page);
    assert.deepEqual(told.map((e) => e.name).slice(0, 2).sort(), ["opened", "step_viewed"]);
    const viewed = told.find((e) => e.name === "step_viewed");
    assert.equal(viewed.step, "address");
    const ids = new Set(told.map((e) => e.flow_session_id));
    assert.equal(ids.size, 1, "one session");
    const [id] = ids;
    assert.match(id, UUID);
    assert.ok(!link.includes(id), "the id is not the link's token");
    for (const e of told) {
      assert.equal(e.scope, "enrollment");
      assert.ok(!("error_code" in e) || e.name === "error_shown");
    }
    assert.ok(!told.some((e) => ["exited", "completed", "handed_off"].includes(e.name)), "nothing ended");
    assert.deepEqual(errors.filter((e) => !/status of 429/.test(e)), []);
  } finally {
    // The customer walks away: the tab closes without Close.
    await context.close();
    await host.close();
  }

  // The server recorded the same session: the funnel of today counts it at its address step.
  const funnel = await api("GET", "/v1/app/flow-funnel?scope=enrollment", app.token);
  assert.ok(funnel.sessions_started >= 1, JSON.stringify(funnel));
  assert.equal(funnel.steps[0].step, "address", JSON.stringify(funnel));
  assert.equal(funnel.steps[0].sessions, funnel.sessions_started, "every session opened showed the address");

  // The dashboard's funnel page shows the same figures, as a chart and a table.
  const email = `funnel-${Date.now()}@switchboard.example`;
  const out = execFileSync(serverBin, ["users", "create", "--email", email, "--role", "operator"], { cwd: root, encoding: "utf8" });
  const password = out.split("\n").find((l) => l.trim().startsWith("password:")).trim().split(/\s+/)[1];
  const dash = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await dash.newPage();
    await page.goto(`${baseUrl}/dashboard/sign-in`);
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${baseUrl}/dashboard`);
    await page.goto(`${baseUrl}/dashboard/apps/${app.app_uuid}`);
    await page.getByRole("link", { name: "Flow funnel" }).click();
    await page.locator("[data-testid=funnel-chart]").waitFor();
    assert.match(await page.locator("[data-testid=funnel-summary]").innerText(), new RegExp(`^${funnel.sessions_started} ${funnel.sessions_started === 1 ? "session" : "sessions"} started`));
    const row = page.locator("[data-testid=funnel-table] tr[data-step=address]");
    assert.equal(await row.locator("[data-testid=sessions]").innerText(), String(funnel.steps[0].sessions));
    assert.equal(await row.locator("[data-testid=share]").innerText(), `${funnel.steps[0].share_percent}%`);
    assert.equal(await page.locator("[data-testid=funnel-chart] g[data-step=address]").count(), 1);
    await page.screenshot({ path: path.join(artifacts, "dashboard-funnel.png"), fullPage: true });
  } finally {
    await dash.close();
  }
});
