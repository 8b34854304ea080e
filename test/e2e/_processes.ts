import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { BINARY } from "./_binary.js";
export { freePort, onFreePort } from "../_support/free-port.js";
export { waitFor } from "../_support/wait-for.js";

/** Every process the suites started and that may still run: killed when the test process ends. */
const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** A temporary directory, removed by `removeTempDirs`. */
const tempDirs: string[] = [];
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "petstore-e2e-"));
  tempDirs.push(dir);
  return dir;
}

/** `file:` URL of a database in a new temporary directory (the file does not exist yet); removed by `cleanUp`. */
export function tempDatabaseUrl(name = "petstore.db"): string {
  return `file:${join(tempDir(), name)}`;
}

/** Kills whatever is still running and removes the temporary directories; for `afterAll`. */
export async function cleanUp(): Promise<void> {
  await Promise.all([...running].map((child) => stopProcess(child, "SIGKILL")));
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Sends `signal` and resolves with how the process ended. */
export function stopProcess(
  child: ChildProcess,
  signal: NodeJS.Signals,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once("exit", (code, signal) => resolve({ code, signal }));
  });
  child.kill(signal);
  return exited;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the binary with `args` to completion (at most 20 s). */
export function cli(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; executable?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      options.executable ?? BINARY,
      args,
      { env: options.env ?? process.env, cwd: options.cwd, timeout: 20_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

/** Makes an API key with the CLI and returns what `keys create --json` printed. */
export async function createKey(
  db: string,
  flags: string[] = ["--plan", "enterprise", "--per-minute", "100000", "--per-day", "1000000"],
) {
  const result = await cli(["keys", "create", ...flags, "--db", db, "--json"]);
  if (result.code !== 0) throw new Error(`keys create failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout) as {
    id: string;
    key: string;
    plan: string;
    perMinute: number;
    perDay: number;
    label: string | null;
  };
}

export interface Server {
  child: ChildProcess;
  url: string;
  /** Every stdout line so far. */
  stdout: string[];
  stderr: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The compiled binary serving `db` on a free loopback port. */
export function binaryServe(db: string): string[] {
  return [BINARY, "serve", "--host", "127.0.0.1", "--port", "0", "--db", db];
}

/** Starts `command` (e.g. `binaryServe(db)`) and resolves once it logged that it listens (at most 30 s). */
export function startServer(
  command: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Server> {
  const [executable, ...args] = command;
  const child = spawn(executable!, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  const stdout: string[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (line) => stderr.push(line));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the server did not listen within 30 s:\n${stdout.join("\n")}\n${stderr.join("\n")}`));
    }, 30_000);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code ?? signal}) before listening:\n${stderr.join("\n")}`));
    });
    createInterface({ input: child.stdout! }).on("line", (line) => {
      stdout.push(line);
      if (!line.startsWith("{")) return;
      const entry = JSON.parse(line) as { event?: string; url?: string };
      if (entry.event === "listening") {
        clearTimeout(timer);
        resolve({ child, url: entry.url!, stdout, stderr, exited });
      }
    });
  });
}
