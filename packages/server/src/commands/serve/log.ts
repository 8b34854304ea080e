import type { Io } from "../_command.js";

/** One JSON line on stdout: what the server is doing. */
export function logLine(io: Io, event: string, fields: Record<string, unknown> = {}): void {
  io.out(JSON.stringify({ time: new Date().toISOString(), level: "info", event, ...fields }));
}

/** The URL a person on this machine can paste: a wildcard address becomes loopback. */
export function localUrl(host: string, port: number): string {
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`;
}
