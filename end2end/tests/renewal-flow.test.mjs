// A partner embeds the renewal flow: inside the renewal window the customer compares renewal
// plans, accepts one (it starts the day after the current contract ends) and sees it queued;
// outside the window the flow says when renewal opens; a month-to-month customer chooses a plan
// that starts tomorrow.

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
  messages,
  seededCustomer,
  shot,
  watchWasm,
  openFlow,
} from "../lib/accounts.mjs";

let browser;
let app;

before(async () => {
  await waitForServer();
  app = createApp("Renew Right");
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

const DAY = 86_400_000;
const day = (iso) => Date.parse(`${iso}T00:00:00Z`);
const iso = (ms) => new Date(ms).toISOString().slice(0, 10);


/// A seeded customer on a fixed-term contract; with `inWindow`, the account's clock moved to
/// 30 days before the contract ends.
async function customer(email, inWindow) {
  const c = await seededCustomer(app, email);
  const location = c.account.locations[0];
  assert.ok(location.contract_end, `a fixed-term contract: ${JSON.stringify(location)}`);
  if (inWindow) {
    // Service (and the contract) started 95 days before the account's today.
    const today = day(location.contract_start) + 95 * DAY;
    const days = Math.round((day(location.contract_end) - 30 * DAY - today) / DAY);
    await api("POST", "/v1/account/sandbox/advance-clock", c.token, { days });
  }
  return { ...c, location };
}

async function open(c, width) {
  return openFlow(browser, app, c.uuid, "renewal", "Renewal", width);
}

test("inside the window: renewal plans, acceptance with terms, and the renewal queued", async () => {
  const c = await customer("renew@example.com", true);
  const { host, context, page, flow, errors, setCookies, wasm } = await open(c, 1280);
  try {
    await flow.locator("[data-testid=plan]").first().waitFor({ timeout: 15_000 });
    const plan = flow.locator("[data-testid=plan]").first();
    // The card leads with the average price (to a tenth of a cent); the details open on demand.
    assert.match(await plan.locator(".price strong").innerText(), /^\d+\.\d¢$/);
    await plan.locator("summary").click();
    assert.match(await plan.locator("table.averages").innerText(), /500 kWh[\s\S]*1,000 kWh[\s\S]*2,000 kWh/);
    const efl = await plan.getByRole("link", { name: "Electricity Facts Label" }).getAttribute("href");
    assert.equal((await fetch(new URL(efl, baseUrl))).status, 200);
    // A home with most of a year of usage: each plan says what it would have cost this home,
    // and the plans come cheapest first by it.
    const estimates = await flow.locator("[data-testid=plan-estimate]").allInnerTexts();
    assert.equal(estimates.length, await flow.locator("[data-testid=plan]").count(), estimates.join(" | "));
    for (const e of estimates) assert.match(e, /^\$[\d,]+\.\d\d a year$/);
    // What they rest on, once above the plans.
    assert.match(
      await flow.locator("[data-testid=estimate-basis]").innerText(),
      /^Each plan's yearly cost is estimated for your home's use from \w+ \d+, \d{4} to \w+ \d+, \d{4}/,
    );
    const yearly = estimates.map((e) => Number(e.slice(1, e.indexOf(" ")).replaceAll(",", "")));
    assert.deepEqual(yearly, [...yearly].sort((a, b) => a - b), estimates.join(" | "));
    await shot(page, "renewal-1280-1-plans.png");

    await plan.locator("[data-testid=choose-plan]").click();
    const start = iso(day(c.location.contract_end) + DAY);
    assert.equal(await flow.locator("[data-testid=renewal-start]").innerText(), `Starts on ${longDate(start)}.`);
    // Accepting without the terms is stopped at the checkbox.
    await flow.locator("[data-testid=accept-renewal]").click();
    await flow.locator("[data-testid=step-error]").waitFor();
    assert.equal(await flow.locator("[data-testid=terms]").getAttribute("aria-invalid"), "true");
    await flow.locator("[data-testid=terms]").check();
    await flow.locator("[data-testid=step-error]").waitFor({ state: "detached" });
    await shot(page, "renewal-1280-2-accept.png");
    await flow.locator("[data-testid=accept-renewal]").click();
    await flow.locator("[data-testid=done]").waitFor({ timeout: 15_000 });
    assert.match(await flow.locator("[data-testid=done]").innerText(), new RegExp(`starts on ${longDate(start)}`));
    await shot(page, "renewal-1280-3-done.png");

    // The renewal is queued: its documents wait in the history.
    const all = await api("GET", `/v1/account/locations/${c.location.uuid}/all-documents`, c.token);
    assert.ok(all.data.some((d) => d.status === "queued"), "the renewal's documents are queued");

    await flow.locator("[data-testid=done-close]").click();
    const message = await closeMessage(page);
    assert.deepEqual(message, { type: "service-flow-close", reason: "completed", scope: "renewal" });
    // Each view was told to the host as it showed.
    const viewed = (await messages(page)).filter((m) => m?.type === "service-flow-event" && m.name === "step_viewed");
    assert.deepEqual([...new Set(viewed.map((m) => m.step))], ["plans", "accept", "done"]);
    assertOnlyOwnBundle(wasm, "renewal");
    assert.deepEqual(appErrors(errors), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});

test("outside the window: when renewal opens, with the current contract, at 360 px", async () => {
  const c = await customer("renew-early@example.com", false);
  const { host, context, page, flow, errors, setCookies } = await open(c, 360);
  try {
    const closed = flow.locator("[data-testid=renewal-closed]");
    await closed.waitFor({ timeout: 15_000 });
    const opens = iso(day(c.location.contract_end) - 90 * DAY);
    assert.match(await closed.innerText(), new RegExp(`Renewal opens on ${longDate(opens)}`));
    assert.match(await flow.locator("[data-testid=current-contract]").innerText(), new RegExp(longDate(c.location.contract_end)));
    await assertFits(page, flow);
    await shot(page, "renewal-360-outside.png");
    // Close by keyboard: nothing was renewed.
    await flow.locator("[data-testid=close]").focus();
    await page.keyboard.press("Enter");
    const message = await closeMessage(page);
    assert.deepEqual(message, { type: "service-flow-close", reason: "exited", scope: "renewal" });
    // Outside the window the one view shown is that one: the plans were never shown.
    const viewed = (await messages(page)).filter((m) => m?.type === "service-flow-event" && m.name === "step_viewed");
    assert.deepEqual(viewed.map((m) => m.step), ["outside"]);
    assert.deepEqual(appErrors(errors, 409), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});

test("month to month: a plan with a fixed rate from tomorrow", async () => {
  const c = await seededCustomer(app, "renew-monthly@example.com");
  const seeded = c.account.locations[0];
  // Ten days past the contract's end: nobody renewed, so it rolled onto month-to-month.
  const today = day(seeded.contract_start) + 95 * DAY;
  const days = Math.round((day(seeded.contract_end) + 10 * DAY - today) / DAY);
  await api("POST", "/v1/account/sandbox/advance-clock", c.token, { days });
  const location = await api("GET", `/v1/account/locations/${seeded.uuid}`, c.token);
  assert.equal(location.contract_end, null, JSON.stringify(location));
  const { host, context, page, flow, errors, setCookies } = await open({ ...c, location }, 1280);
  try {
    await flow.locator("[data-testid=plan]").first().waitFor({ timeout: 15_000 });
    assert.match(await flow.locator("[data-testid=current-contract]").innerText(), /Month-to-month/);
    assert.match(await flow.locator("[data-testid=renewal-when]").innerText(), /starts tomorrow/);
    await shot(page, "renewal-1280-month-to-month.png");
    await flow.locator("[data-testid=plan]").first().locator("[data-testid=choose-plan]").click();
    const tomorrow = iso(day(seeded.contract_end) + 11 * DAY);
    assert.equal(await flow.locator("[data-testid=renewal-start]").innerText(), `Starts on ${longDate(tomorrow)}.`);
    await flow.locator("[data-testid=terms]").check();
    await flow.locator("[data-testid=accept-renewal]").click();
    await flow.locator("[data-testid=done]").waitFor({ timeout: 15_000 });
    assert.match(await flow.locator("[data-testid=done]").innerText(), new RegExp(`starts on ${longDate(tomorrow)}`));
    assert.deepEqual(appErrors(errors), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});
