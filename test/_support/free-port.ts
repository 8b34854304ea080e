import { createServer } from "node:net";

/**
 * A loopback port that was free a moment ago: for processes whose port must be known before
 * they start (Deno's --allow-net names it; wrk needs a URL). Shared by test/, examples/ and bench/.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
