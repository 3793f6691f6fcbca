// A partner page on another site calls the account API from the browser: errors reach its code
// as our JSON (code, request id), not as an opaque CORS failure.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { assertNoSetCookie, baseUrl, collectErrors, collectSetCookies, createApp, launchBrowser, serveHostPage, waitForServer } from "../lib/harness.mjs";

let browser;
let host;
let app;

before(async () => {
  await waitForServer();
  app = createApp("Cors Partner");
  host = await serveHostPage(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Partner app</title></head>
<body><h1>Partner app</h1></body></html>`);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await host?.close();
});

async function accountToken() {
  const headers = { authorization: `Bearer ${app.token}`, "content-type": "application/json" };
  const created = await fetch(`${baseUrl}/v1/app/accounts`, {
    method: "POST",
    headers,
    body: JSON.stringify({ email: "cors@example.com", first_name: "Ana", last_name: "Díaz" }),
  });
  const account = await created.json();
  assert.equal(created.status, 201, JSON.stringify(account));
  const issued = await fetch(`${baseUrl}/v1/app/accounts/${account.uuid}/token`, { method: "POST", headers });
  const { token } = await issued.json();
  assert.equal(issued.status, 200);
  return token;
}

/// What the page's own code sees of a cross-origin call.
async function callFromPage(page, url, init) {
  return page.evaluate(
    async ({ url, init }) => {
      try {
        const r = await fetch(url, init);
        return { status: r.status, requestId: r.headers.get("request-id"), body: await r.json() };
      } catch (e) {
        return { failed: String(e) };
      }
    },
    { url, init },
  );
}

test("the page reads the JSON error of a bad token and of an unknown account path", async () => {
  const token = await accountToken();
  const page = await browser.newPage();
  const setCookies = collectSetCookies(page);
  const errors = collectErrors(page);
  try {
    await page.goto(host.url);
    assert.notEqual(new URL(host.url).origin, new URL(baseUrl).origin, "the page is on another site");

    // A good token first: the page can call the API at all.
    const ok = await callFromPage(page, `${baseUrl}/v1/account`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(ok.status, 200, JSON.stringify(ok));

    const bad = await callFromPage(page, `${baseUrl}/v1/account`, {
      headers: { authorization: "Bearer swb_acct_not-a-real-token" },
    });
    assert.equal(bad.failed, undefined, bad.failed);
    assert.equal(bad.status, 401);
    assert.equal(bad.body.error.code, "token_invalid");
    assert.equal(bad.body.error.type, "authentication_error");
    assert.equal(bad.requestId, bad.body.error.request_id, "Request-Id is readable by the page");

    // A path the API does not have, with a body (the browser asks a preflight first).
    const unknown = await callFromPage(page, `${baseUrl}/v1/account/no-such-thing`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(unknown.failed, undefined, unknown.failed);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, "resource_missing");

    // The browser reports the error statuses themselves, and nothing else.
    assert.ok(errors.every((e) => !/CORS|Access-Control/i.test(e)), errors.join("\n"));
    await assertNoSetCookie(setCookies);
  } finally {
    await page.close();
  }
});
