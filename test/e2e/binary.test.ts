import { copyFileSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BINARY, ensureBinary, ROOT } from "./_binary.js";
import { client, listAllPets } from "./_http.js";
import {
  binaryServe,
  cleanUp,
  cli,
  createKey,
  type Server,
  startServer,
  stopProcess,
  tempDatabaseUrl,
  tempDir,
  waitFor,
} from "./_processes.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

describe("the petstore binary's command line", () => {
  it("prints its version and help", async () => {
    const version = new RegExp(
      `^petstore 1\\.0\\.0 \\(commit [0-9a-f]{12}(-dirty)?, bun [0-9.]+, target bun-${process.platform}-${process.arch}\\)\n$`,
    );
    expect(await cli(["--version"])).toEqual({ code: 0, stdout: expect.stringMatching(version), stderr: "" });
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("petstore keys create --plan free|pro|business|enterprise");
    const serveHelp = await cli(["serve", "--help"]);
    expect(serveHelp.stdout).toContain("--trust-proxy CIDRS");
  });

  it("exits 2 on a bad flag with one line naming it and a usage hint", async () => {
    const result = await cli(["serve", "--prot", "8080"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    const lines = result.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe("petstore: unknown flag --prot for 'petstore serve'");
    // The binary is not on PATH here: the hint names it by its path, which a shell runs.
    expect(lines[1]!.startsWith(`Usage: ${BINARY} serve [--port 8080]`)).toBe(true);
  });

  it("exits 2 on a bad value from a flag or an environment variable", async () => {
    const flag = await cli(["keys", "create", "--plan", "gold", "--db", ":memory:"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr.split("\n")[0]).toBe(
      "petstore: --plan must be one of free, pro, business, enterprise, not 'gold'",
    );
    const env = await cli(["serve"], { env: { ...process.env, PETSTORE_PORT: "99999" } });
    expect(env.code).toBe(2);
    expect(env.stderr.split("\n")[0]).toBe(
      "petstore: PETSTORE_PORT must be a whole number from 0 to 65535, not '99999'",
    );
  });

  it("creates, lists and revokes keys, never showing key material in the list", async () => {
    const db = tempDatabaseUrl("keys.db");
    const made = await createKey(db, ["--plan", "business", "--label", "billing"]);
    expect(made).toEqual({
      id: expect.stringMatching(/^key_/),
      accountId: expect.stringMatching(/^acct_/),
      key: expect.stringMatching(/^psk_\w{38}$/),
      plan: "business",
      perMinute: 1_000,
      perDay: 100_000,
      label: "billing",
      createdAt: expect.any(String),
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
      scopes: ["pets:read", "pets:write", "orders:read"],
      allowFrom: null,
      rolling: null,
      usage: {
        minute: { used: 0, limit: 1_000, resetAt: expect.any(String) },
        day: { used: 0, limit: 100_000, resetAt: expect.any(String) },
        bannedUntil: null,
      },
      states: ["active"],
      database: db.slice("file:".length),
      databaseCreated: true,
    });
    const listed = await cli(["keys", "list", "--db", db]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(made.id);
    expect(listed.stdout).not.toContain(made.key);
    expect((await cli(["keys", "revoke", made.id, "--db", db])).code).toBe(0);
    const json = JSON.parse((await cli(["keys", "list", "--db", db, "--json"])).stdout) as {
      id: string;
      revokedAt: string | null;
    }[];
    expect(json).toEqual([expect.objectContaining({ id: made.id, revokedAt: expect.any(String) })]);
    expect(JSON.stringify(json)).not.toContain("psk_");
    const unknown = await cli(["keys", "revoke", "key_nope", "--db", db]);
    expect(unknown.code).toBe(1);
  });

  it("says where keys create wrote when run without --db, and refuses --db :memory:", async () => {
    // In an empty directory it made ./petstore.db and printed a key, naming no database.
    const dir = tempDir();
    const created = await cli(["keys", "create", "--plan", "free"], {
      cwd: dir,
      env: { ...process.env, PETSTORE_DB: "" },
    });
    expect(created.code).toBe(0);
    expect(created.stdout.split("\n")[1]).toBe(
      `Stored in a new database, ${join(dir, "petstore.db")}: there was none at that path. A server on another database answers this key 401: give its database with --db (or PETSTORE_DB).`,
    );
    const again = await cli(["keys", "create", "--plan", "free"], { cwd: dir });
    expect(again.stdout.split("\n")[1]).toBe(`Stored in the database ${join(dir, "petstore.db")}.`);
    const memory = await cli(["keys", "create", "--plan", "free", "--db", ":memory:"], { cwd: dir });
    expect([memory.code, memory.stdout, memory.stderr.split("\n")[0]]).toEqual([
      2,
      "",
      `petstore: --db :memory: would lose the key when this command ends: give the database the server uses (a :memory: server takes its key from PETSTORE_BOOTSTRAP_KEY, see '${BINARY} serve --help')`,
    ]);
    // Nothing but the one database (and its WAL files): no file named after :memory:.
    expect(readdirSync(dir).filter((name) => !name.startsWith("petstore.db"))).toEqual([]);
  });
});

describe("the petstore binary serving HTTP", () => {
  let server: Server;
  let key: string;
  let keyId: string;
  let db: string;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    db = tempDatabaseUrl("api.db");
    ({ key, id: keyId } = await createKey(db));
    server = await startServer(binaryServe(db));
    api = client(server.url, key);
  }, 60_000);

  it("answers /healthz with 200 and no key", async () => {
    const response = await fetch(new URL("/healthz", server.url));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
  });

  it("answers a path outside the API with the Error body's 404", async () => {
    const response = await fetch(new URL("/admin", server.url));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ code: "not_found", message: "No resource at /admin", status: 404 });
  });

  it("serves the OpenAPI document without a key", async () => {
    const response = await fetch(new URL("/v1/openapi.json", server.url));
    expect(response.status).toBe(200);
    expect(((await response.json()) as { openapi: string }).openapi).toMatch(/^3\.1\./);
  });

  it("refuses a request without a key with 401 and the rate-limit headers", async () => {
    const response = await fetch(new URL("/v1/pets", server.url));
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="petstore"');
    expect(response.headers.get("x-ratelimit-limit")).toBe("60");
  });

  it("creates a pet, gets it by id with the deprecation headers, and lists it", async () => {
    const created = await api("/v1/pets", {
      method: "POST",
      json: { name: "  Rex ", categoryId: 3, status: "available" },
    });
    expect(created.status).toBe(201);
    const pet = (await created.json()) as { id: number };
    expect(pet).toEqual({ id: expect.any(Number), name: "Rex", categoryId: 3, status: "available" });
    expect(created.headers.get("location")).toBe(`/v1/pets/${pet.id}`);

    const got = await api(`/v1/pets/${pet.id}`);
    expect(got.status).toBe(200);
    expect(await got.json()).toEqual(pet);
    expect(got.headers.get("deprecation")).toBe("@1767225600");
    expect(got.headers.get("sunset")).toBe("Thu, 05 Dec 2030 00:00:00 GMT");

    const missing = await api("/v1/pets/999999");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe("not_found");

    const available = (await (await api("/v1/pets?status=available")).json()) as { id: number }[];
    expect(available.map((p) => p.id)).toContain(pet.id);
  });

  it("pages through pets with Link headers", async () => {
    for (let i = 0; i < 5; i++)
      expect((await api("/v1/pets", { method: "POST", json: { name: `page-${i}`, categoryId: 1 } })).status).toBe(201);
    const first = await api("/v1/pets?limit=2");
    expect(first.status).toBe(200);
    expect(first.headers.get("link")).toMatch(/^<\/v1\/pets\?limit=2&cursor=[\w-]+>; rel="next"$/);
    const all = await listAllPets(api);
    expect(all.length).toBeGreaterThanOrEqual(5);
    expect(all.map((p) => p.id)).toEqual([...all.map((p) => p.id)].sort((a, b) => a - b));
  });

  it("replays a create with the same Idempotency-Key and refuses its reuse with another body", async () => {
    const headers = { "idempotency-key": "order-77" };
    const first = await api("/v1/pets", { method: "POST", headers, json: { name: "Once", categoryId: 1 } });
    const again = await api("/v1/pets", { method: "POST", headers, json: { name: "Once", categoryId: 1 } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(await first.json());
    const reused = await api("/v1/pets", { method: "POST", headers, json: { name: "Twice", categoryId: 1 } });
    expect(reused.status).toBe(422);
  });

  it("validates input: 400, 405, 413 and 415", async () => {
    const badLimit = await api("/v1/pets?limit=101");
    expect(badLimit.status).toBe(400);
    expect(((await badLimit.json()) as { code: string }).code).toBe("invalid_parameter");
    const badBody = await api("/v1/pets", { method: "POST", json: { name: "", categoryId: "x", id: 4 } });
    expect(badBody.status).toBe(400);
    expect(((await badBody.json()) as { details: unknown[] }).details.length).toBeGreaterThanOrEqual(3);
    const wrongMethod = await api("/v1/pets", { method: "DELETE" });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("GET, HEAD, POST");
    const tooLarge = await api("/v1/pets", { method: "POST", json: { name: "x".repeat(20_000), categoryId: 1 } });
    expect(tooLarge.status).toBe(413);
    const notJson = await api("/v1/pets", { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" });
    expect(notJson.status).toBe(415);
  });

  it("lists orders (none: the binary has no way to write them)", async () => {
    const response = await api("/v1/store/orders?status=placed");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
  });

  it("answers HEAD like GET without a body", async () => {
    const response = await api("/v1/pets", { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
  });

  it("limits a key to its per-minute quota with 429 and Retry-After", async () => {
    const { key: small } = await createKey(db, ["--plan", "enterprise", "--per-minute", "2", "--per-day", "100"]);
    const limited = client(server.url, small);
    const responses: Response[] = [];
    for (let i = 0; i < 3; i++) responses.push(await limited("/v1/pets?limit=1"));
    const admitted = responses.filter((response) => response.status === 200);
    // A minute boundary between the requests opens a new window: then the third is admitted too.
    if (new Set(admitted.map((response) => response.headers.get("x-ratelimit-reset"))).size === 1) {
      expect(responses.map((response) => response.status)).toEqual([200, 200, 429]);
      expect(((await responses[2]!.json()) as { code: string }).code).toBe("rate_limited");
      expect(Number(responses[2]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    } else {
      expect(admitted).toHaveLength(3);
    }
  });

  it("writes one JSON access-log line per request, naming the key's id and never the key", async () => {
    const response = await api("/v1/pets?limit=1", { headers: { "x-request-id": "e2e-log-check" } });
    expect(response.status).toBe(200);
    await waitFor(() => server.stdout.some((line) => line.includes("e2e-log-check")));
    const entries = server.stdout
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(entries.find((entry) => entry.requestId === "e2e-log-check")).toEqual({
      time: expect.any(String),
      requestId: "e2e-log-check",
      method: "GET",
      path: "/v1/pets",
      status: 200,
      durationMs: expect.any(Number),
      keyId,
    });
    expect(server.stdout.join("\n")).not.toContain("psk_");
    expect(server.stderr.join("\n")).not.toContain("psk_");
  });

  it("does not warn at start when the database has a key", () => {
    expect(server.stderr.join("\n")).not.toContain("no active API key");
  });
});

describe("the petstore binary on its own", () => {
  it("is the size docs/binary.md says, within 5 %", () => {
    const stated = Number(/one ~(\d+) MiB executable/.exec(readFileSync(join(ROOT, "docs/binary.md"), "utf8"))![1]);
    const size = statSync(ensureBinary()).size / 2 ** 20;
    expect(
      Math.abs(size - stated) / stated,
      `the binary is ${size.toFixed(1)} MiB, the docs say ~${stated}`,
    ).toBeLessThan(0.05);
  });

  it("serves from an empty directory with a file database, without Node, Bun or node_modules", async () => {
    const dir = tempDir();
    const emptyPath = tempDir();
    const executable = join(dir, "petstore");
    copyFileSync(ensureBinary(), executable);
    const env = { PATH: emptyPath, HOME: dir, TMPDIR: dir };
    const made = await cli(["keys", "create", "--plan", "free", "--json"], { executable, cwd: dir, env });
    expect(made.code).toBe(0);
    const { key } = JSON.parse(made.stdout) as { key: string };
    const server = await startServer([executable, "serve", "--host", "127.0.0.1", "--port", "0"], { cwd: dir, env });
    const created = await client(server.url, key)("/v1/pets", {
      method: "POST",
      json: { name: "Alone", categoryId: 1 },
    });
    expect(created.status).toBe(201);
    expect(readdirSync(dir)).toContain("petstore.db");
    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
  });

  /** The --dev banner's "Make another key:" command, once the server printed it. */
  async function anotherKeyLine(server: Server): Promise<string> {
    await waitFor(() => server.stdout.some((line) => line.startsWith("Make another key:")));
    return server.stdout.find((line) => line.startsWith("Make another key: "))!.slice("Make another key: ".length);
  }

  it("with --dev on a database without keys, prints a key, its limits and ban, and how to make another that works", async () => {
    const db = tempDatabaseUrl("dev.db");
    const server = await startServer([...binaryServe(db), "--dev"]);
    const another = await anotherKeyLine(server);
    const banner = server.stdout.slice(server.stdout.findIndex((line) => line.startsWith("Development mode")));
    expect(banner).toContain(
      "It allows 60 requests a minute and 1000 a day; past 30 refusals (429) within a minute it is banned for 10 minutes.",
    );
    // Not on PATH: the binary by its path, the one form a shell runs.
    expect(another).toBe(`${BINARY} keys create --plan free --db ${db}`);
    // The line as printed, run by a shell, makes a key in the server's own database, which the server then accepts.
    const made = await cli(["-c", `${another} --json`], { executable: "bash" });
    expect(JSON.parse(made.stdout)).toMatchObject({ database: db.slice("file:".length), databaseCreated: false });
    const answer = await fetch(`${server.url}/v1/pets`, {
      headers: { authorization: `Bearer ${JSON.parse(made.stdout).key}` },
    });
    expect(answer.status).toBe(200);
    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
  });

  it("with --dev, names itself petstore when PATH finds it by that name", async () => {
    const db = tempDatabaseUrl("dev-on-path.db");
    const bin = tempDir();
    const installed = join(bin, "petstore");
    copyFileSync(BINARY, installed);
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
    const server = await startServer([installed, "serve", "--host", "127.0.0.1", "--port", "0", "--db", db, "--dev"], {
      env,
    });
    expect(await anotherKeyLine(server)).toBe(`petstore keys create --plan free --db ${db}`);
    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
  });

  it("warns on stderr when it serves a database without any key", async () => {
    const server = await startServer(binaryServe(tempDatabaseUrl("empty.db")));
    await waitFor(() => server.stderr.some((line) => line.includes("no active API key")));
    expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
  });
});
