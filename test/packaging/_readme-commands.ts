import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { createInterface } from "node:readline";

/**
 * The command lines of a README's `sh` block (the first, or the `index`th from 0), comments
 * after `#` kept out, a line ending in `\` joined with the next.
 */
export function readmeCommands(readme: string, index = 0): string[] {
  const block = [...readFileSync(readme, "utf8").matchAll(/```sh\n([\s\S]*?)```/g)][index];
  if (!block) throw new Error(`${readme} has no sh block number ${index}`);
  return block[1]!
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter(Boolean);
}

/**
 * `PATH` without the directories that hold a `bun` or `deno` (or `bunx`) executable: the
 * machine of a newcomer who has neither installed. The READMEs must work there.
 */
export function pathWithoutBunOrDeno(path = process.env.PATH ?? ""): string {
  return path
    .split(delimiter)
    .filter((dir) => dir !== "" && !["bun", "bunx", "deno"].some((name) => existsSync(join(dir, name))))
    .join(delimiter);
}

/** npm as a user's would run, with no audit or fund chatter, answering from the cache first. */
export const npmQuietly = { npm_config_audit: "false", npm_config_fund: "false", npm_config_prefer_offline: "true" };

/**
 * A new, empty directory outside the repository, and the environment of a newcomer's shell there,
 * as the examples' READMEs assume it: `PETSTORE_CHECKOUT` naming the checkout `checkout` (where a
 * README's commands take its files and the tarballs from, after `npm run pack`), npm quiet, and
 * no `bun` or `deno` on PATH. The caller removes the directory.
 */
export function emptyDirectory(prefix: string, checkout: string): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    env: { ...process.env, ...npmQuietly, PETSTORE_CHECKOUT: checkout, PATH: pathWithoutBunOrDeno(), NO_COLOR: "1" },
  };
}

/** Runs one command line with bash in `cwd`; rejects with its output when it fails. */
export function runLine(line: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", line], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 180_000);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`'${line}' failed (${code ?? signal}):\n${output}`));
    });
  });
}

/** Starts a command line that keeps running (a server) and resolves with the first line matching `ready`, and every line so far. */
export function startLine(
  line: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpExecArray; lines: string[] }> {
  // exec: the PID is the server's own, so killing it stops the server.
  const child = spawn("bash", ["-c", `exec ${line}`], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      killWithDescendants(child);
      reject(new Error(`'${line}' printed nothing matching ${ready} within 60 s:\n${lines.join("\n")}`));
    }, 60_000);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`'${line}' exited (${code ?? signal}):\n${lines.join("\n")}`));
    });
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on("line", (text) => {
        lines.push(text);
        const match = ready.exec(text);
        if (match) {
          clearTimeout(timer);
          resolve({ child, match, lines });
        }
      });
    }
  });
}

/** The process ids of `pid`'s descendants, from /proc (wrangler dev's workerd among them). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const parent = queue.shift()!;
    for (const [child, of] of parents) {
      if (of === parent) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

/** Asks a server that starts others (wrangler dev) to stop, then kills, by PID, whatever of them is left. */
export async function stopWithDescendants(child: ChildProcess): Promise<void> {
  const started = descendants(child.pid!);
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGINT");
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    child.kill("SIGKILL");
  }
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/**
 * Kills `child` and every process it started, by PID (npx runs `sh -c bun ...`: killing npx
 * alone left the runtime serving, reparented to init).
 */
export function killWithDescendants(child: ChildProcess): void {
  if (child.pid === undefined) return;
  const started = descendants(child.pid);
  child.kill("SIGKILL");
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
