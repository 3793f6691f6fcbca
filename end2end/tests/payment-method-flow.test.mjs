// A partner embeds the update-payment-method flow: the customer sees the card on file, saves a
// new one through the card component (a declined card is reported at the card number and can
// be fixed at once), and the flow tells its host it completed.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  api,
  assertNoSetCookie,
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
  seededCustomer,
  shot,
  watchWasm,
  openFlow,
} from "../lib/accounts.mjs";

let browser;
let app;

before(async () => {
  await waitForServer();
  app = createApp("Card Keepers");
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

async function open(width, email) {
  const customer = await seededCustomer(app, email);
  const opened = await openFlow(browser, app, customer.uuid, "update-payment-method", "Payment method", width, { height: 800 });
  await opened.flow.locator("[data-testid=card-on-file]").waitFor({ timeout: 15_000 });
  return { customer, ...opened };
}

test("the card on file is replaced by a new card, and the flow completes", async () => {
  const { customer, host, context, page, flow, errors, setCookies, wasm } = await open(1280, "card-new@example.com");
  try {
    const onFile = await flow.locator("[data-testid=card-on-file]").innerText();
    assert.match(onFile, /Visa ending in 4242/);
    assert.match(onFile, /Expires \d\d\/20\d\d/);
    await shot(page, "payment-method-1280-1-on-file.png");

    // The number is grouped as typed and its network shown; the expiry takes the MM / YY shape.
    await flow.getByLabel("Card number").pressSequentially("5555555555554444", { delay: 10 });
    assert.equal(await flow.getByLabel("Card number").inputValue(), "5555 5555 5555 4444");
    assert.equal(await flow.locator("[data-testid=card-network]").innerText(), "Mastercard");
    await flow.getByLabel("Expiry (MM / YY)").pressSequentially("1133", { delay: 10 });
    assert.equal(await flow.getByLabel("Expiry (MM / YY)").inputValue(), "11 / 33");
    await flow.getByLabel("Security code").fill("321");
    await flow.getByRole("button", { name: "Save new card" }).click();
    await flow.locator("[data-testid=done]").waitFor({ timeout: 15_000 });
    assert.match(await flow.locator("[data-testid=done]").innerText(), /Mastercard ending in 4444 now pays your bills/);
    // Focus moves to the confirmation, for keyboard and screen reader users.
    assert.match(await flow.locator(":focus").innerText(), /Mastercard ending in 4444/);
    await shot(page, "payment-method-1280-2-saved.png");

    const saved = await api("GET", "/v1/account/billing/payment-method", customer.token);
    assert.equal(saved.card_last4, "4444");
    assert.equal(saved.card_exp_month, 11);

    await flow.locator("[data-testid=done-close]").click();
    const message = await closeMessage(page);
    assert.deepEqual(message, { type: "service-flow-close", reason: "completed", scope: "update-payment-method" });
    assertOnlyOwnBundle(wasm, "update-payment-method");
    assert.deepEqual(appErrors(errors, 402), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});

test("a declined card is reported at the card number and fixed by keyboard at 360 px", async () => {
  const { customer, host, context, page, flow, errors, setCookies } = await open(360, "card-declined@example.com");
  try {
    await assertFits(page, flow);
    await shot(page, "payment-method-360-1-on-file.png");
    // The sandbox lists its test cards; the declining one fills the form.
    await flow.locator("[data-testid=test-cards] summary").click();
    await flow.getByRole("button", { name: "4000 0000 0000 0002" }).click();
    await flow.getByLabel("Security code").press("Enter");
    const error = flow.locator("[data-testid=step-error]");
    await error.waitFor({ timeout: 15_000 });
    assert.equal(await error.getAttribute("role"), "alert");
    assert.equal(await error.getAttribute("data-code"), "card_declined");
    assert.match(await error.innerText(), /declined/);
    assert.equal(await flow.getByLabel("Card number").getAttribute("aria-invalid"), "true");
    // The card number has the focus, and the message describes it.
    assert.equal(await flow.getByLabel("Card number").evaluate((el) => el === document.activeElement), true);
    assert.equal(await flow.getByLabel("Card number").getAttribute("aria-describedby"), "step-error");
    await shot(page, "payment-method-360-2-declined.png");

    // Fixed in place: another number, submitted from the keyboard.
    const number = flow.getByLabel("Card number");
    await number.focus();
    const outline = await number.evaluate((el) => getComputedStyle(el).outlineStyle);
    assert.notEqual(outline, "none", "the focused field shows its focus");
    await number.fill("4242 4242 4242 4242");
    // A new card number clears the decline, which was about the old one.
    await error.waitFor({ state: "detached" });
    assert.equal(await number.getAttribute("aria-invalid"), "false");
    await number.press("Enter");
    await flow.locator("[data-testid=done]").waitFor({ timeout: 15_000 });
    await shot(page, "payment-method-360-3-saved.png");
    assert.equal((await api("GET", "/v1/account/billing/payment-method", customer.token)).card_last4, "4242");

    // Close from the keyboard: the flow did what it is for.
    await flow.locator("[data-testid=close]").focus();
    await page.keyboard.press("Enter");
    const message = await closeMessage(page);
    assert.equal(message.reason, "completed");
    assert.deepEqual(appErrors(errors, 402), []);
    await assertNoSetCookie(setCookies);
  } finally {
    await context.close();
    await host.close();
  }
});
