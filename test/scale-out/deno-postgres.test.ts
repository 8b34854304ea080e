import { readFileSync } from "node:fs";
import { postgresKeys } from "@petstore/adapters/postgres";
import { issueApiKey } from "@petstore/core";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { usePostgresDatabase } from "../_support/postgres-database.js";
import { ROOT } from "../e2e/_binary.js";
import { client } from "../e2e/_http.js";
import { cleanUp, freePort, startServer, stopProcess } from "../e2e/_processes.js";

afterAll(cleanUp);
const database = usePostgresDatabase();

/**
 * The documented Deno command (`npm run start:deno`), on `port` and a Postgres database: the
 * database's address added to --allow-net, and the three PG* variables postgres.js reads to
 * --allow-env (see docs/scaling-out.md).
 */
function denoCommand(port: number, db: string): string[] {
  const script = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> })
    .scripts["start:deno"]!;
  const [, ...args] = script.split(" ");
  const dbHost = new URL(db).host;
  return [
    join(ROOT, "node_modules/.bin/deno"),
    ...args
      .filter((arg) => arg !== "--dev")
      .map((arg) => {
        if (arg === "--allow-net=127.0.0.1:8080") return `--allow-net=127.0.0.1:${port},${dbHost}`;
        if (arg.startsWith("--allow-env=")) return `${arg},PGPASSWORD,PGAPPNAME,PGTARGETSESSIONATTRS`;
        return arg;
      }),
    "--port",
    String(port),
    "--host",
    "127.0.0.1",
    "--db",
    db,
  ];
}

describe("the server source on Deno, on PostgreSQL", () => {
  it("migrates, serves creates and reads, and stops with exit 0", async () => {
    const { source, schema, close } = await database.fresh();
    const { key } = await issueApiKey(postgresKeys(source), { plan: "free" });
    await close();
    // The test's schema through the URL's startup options, as a deployment may choose one.
    const db = `${database.url}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const port = await freePort();
    const server = await startServer(denoCommand(port, db), { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" } });
    try {
      expect((await fetch(new URL("/healthz", server.url))).status).toBe(200);
      // No key: 401, with the limiter's headers counted in Postgres.
      const anonymous = await fetch(new URL("/v1/pets", server.url));
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get("x-ratelimit-remaining")).toBe("59");
      const api = client(server.url, key);
      const created = await api("/v1/pets", { method: "POST", json: { name: "Dino", categoryId: 2 } });
      expect(created.status).toBe(201);
      const pet = (await created.json()) as { id: number };
      expect(await (await api(`/v1/pets/${pet.id}`)).json()).toEqual({ id: pet.id, name: "Dino", categoryId: 2 });
    } finally {
      expect(await stopProcess(server.child, "SIGTERM")).toEqual({ code: 0, signal: null });
    }
    expect(server.stderr.join("\n")).not.toMatch(/NotCapable|PermissionDenied/);
  }, 90_000);
});
