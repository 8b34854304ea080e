import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary } from "./_binary.js";
import {
  binaryServe,
  cleanUp,
  cli,
  createKey,
  type Server,
  startServer,
  stopProcess,
  tempDatabaseUrl,
} from "./_processes.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { code?: string };
}

/** One request from the client socket bound to `from` (another loopback address), with `headers`. */
function call(
  server: Server,
  from: string,
  key: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const url = new URL("/v1/pets", server.url);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: options.method ?? "GET",
        localAddress: from,
        headers: { Authorization: `Bearer ${key}`, ...options.headers },
        timeout: 10_000,
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode!,
            headers: response.headers,
            body: JSON.parse(text) as Answer["body"],
          }),
        );
      },
    );
    request.on("timeout", () => request.destroy(new Error("no answer within 10 s")));
    request.on("error", reject);
    request.end(options.body);
  });
}

/** A key in a new account (made with the CLI on `db`) whose keys may be used from `ranges` only. */
async function keyOfAccountFrom(db: string, ranges: string): Promise<string> {
  const made = await cli([
    "accounts",
    "create",
    "--name",
    "Office",
    "--plan",
    "free",
    "--allow-from",
    ranges,
    "--db",
    db,
    "--json",
  ]);
  if (made.code !== 0) throw new Error(`accounts create failed (${made.code}): ${made.stderr}`);
  const account = (JSON.parse(made.stdout) as { id: string }).id;
  return (await createKey(db, ["--account", account])).key;
}

describe("the binary refuses a key outside its ranges and scopes", () => {
  let server: Server;
  let limited: string;
  let readOnly: string;
  let ofAccount: string;
  beforeAll(async () => {
    const db = tempDatabaseUrl();
    limited = (await createKey(db, ["--plan", "free", "--allow-from", "127.0.0.2/32"])).key;
    readOnly = (await createKey(db, ["--plan", "free", "--scopes", "pets:read,orders:read"])).key;
    ofAccount = await keyOfAccountFrom(db, "127.0.0.2/32");
    server = await startServer(binaryServe(db));
  }, 60_000);
  afterAll(() => stopProcess(server.child, "SIGTERM"));

  // The same answers whether the ranges are the key's own or its account's.
  const keyLimitedBy = { "its own ranges": () => limited, "its account's ranges": () => ofAccount };
  describe.each(Object.entries(keyLimitedBy))("a key limited to 127.0.0.2/32 by %s", (_, key) => {
    it("answers it 200 from 127.0.0.2", async () => {
      expect((await call(server, "127.0.0.2", key())).status).toBe(200);
    });

    it("answers it 403 address_not_allowed from 127.0.0.1, with the key's rate-limit headers", async () => {
      const answer = await call(server, "127.0.0.1", key());
      expect(answer.status).toBe(403);
      expect(answer.body.code).toBe("address_not_allowed");
      expect(answer.headers["x-ratelimit-limit"]).toBe("60");
      expect(answer.headers["x-ratelimit-remaining"]).toMatch(/^\d+$/);
    });
  });

  it("answers a read-only key's GET 200 and its POST 403 insufficient_scope with the challenge", async () => {
    expect((await call(server, "127.0.0.1", readOnly)).status).toBe(200);
    const answer = await call(server, "127.0.0.1", readOnly, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    });
    expect(answer.status).toBe(403);
    expect(answer.body.code).toBe("insufficient_scope");
    expect(answer.headers["www-authenticate"]).toBe('Bearer error="insufficient_scope", scope="pets:write"');
    expect(answer.headers["x-ratelimit-limit"]).toBe("60");
  });
});

describe("behind a trusted proxy the binary reads the client of X-Forwarded-For", () => {
  let server: Server;
  let limited: string;
  let ofAccount: string;
  beforeAll(async () => {
    const db = tempDatabaseUrl();
    limited = (await createKey(db, ["--plan", "free", "--allow-from", "127.0.0.2/32"])).key;
    ofAccount = await keyOfAccountFrom(db, "127.0.0.2/32");
    server = await startServer([...binaryServe(db), "--trust-proxy", "127.0.0.1/32"]);
  }, 60_000);
  afterAll(() => stopProcess(server.child, "SIGTERM"));

  it("answers 200 through the proxy for a client at 127.0.0.2", async () => {
    const answer = await call(server, "127.0.0.1", limited, { headers: { "X-Forwarded-For": "127.0.0.2" } });
    expect(answer.status).toBe(200);
  });

  it("answers 403 through the proxy for a client elsewhere", async () => {
    const answer = await call(server, "127.0.0.1", limited, { headers: { "X-Forwarded-For": "192.0.2.1" } });
    expect(answer.status).toBe(403);
    expect(answer.body.code).toBe("address_not_allowed");
  });

  it("answers a key of an account limited to 127.0.0.2/32 by where the proxy says its client is", async () => {
    const inside = await call(server, "127.0.0.1", ofAccount, { headers: { "X-Forwarded-For": "127.0.0.2" } });
    const outside = await call(server, "127.0.0.1", ofAccount, { headers: { "X-Forwarded-For": "192.0.2.1" } });
    expect([inside.status, outside.status, outside.body.code]).toEqual([200, 403, "address_not_allowed"]);
  });

  it("answers 403 to a socket that is no trusted proxy, whatever its X-Forwarded-For says", async () => {
    const answer = await call(server, "127.0.0.3", limited, { headers: { "X-Forwarded-For": "127.0.0.2" } });
    expect(answer.status).toBe(403);
    expect(answer.body.code).toBe("address_not_allowed");
  });
});
