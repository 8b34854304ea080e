/**
 * Why a listener could not start, in one line: a port in use (Bun: "Is port N in use?", Deno:
 * "AddrInUse", Node: EADDRINUSE) is named as such with the setting that picks another; else
 * the runtime's own message.
 */
export function listenFailure(what: string, host: string, port: number, error: unknown, otherPort: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const inUse = /in use|EADDRINUSE|AddrInUse/i.test(message) || (error as { code?: unknown }).code === "EADDRINUSE";
  const why = inUse
    ? `port ${port} is in use by another process: stop that one, or choose another port with ${otherPort}`
    : message;
  return `cannot listen${what} on ${host} port ${port}: ${why}`;
}
