// A host that sandboxes its iframe (scripts, forms and same-origin allowed; no popups) blocks
// new tabs, and a sandboxed frame renders no PDF. The customer still reads every document
// before accepting it: a document link opens the document inside the flow, with the PDF link
// beside it. Checked in the enrollment flow (a plan card and the terms' consent) and in the
// documents flow, at 360 and 1280 px.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { api, artifacts, baseUrl, collectErrors, createApp, launchBrowser, serveHostPage, waitForServer } from "../lib/harness.mjs";
import { seededCustomer } from "../lib/accounts.mjs";
import { assertAccessible } from "../lib/axe.mjs";

const SANDBOX = "allow-scripts allow-same-origin allow-forms";

let browser;
let app;

before(async () => {
  await waitForServer();
  app = createApp("Sandboxed Frame Energy");
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

function sandboxedHost(link, title) {
  return serveHostPage(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Partner app</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body { margin: 0; } iframe { border: 0; width: 100%; height: 100vh; display: block; }</style></head>
<body><iframe id="flow" title="${title}" sandbox="${SANDBOX}" src="${link}"></iframe></body></html>`);
}

/// Opens the document `name` from `scope` (a locator inside the flow) and checks that its text
/// shows in the flow's dialog; returns the dialog.
async function read(page, flow, scope, name, expected) {
  await scope.getByRole("link", { name, exact: true }).click();
  const dialog = flow.locator("dialog[data-testid=reader][open]");
  await dialog.waitFor({ timeout: 10_000 });
  assert.equal(await dialog.getByRole("heading", { level: 2 }).first().innerText(), name);
  const text = dialog.locator("[data-testid=reader-text]");
  await text.waitFor({ timeout: 10_000 });
  assert.match(await text.innerText(), expected);
  assert.ok(await dialog.getByRole("link", { name: "Open the PDF" }).getAttribute("href"));
  return dialog;
}

/// A plain single-meter address of the directory, away from the sandbox's magic ESI IDs.
async function plainAddress() {
  for (const query of ["12", "23", "34", "45"]) {
    const found = await api("POST", "/v1/app/accounts/enroll/address-search", app.token, { query, limit: 20 });
    const plain = found.find((a) => !a.address_2 && !/(1111|2222|3333)$/.test(a.esi_id));
    if (plain) return plain;
  }
  throw new Error("the directory has no plain address");
}

for (const width of [360, 1280]) {
  test(`at ${width} px in a sandboxed frame, the plan's documents are read inside the enrollment flow`, async () => {
    const created = await api("POST", "/v1/app/accounts", app.token, { email: `sandboxed-${width}@example.com`, first_name: "Ana", last_name: "Díaz" });
    const { token } = await api("POST", `/v1/app/accounts/${created.uuid}/token`, app.token);
    const address = await plainAddress();
    await api("POST", "/v1/account/enroll/confirm-address", token, { esi_id: address.esi_id });
    const link = await api("POST", `/v1/app/accounts/${created.uuid}/flow-login`, app.token, { scope: "enrollment" });
    const host = await sandboxedHost(link.login_link, "Electricity enrollment");
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    const errors = collectErrors(page);
    const popups = [];
    context.on("page", (p) => popups.push(p.url()));
    try {
      await page.goto(host.url);
      const flow = page.frameLocator("#flow");
      await flow.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
      await flow.locator("section.steps[data-step=plan] [data-testid=plan]").first().waitFor({ timeout: 15_000 });
      const card = flow.locator("[data-testid=plan]").first();
      await card.locator("summary").click();

      let dialog = await read(page, flow, card, "Electricity Facts Label", /Average price[\s\S]*1,000 kWh/);
      const frame = page.frames().find((f) => f.url().startsWith(baseUrl));
      await assertAccessible(frame, `sandboxed-${width}-efl`);
      await page.screenshot({ path: path.join(artifacts, `sandboxed-${width}-efl.png`) });
      await dialog.getByRole("button", { name: "Close" }).click();
      await flow.locator("dialog[data-testid=reader][open]").waitFor({ state: "detached", timeout: 5_000 }).catch(() => {});
      assert.equal(await flow.locator("dialog[data-testid=reader][open]").count(), 0, "Close closes the document");

      // The terms' consent names the same documents; reading one does not tick the box.
      await card.locator("[data-testid=choose-plan]").click();
      const consent = flow.locator("label.option", { has: flow.locator("[data-testid=terms]") });
      dialog = await read(page, flow, consent, "Terms of Service", /Terms of Service, version/);
      await dialog.getByRole("button", { name: "Close" }).click();
      dialog = await read(page, flow, consent, "Your Rights as a Customer", /Your Rights as a Customer/);
      await page.keyboard.press("Escape");
      assert.equal(await flow.locator("dialog[data-testid=reader][open]").count(), 0, "Escape closes the document");
      assert.equal(await flow.locator("[data-testid=terms]").isChecked(), false, "reading a document does not accept it");

      assert.deepEqual(popups, [], "nothing tried to open a tab");
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
      await host.close();
    }
  });
}

test("in a sandboxed frame, the documents flow shows the contract's documents inside the flow", async () => {
  const customer = await seededCustomer(app, "sandboxed-documents@example.com");
  const link = await api("POST", `/v1/app/accounts/${customer.uuid}/flow-login`, app.token, { scope: "documents" });
  const host = await sandboxedHost(link.login_link, "Your documents");
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = collectErrors(page);
  try {
    await page.goto(host.url);
    const flow = page.frameLocator("#flow");
    await flow.locator("main[data-hydrated=true]").waitFor({ timeout: 30_000 });
    const list = flow.locator("[data-testid=active-documents]");
    await list.waitFor({ timeout: 15_000 });
    await read(page, flow, list, "Electricity Facts Label", /Electricity Facts Label/);
    await page.screenshot({ path: path.join(artifacts, "sandboxed-documents.png") });
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    await host.close();
  }
});
