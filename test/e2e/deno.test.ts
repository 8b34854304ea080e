import { readFileSync } from "node:fs";
import { connect } from "node:http2";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary, ROOT } from "./_binary.js";
import { client } from "./_http.js";
import {
  cleanUp,
  createKey,
  onFreePort,
  type Server,
  startServer,
  stopProcess,
  tempDatabaseUrl,
  waitFor,
} from "./_processes.js";
import { rawRequest } from "./_raw-http.js";
import { expectApi413, expectRuntimeAnswer, RUNTIME_ANSWERS } from "./_runtime-answers.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

/** The documented Deno command (`npm run start:deno`), moved to `port` and `db`. */
function denoCommand(port: number, db: string): string[] {
  const script = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> })
    .scripts["start:deno"]!;
  const [deno, ...args] = script.split(" ");
  expect(deno).toBe("deno");
  expect(args).toContain("--allow-net=127.0.0.1:8080");
  return [
    join(ROOT, "node_modules/.bin/deno"),
    ...args.map((arg) => (arg === "--allow-net=127.0.0.1:8080" ? `--allow-net=127.0.0.1:${port}` : arg)),
    "--port",
    String(port),
    "--db",
    db,
  ];
}

describe("the server source on Deno", () => {
  it("boots with the documented permissions and answers authenticated requests", async () => {
    const db = tempDatabaseUrl("deno.db");
    const { key } = await createKey(db);
    const server = await onFreePort((port) =>
      startServer(denoCommand(port, db), { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" } }),
    );
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const api = client(server.url, key);

    expect((await fetch(new URL("/healthz", server.url))).status).toBe(200);
    const created = await api("/v1/pets", { method: "POST", json: { name: "Dino", categoryId: 2 } });
    expect(created.status).toBe(201);
    const pet = (await created.json()) as { id: number };
    expect(await (await api(`/v1/pets/${pet.id}`)).json()).toEqual({ id: pet.id, name: "Dino", categoryId: 2 });
    expect((await fetch(new URL("/v1/pets", server.url))).status).toBe(401);
    // The anonymous bucket is named by the socket address Deno reports.
    await waitFor(() =>
      server.stdout.some((line) => line.includes('"status":401') && line.includes('"client":"127.0.0.1"')),
    );

    // The source runs only in a checkout, where no petstore is on PATH: the checkout's npm script makes keys.
    expect(server.stdout).toContain(
      `Development mode: ${db} already has an active API key, so none was created. Make another: npm run petstore -- keys create --plan free --db ${db}`,
    );

    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
    expect(server.stderr.join("\n")).not.toMatch(/NotCapable|PermissionDenied/);
  }, 90_000);
});

/**
 * What Deno's HTTP layer refuses before the server sees it (docs/http-contract.md, "Answers the
 * runtime makes itself"): `Deno.serve`'s `onError` hears only what the handler throws, so these
 * answers carry none of the contract's headers.
 */
describe("answers Deno makes itself", () => {
  let server: Server;
  let port: number;
  let key: string;
  beforeAll(async () => {
    const db = tempDatabaseUrl("deno-edges.db");
    ({ key } = await createKey(db));
    server = await onFreePort((free) =>
      startServer(denoCommand(free, db), { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" } }),
    );
    port = Number(new URL(server.url).port);
  }, 90_000);
  afterAll(async () => {
    if (server) await stopProcess(server.child, "SIGTERM");
  });

  it.each(RUNTIME_ANSWERS)("answers $what as the contract's document says", async ({ request, deno }) => {
    await expectRuntimeAnswer(port, "deno", request, deno);
  });

  it("writes no access-log line for them: the server never saw the request", async () => {
    const refused = rawRequest("GET", "/v1/pets", { "X-Request-Id": "refused-by-deno", "X-Note": "a\0b" });
    await expectRuntimeAnswer(port, "deno", refused, { status: 400 });
    await fetch(new URL("/v1/pets", server.url), { headers: { "X-Request-Id": "after-refused" } });
    await waitFor(() => server.stdout.some((line) => line.includes('"requestId":"after-refused"')));
    expect(server.stdout.filter((line) => line.includes("refused-by-deno"))).toEqual([]);
  });

  it("speaks HTTP/2 without TLS to a client that starts with it, and the API answers (Bun refuses it, 400)", async () => {
    const session = connect(server.url);
    try {
      const answer = await new Promise<{ status: number; requestId: unknown }>((resolve, reject) => {
        const stream = session.request({ ":path": "/v1/pets" });
        stream.on("response", (headers) =>
          resolve({ status: Number(headers[":status"]), requestId: headers["x-request-id"] }),
        );
        stream.on("error", reject);
        stream.end();
      });
      expect(answer.status).toBe(401);
      expect(answer.requestId).toEqual(expect.any(String));
    } finally {
      session.close();
    }
  });

  it("leaves every 413 to the API, as on Bun", async () => {
    await expectApi413(port, key);
  });
});
