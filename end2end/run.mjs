// Entry point of `cargo leptos end-to-end`: runs every browser test with node's test runner.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const r = spawnSync(process.execPath, ["--test", "--test-concurrency=1", "--test-reporter=spec", path.join(here, "tests")], {
  stdio: "inherit",
});
process.exit(r.status ?? 1);
