// A partner embeds the billing flow: the customer sees what is owed and when, a year of usage
// (readable by screen readers), the bills a page at a time, a bill's charges and daily usage,
// opens its PDF and pays it now. A declined payment is reported at the button, with a way
// into the card change (the host is asked to open update-payment-method).

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
  assertFits,
  appErrors,
  assertOnlyOwnBundle,
  closeMessage,
  flowLink,
  hostPage,
  messages,
  saveCard,
  seededCustomer,
  shot,
  watchWasm,
  openFlow,
} from "../lib/accounts.mjs";

let browser;
let app;

before(async () => {
  await waitForServer();
  app = createApp("Bill Pay Energy");
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

/// A customer with at least one open bill.
async function customerWithOpenBill(email, days) {
  const customer = await seededCustomer(app, email);
  if (days) await api("POST", "/v1/account/sandbox/advance-clock", customer.token, { days });
  await api("POST", "/v1/account/sandbox/simulate", customer.token, { event: "invoice_generated" });
  const bills = await api("GET", "/v1/account/billing/invoices?limit=100", customer.token);
  assert.ok(bills.data.some((i) => i.status === "open"), "an open bill");
  return { ...customer, bills: bills.data };
}

async function open(customer, width) {
  const opened = await openFlow(browser, app, customer.uuid, "billing", "Billing", width);
  await opened.flow.locator("[data-testid=summary]").waitFor({ timeout: 15_000 });
  await opened.flow.locator("[data-testid=invoices]").waitFor({ timeout: 15_000 });
  return opened;
}

test("balance, a year of usage, bills page by page, a bill's detail and PDF, paid now", async () => {
  const customer = await customerWithOpenBill("billing-pay@example.com", 150);
  const { host, context, page, flow, errors, setCookies, wasm } = await open(customer, 1280);
  try {
    const unpaid = customer.bills.filter((i) => i.status === "open" || i.status === "past_due");
    const balance = unpaid.reduce((sum, i) => sum + i.total_cents, 0);
    const dollars = `$${Math.floor(balance / 100).toLocaleString("en-US")}.${String(balance % 100).padStart(2, "0")}`;
    assert.equal(await flow.locator("[data-testid=balance]").innerText(), dollars);
    assert.match(await flow.locator("[data-testid=next-due]").innerText(), /due on [A-Z][a-z]+ \d{1,2}, \d{4}/i);

    // The year's usage: a picture hidden from screen readers, the values in a table they read.
    const chart = flow.locator("[data-testid=year-usage]");
    assert.equal(await chart.locator("svg").getAttribute("aria-hidden"), "true");
    const rows = chart.locator("[data-testid=chart-values] tr");
    assert.equal(await rows.count(), Math.min(12, customer.bills.length));
    assert.match(await rows.first().innerText(), /\d kWh/);

    // Bills: six a page, with their status; older ones on the next page.
    const items = flow.locator("[data-testid=invoice]");
    assert.equal(await items.count(), Math.min(6, customer.bills.length));
    assert.ok(customer.bills.length > 6, `enough bills to page (${customer.bills.length})`);
    await shot(page, "billing-1280-1-summary.png");
    await flow.locator("[data-testid=older]").click();
    await flow.getByText("Page 2").waitFor();
    assert.equal(await items.count(), Math.min(6, customer.bills.length - 6));
    await flow.locator("[data-testid=newer]").click();
    await flow.getByText("Page 1").waitFor();

    // The open bill in detail.
    await flow.locator("[data-testid=invoice][data-status=open] button").first().click();
    const detail = flow.locator("[data-testid=invoice-detail]");
    await detail.waitFor({ timeout: 15_000 });
    const groups = await flow.locator("[data-testid=charges] caption").allInnerTexts();
    assert.ok(groups.includes("Energy") && groups.includes("Delivery"), `charges grouped as on the PDF: ${groups}`);
    const daily = flow.locator("[data-testid=daily-usage]");
    await daily.waitFor();
    assert.equal(await daily.locator("rect").count(), await daily.locator("[data-testid=chart-values] tr").count());
    const pdf = await flow.locator("[data-testid=pdf]").getAttribute("href");
    const r = await fetch(new URL(pdf, baseUrl));
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type") ?? "", /application\/pdf/);
    await shot(page, "billing-1280-2-invoice.png");
    // Each view was told to the host as it showed: the summary, then the bill.
    await page.waitForFunction(() => window.__messages.some((m) => m.data?.step === "invoice"), null, { timeout: 5_000 });
    const viewed = (await messages(page)).filter((m) => m?.type === "service-flow-event" && m.name === "step_viewed");
    assert.deepEqual([...new Set(viewed.map((m) => m.step))], ["summary", "invoice"]);

    const number = (await flow.getByRole("heading", { level: 2 }).innerText()).replace("Bill ", "");
    await flow.locator("[data-testid=pay-now]").click();
    await flow.locator("[data-testid=paid]").waitFor({ timeout: 15_000 });
    assert.equal(await detail.getAttribute("data-status"), "paid");
    const after = await api("GET", `/v1/account/billing/invoices/${number}`, customer.token);
    assert.equal(after.status, "paid");
    await shot(page, "billing-1280-3-paid.png");

    await flow.locator("[data-testid=close]").click();
    const message = await closeMessage(page);
    assert.deepEqual(message, { type: "service-flow-close", reason: "completed", scope: "billing" });
    assertOnlyOwnBundle(wasm, "billing");
    assert.deepEqual(appErrors(errors, 402), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});

test("a declined payment is shown at the button, with a way into the card change, at 360 px", async () => {
  const customer = await customerWithOpenBill("billing-declined@example.com", 0);
  // A card that saves but whose charges fail.
  await saveCard(customer.token, "4000000000000341");
  const { host, context, page, flow, errors, setCookies } = await open(customer, 360);
  try {
    await assertFits(page, flow);
    await shot(page, "billing-360-1-summary.png");
    // By keyboard: the open bill's row, then Pay now.
    const row = flow.locator("[data-testid=invoice][data-status=open] button").first();
    await row.focus();
    assert.notEqual(await row.evaluate((el) => getComputedStyle(el).outlineStyle), "none", "visible focus");
    await page.keyboard.press("Enter");
    await flow.locator("[data-testid=invoice-detail]").waitFor({ timeout: 15_000 });
    await assertFits(page, flow);
    await flow.locator("[data-testid=pay-now]").click();
    const error = flow.locator("[data-testid=pay] [data-testid=step-error]");
    await error.waitFor({ timeout: 15_000 });
    assert.equal(await error.getAttribute("role"), "alert");
    assert.equal(await error.getAttribute("data-code"), "card_declined");
    assert.match(await error.innerText(), /declined/);
    await shot(page, "billing-360-2-declined.png");

    // The billing flow may not save a card: it closes and asks its host for the card change.
    await flow.locator("[data-testid=change-card]").click();
    const message = await closeMessage(page);
    assert.deepEqual(message, {
      type: "service-flow-close",
      reason: "exited",
      scope: "billing",
      next: "update-payment-method",
    });
    assert.deepEqual(appErrors(errors, 402), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});

test("with a bill past due, the flow offers the payment plan and accepts it, at 360 px", async () => {
  const customer = await customerWithOpenBill("billing-plan@example.com", 0);
  await saveCard(customer.token, "4000000000000341");
  const pastDue = await api("POST", "/v1/account/sandbox/simulate", customer.token, { event: "invoice_past_due" });
  assert.ok(pastDue.events.some((e) => e.type === "invoice.past_due"), "a bill past due");
  const offered = await api("GET", "/v1/account/billing/payment-plan", customer.token);
  assert.ok(offered.offer, "a plan is offered");
  const { host, context, page, flow, errors, setCookies } = await open(customer, 360);
  try {
    const offer = flow.locator("[data-testid=plan-offer]");
    await offer.waitFor({ timeout: 15_000 });
    const text = await offer.innerText();
    assert.match(text, new RegExp(`over ${offered.offer.months} monthly instalments of \\$[\\d,]+\\.\\d{2}`));
    await assertFits(page, flow);
    await shot(page, "billing-360-3-plan-offer.png");
    await flow.locator("[data-testid=accept-plan]").click();
    const plan = flow.locator("[data-testid=payment-plan]");
    await plan.waitFor({ timeout: 15_000 });
    assert.match(await plan.innerText(), new RegExp(`in ${offered.offer.months} monthly instalments`));
    assert.equal(await offer.count(), 0, "no second offer while the plan runs");
    const after = await api("GET", "/v1/account/billing/payment-plan", customer.token);
    assert.equal(after.plans[0].status, "active");
    await shot(page, "billing-360-4-plan.png");
    assert.deepEqual(appErrors(errors, 402), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});
