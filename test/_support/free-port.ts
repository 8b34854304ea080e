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

/**
 * Starts something on a free port, again on another one when the port was taken between the
 * probe and the start (the error then says the address is in use); other errors are thrown.
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort());
    } catch (error) {
      if (attempt >= attempts || !/in use|AddrInUse|EADDRINUSE|bind/i.test(String(error))) throw error;
    }
  }
}
