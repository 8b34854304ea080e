import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { generateApiKey } from "@petstore/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onFreePort } from "../_support/free-port.js";
import { waitFor } from "../_support/wait-for.js";
import { bundleWorker } from "./_bundle.js";

const WORKERD = resolve(import.meta.dirname, "../../node_modules/.bin/workerd");

/** A workerd configuration: the bundle as a module worker with its bindings, on one loopback port. */
function config(port: number, key: string): string {
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker.mjs", esModule = embed "worker.mjs")],
  compatibilityDate = "2025-09-01",
  bindings = [(name = "PETSTORE_API_KEY", text = "${key}")],
);
`;
}

/**
 * The worker-module example in Cloudflare's own runtime, workerd (offline, from its npm
 * package), rather than an imitation of it: bundled, configured with its key binding and no
 * LIBSQL_URL (no libSQL server here: it serves from memory), and asked over HTTP.
 */
describe("the worker-module example in workerd", () => {
  const dir = mkdtempSync(join(tmpdir(), "petstore-workerd-"));
  const key = generateApiKey();
  let child: ChildProcess;
  let base: string;
  let stderr = "";
  beforeAll(async () => {
    writeFileSync(join(dir, "worker.mjs"), (await bundleWorker()).code);
    // Started again on another port if this one was taken between the probe and workerd's start.
    base = await onFreePort(async (port) => {
      writeFileSync(join(dir, "config.capnp"), config(port, key));
      stderr = "";
      child = spawn(WORKERD, ["serve", "config.capnp", "--verbose"], { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
      child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const url = `http://127.0.0.1:${port}`;
      const answers = async () => {
        if (child.exitCode !== null) throw new Error(`workerd exited (${child.exitCode}):\n${stderr}`);
        return fetch(`${url}/v1/openapi.json`).then(
          () => true,
          () => false,
        );
      };
      await waitFor(answers, 20_000, { every: 100, what: () => `workerd to answer:\n${stderr}` });
      return url;
    });
  }, 60_000);
  afterAll(() => {
    child?.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("creates and lists pets for the key of its binding, with the contract's headers", async () => {
    const auth = { Authorization: `Bearer ${key}` };
    const created = await fetch(`${base}/v1/pets`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe("/v1/pets/1");
    const listed = await fetch(`${base}/v1/pets`, { headers: auth });
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual([{ id: 1, name: "Rex", categoryId: 1 }]);
    expect(listed.headers.get("x-ratelimit-remaining")).toBe("58");
    expect(listed.headers.get("x-request-id")).toBeTruthy();
  });

  it("answers a caller without a key 401 with the rate-limit headers", async () => {
    const response = await fetch(`${base}/v1/pets`);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="petstore"');
    expect(response.headers.get("x-ratelimit-limit")).toBe("60");
  });
});
