// A credit bureau for the browser tests, answering as docs/credit-bureau.md says a bureau
// must: `POST /v1/soft-checks` with our bearer secret and an `Idempotency-Key` equal to the
// body's `reference`, answered `200` with `{reference, outcome}`. Every check passes unless the
// SSN is listed in `outcomes`; each request is kept (without its SSN) for the test to read.

import { createServer } from "node:http";

export async function startFakeBureau({ secret, outcomes = {} }) {
  const requests = [];
  const server = createServer((req, res) => {
    const answer = (status, body) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (req.method !== "POST" || req.url !== "/v1/soft-checks") return answer(404, { error: "not_found" });
    if (req.headers.authorization !== `Bearer ${secret}`) return answer(401, { error: "unauthorized" });
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      let body;
      try {
        body = JSON.parse(raw);
      } catch {
        return answer(400, { error: "unreadable" });
      }
      if (!/^\d{9}$/.test(body.ssn ?? "") || req.headers["idempotency-key"] !== body.reference) {
        return answer(422, { error: "invalid" });
      }
      const { ssn, ...kept } = body;
      requests.push({ ...kept, ssn_last4: ssn.slice(-4) });
      answer(200, { reference: body.reference, outcome: outcomes[ssn] ?? "passed" });
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
