import { afterAll, describe, expect, it } from "vitest";
import { killWithDescendants, runLine, startLine } from "../packaging/_readme-commands.js";
import { ROOT } from "./_binary.js";
import { cleanUp, tempDatabaseUrl } from "./_processes.js";

afterAll(cleanUp);

/**
 * `npm start` in a checkout, as a newcomer runs it: no `petstore` is on PATH there, so the
 * command it prints to make another key is the checkout's npm script, and it works as printed.
 */
describe("npm start in a checkout", () => {
  it("prints the npm run line that makes another key, which works as printed", async () => {
    const db = tempDatabaseUrl("npm-start.db");
    const { child, match, lines } = await startLine(
      `npm start -- --port 0 --db ${db}`,
      ROOT,
      process.env,
      /^Make another key: (.*)$/,
    );
    try {
      const another = match[1]!;
      expect(another).toBe(`npm run petstore -- keys create --plan free --db ${db}`);
      const printed = await runLine(`${another} --json`, ROOT, process.env);
      const made = JSON.parse(printed.split("\n").find((line) => line.startsWith("{"))!) as { key: string };
      const { url } = JSON.parse(lines.find((line) => line.includes('"event":"listening"'))!) as { url: string };
      const answer = await fetch(`${url}/v1/pets`, { headers: { authorization: `Bearer ${made.key}` } });
      expect(answer.status).toBe(200);
    } finally {
      // npm passes no signal on to the server it started: the server goes by its PID.
      killWithDescendants(child);
    }
  }, 120_000);
});
