/**
 * Cold start of the compiled binary: time from exec to the first 200 from GET /healthz, over
 * `runs` starts (default 10), each from a copy of the binary alone in an empty directory.
 * Usage, after `npm run build`: npx tsx packages/server/measure-cold-start.ts [runs]
 * Prints each run, the median and the binary's size; `fresh` runs migrate a new database,
 * `existing` runs open the database the previous run left.
 */
import { spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { get } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

const runs = Number(process.argv[2] ?? 10);
const binary = join(import.meta.dirname, "dist/petstore");

function healthz(port: number): Promise<number> {
  return new Promise((resolve) => {
    const request = get({ host: "127.0.0.1", port, path: "/healthz", agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("error", () => resolve(0));
  });
}

async function coldStart(dir: string, port: number): Promise<number> {
  const started = process.hrtime.bigint();
  const child = spawn(
    join(dir, "petstore"),
    ["serve", "--host", "127.0.0.1", "--port", String(port), "--db", "file:petstore.db"],
    {
      cwd: dir,
      env: { PATH: dir, TMPDIR: dir },
      stdio: "ignore",
    },
  );
  const deadline = Date.now() + 10_000;
  while ((await healthz(port)) !== 200) {
    if (Date.now() > deadline) throw new Error("no 200 from /healthz within 10 s");
  }
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  await new Promise((resolve) => {
    child.once("exit", resolve);
    child.kill("SIGTERM");
  });
  return elapsed;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

for (const database of ["fresh", "existing"] as const) {
  const times: number[] = [];
  const dir = mkdtempSync(join(tmpdir(), "petstore-cold-"));
  copyFileSync(binary, join(dir, "petstore"));
  chmodSync(join(dir, "petstore"), 0o755);
  for (let run = 0; run < runs; run++) {
    if (database === "fresh") rmSync(join(dir, "petstore.db"), { force: true });
    times.push(await coldStart(dir, 19_300 + run));
  }
  rmSync(dir, { recursive: true, force: true });
  console.log(
    `${database} database: runs (ms) ${times.map((t) => t.toFixed(1)).join(", ")}; median ${median(times).toFixed(1)} ms`,
  );
}
console.log(`binary: ${statSync(binary).size} bytes (${(statSync(binary).size / 2 ** 20).toFixed(1)} MiB)`);
