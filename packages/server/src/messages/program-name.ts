import { realpathSync, statSync } from "node:fs";
import { basename, delimiter, join } from "node:path";
import process from "node:process";

/** The runtimes that run petstore's source as a script: their executable is not petstore. */
const RUNTIME = /^(node|bun|deno)(\.exe)?$/i;
/** The entry point of the source, which only a checkout holds (npm start runs it). */
const CHECKOUT_ENTRY = /(^|[\\/])packages[\\/]server[\\/]src[\\/]main\.ts$/;

/** A variable's value; undefined when Deno's `--allow-env` does not let it through. */
function variable(env: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  try {
    return env[name];
  } catch {
    return undefined;
  }
}

/** This process's executable and the script it runs, as far as the runtime says. */
function running(): { executable: string | undefined; script: string | undefined } {
  try {
    return { executable: process.execPath, script: process.argv[1] };
  } catch {
    return { executable: undefined, script: undefined };
  }
}

/** The same file, through links too; false when either cannot be read. */
function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/** Whether a shell typing `name` runs `executable`: the first file of that name on PATH is it. */
function foundOnPath(name: string, executable: string, path: string | undefined): boolean {
  for (const directory of (path ?? "").split(delimiter)) {
    if (directory === "") continue;
    const candidate = join(directory, name);
    try {
      if (!statSync(candidate).isFile()) continue;
    } catch {
      continue;
    }
    return sameFile(candidate, executable);
  }
  return false;
}

/** A path as one shell word: quoted when it holds anything a shell would split or expand. */
function shellWord(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}

/**
 * What the user types to run this program again, for the commands a message asks them to run:
 * the binary's name (or `petstore`, a link's) when PATH finds this very binary by it, else its
 * path; the source in a checkout (`npm start`, `npm run start:deno`), `npm run petstore --`,
 * which runs it from the checkout's root as those do; else `petstore`.
 * @example `Make another key: ${programName(env)} keys create --plan free`
 */
export function programName(
  env: Readonly<Record<string, string | undefined>>,
  { executable, script } = running(),
): string {
  if (executable !== undefined && !RUNTIME.test(basename(executable))) {
    const path = variable(env, "PATH");
    const name = [basename(executable), "petstore"].find((name) => foundOnPath(name, executable, path));
    return name ?? shellWord(executable);
  }
  return script !== undefined && CHECKOUT_ENTRY.test(script) ? "npm run petstore --" : "petstore";
}
