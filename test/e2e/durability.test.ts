import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary } from "./_binary.js";
import { client, listAllPets } from "./_http.js";
import { binaryServe, cleanUp, createKey, startServer, stopProcess, tempDatabaseUrl, waitFor } from "./_processes.js";

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);

describe("killing the binary with SIGKILL", () => {
  it("loses no pet it acknowledged with a 201", async () => {
    const db = tempDatabaseUrl("sigkill.db");
    const { key } = await createKey(db);
    const server = await startServer(binaryServe(db));
    const api = client(server.url, key);
    const acknowledged = new Map<number, string>();
    let killed = false;

    // Eight clients create pets back to back until the connection dies under them.
    const writers = Array.from({ length: 8 }, async (_, writer) => {
      for (let n = 0; !killed; n++) {
        const name = `w${writer}-${n}`;
        try {
          const response = await api("/v1/pets", { method: "POST", json: { name, categoryId: 1 } });
          if (response.status !== 201) throw new Error(`unexpected ${response.status}: ${await response.text()}`);
          acknowledged.set(((await response.json()) as { id: number }).id, name);
        } catch (error) {
          if (killed) return;
          throw error;
        }
      }
    });
    await waitFor(() => acknowledged.size >= 200, 20_000);
    killed = true;
    expect(await stopProcess(server.child, "SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });
    await Promise.all(writers);

    const restarted = await startServer(binaryServe(db));
    const pets = await listAllPets(client(restarted.url, key));
    const stored = new Map(pets.map((pet) => [pet.id, pet.name]));
    expect(stored.size).toBe(pets.length);
    const lost = [...acknowledged].filter(([id, name]) => stored.get(id) !== name);
    expect(lost).toEqual([]);
    expect(acknowledged.size).toBeGreaterThanOrEqual(200);
    expect(await stopProcess(restarted.child, "SIGTERM")).toEqual({ code: 0, signal: null });
  }, 60_000);
});
