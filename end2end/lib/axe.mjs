// The automated accessibility check of the flows: axe-core (end2end/node_modules) injected into
// a flow's frame and run against WCAG 2.0, 2.1 and 2.2 A and AA. A test calls it on each step
// it reaches (and on each error it provokes); any violation fails the test with what and where.

import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(import.meta.url);
const source = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

/// Runs axe-core in `frame` (a Playwright Frame or Page) and asserts no WCAG A/AA violation;
/// `where` names the step in the failure.
export async function assertAccessible(frame, where) {
  const hasAxe = await frame.evaluate(() => typeof window.axe !== "undefined");
  if (!hasAxe) await frame.evaluate(source);
  const violations = await frame.evaluate(async () => {
    const result = await window.axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"] },
    });
    return result.violations.map((v) => ({
      id: v.id,
      help: v.help,
      nodes: v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary}`).slice(0, 3),
    }));
  });
  assert.deepEqual(violations, [], `axe-core on ${where}: ${JSON.stringify(violations, null, 1)}`);
}
