// A partner embeds the documents flow: the customer sees the contract's dates, the documents
// in force (their PDFs open), and every version there was. A dropped connection is retried in
// place.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  api,
  assertNoSetCookie,
  baseUrl,
  collectErrors,
  collectSetCookies,
  createApp,
  launchBrowser,
  waitForServer,
} from "../lib/harness.mjs";
import {
  appErrors,
  assertFits,
  assertOnlyOwnBundle,
  closeMessage,
  flowLink,
  hostPage,
  longDate,
  seededCustomer,
  shot,
  watchWasm,
  openFlow,
} from "../lib/accounts.mjs";

let browser;
let app;

before(async () => {
  await waitForServer();
  app = createApp("Paper Trail Power");
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});


async function open(width, email, prepare) {
  const customer = await seededCustomer(app, email);
  return { customer, ...(await openFlow(browser, app, customer.uuid, "documents", "Documents", width, { prepare })) };
}

test("contract dates, the documents in force and their history", async () => {
  const { customer, host, context, page, flow, errors, setCookies, wasm } = await open(1280, "docs@example.com");
  try {
    await flow.locator("[data-testid=history]").waitFor({ timeout: 15_000 });
    const location = customer.account.locations[0];
    const active = await api("GET", `/v1/account/locations/${location.uuid}/documents`, customer.token);
    assert.equal(await flow.locator("[data-testid=contract-start]").innerText(), longDate(active.contract_start));
    if (active.contract_end) {
      assert.equal(await flow.locator("[data-testid=contract-end]").innerText(), longDate(active.contract_end));
    }
    const links = flow.locator("[data-testid=active-documents] a");
    assert.deepEqual(await links.allInnerTexts(), ["Electricity Facts Label", "Terms of Service", "Your Rights as a Customer"]);
    for (const href of await links.evaluateAll((as) => as.map((a) => a.href))) {
      const r = await fetch(new URL(href, baseUrl));
      assert.equal(r.status, 200, href);
    }
    const all = await api("GET", `/v1/account/locations/${location.uuid}/all-documents`, customer.token);
    assert.equal(await flow.locator("[data-testid=history] tbody tr").count(), all.data.length);
    await shot(page, "documents-1280.png");

    await flow.locator("[data-testid=close]").click();
    const message = await closeMessage(page);
    assert.deepEqual(message, { type: "service-flow-close", reason: "completed", scope: "documents" });
    assertOnlyOwnBundle(wasm, "documents");
    assert.deepEqual(appErrors(errors), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});

test("a dropped connection is shown and retried in place, at 360 px", async () => {
  let dropped = 0;
  const { host, context, page, flow, errors, setCookies } = await open(360, "docs-offline@example.com", (page) =>
    page.route("**/all-documents", (route) => {
      if (dropped++ === 0) return route.abort("internetdisconnected");
      return route.continue();
    }),
  );
  try {
    const error = flow.locator("[data-testid=step-error]");
    await error.waitFor({ timeout: 15_000 });
    assert.equal(await error.getAttribute("role"), "alert");
    assert.equal(await error.getAttribute("data-code"), "network_error");
    await shot(page, "documents-360-1-offline.png");
    const retry = error.getByRole("button", { name: "Try again" });
    await retry.focus();
    await page.keyboard.press("Enter");
    await flow.locator("[data-testid=history]").waitFor({ timeout: 15_000 });
    await error.waitFor({ state: "detached" });
    await assertFits(page, flow);
    await shot(page, "documents-360-2-loaded.png");
    assert.deepEqual(appErrors(errors).filter((e) => !/ERR_INTERNET_DISCONNECTED/.test(e)), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});
