// Optimizes the built flow bundles for their size as brotli sends them, after taking out what the flows never call but the
// WASM exports anyway: the stream adapters of the server-function client (wasm-streams'
// IntoUnderlying* classes, which leptos's browser half links in for streaming server functions;
// the flows call none). Exports are roots, so their code would stay. cargo-leptos's own wasm-opt
// step only rewrites the file (Cargo.toml, `wasm-opt-features`): the exports must go before the
// optimization, which then drops their code; taken out of an optimized file, the result is
// larger. Then the precompressed copies are written again. The JS glue keeps its class
// wrappers, never constructed. Usage: node frontend/strip-exports.mjs target/site/pkg/*.wasm
// (binaryen's wasm-opt on PATH).
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import zlib from "node:zlib";

const UNUSED = /^(__wbg_)?intounderlying(bytesource|sink|source)_/;
// Light optimization (-O1, to a fixed point): what -Oz or -Os shrink of the raw file leaves
// brotli more to send. Measured on the enrollment bundle (brotli): -Oz 196.0 KB, -Os 194.5 KB,
// -O2 195.5 KB, -O1 184.6 KB, -O1 to a fixed point 183.6 KB.
const OPTIMIZE = ["-O1", "--converge", "--enable-bulk-memory", "--enable-nontrapping-float-to-int"];

function leb(bytes, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[at++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) return [value, at];
  }
}

function unsignedLeb(value) {
  const out = [];
  do {
    let b = value & 0x7f;
    value = Math.floor(value / 128);
    if (value > 0) b |= 0x80;
    out.push(b);
  } while (value > 0);
  return Buffer.from(out);
}

/// The module without the exports whose names match UNUSED; how many went.
function withoutUnusedExports(wasm) {
  const parts = [wasm.subarray(0, 8)];
  let removed = 0;
  let at = 8;
  while (at < wasm.length) {
    const id = wasm[at];
    const [size, body] = leb(wasm, at + 1);
    const end = body + size;
    if (id !== 7) {
      parts.push(wasm.subarray(at, end));
      at = end;
      continue;
    }
    let [count, p] = leb(wasm, body);
    const kept = [];
    for (let i = 0; i < count; i++) {
      const start = p;
      const [length, nameAt] = leb(wasm, p);
      const name = wasm.subarray(nameAt, nameAt + length).toString("utf8");
      p = leb(wasm, nameAt + length + 1)[1];
      if (UNUSED.test(name)) removed++;
      else kept.push(wasm.subarray(start, p));
    }
    const section = Buffer.concat([unsignedLeb(kept.length), ...kept]);
    parts.push(Buffer.from([7]), unsignedLeb(section.length), section);
    at = end;
  }
  return [Buffer.concat(parts), removed];
}

for (const file of process.argv.slice(2)) {
  const [stripped, removed] = withoutUnusedExports(readFileSync(file));
  writeFileSync(file, stripped);
  execFileSync("wasm-opt", [...OPTIMIZE, file, "-o", file], { stdio: "inherit" });
  const wasm = readFileSync(file);
  if (WebAssembly.Module.exports(new WebAssembly.Module(wasm)).some((e) => UNUSED.test(e.name))) {
    throw new Error(`${file}: unused exports left`);
  }
  writeFileSync(
    `${file}.br`,
    zlib.brotliCompressSync(wasm, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
        [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: wasm.length,
      },
    }),
  );
  writeFileSync(`${file}.gz`, zlib.gzipSync(wasm, { level: 9 }));
  console.log(`${file}: ${removed} unused exports removed, optimized`);
}
