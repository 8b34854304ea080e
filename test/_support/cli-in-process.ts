import { runCli } from "../../packages/server/src/cli.js";
import type { Env } from "../../packages/server/src/commands/_command.js";

/**
 * Runs the command line in this process with `env`, and returns its exit code, its output as one
 * string and its error lines. `program` is the name its messages give it; without it, the one
 * `env` implies.
 */
export async function cliInProcess(argv: string[], env: Env = {}, program?: string) {
  const out: string[] = [];
  const err: string[] = [];
  const lines = { out: (line: string) => out.push(line), err: (line: string) => err.push(line) };
  const code = await runCli(argv, env, program === undefined ? lines : { ...lines, program });
  return { code, out: out.join("\n"), err };
}

/**
 * The CLI run in process against one database (`--db` appended), for the commands' tests:
 * `cli` gives the exit code, the printed lines and the error lines, `json` the object `--json` printed.
 */
export function cliOn(db: string) {
  const cli = async (argv: string[]) => {
    const { code, out, err } = await cliInProcess([...argv, "--db", db]);
    return { code, out: out === "" ? [] : out.split("\n"), err };
  };
  // biome-ignore lint/suspicious/noExplicitAny: a test reads the printed JSON's fields freely
  const json = async (argv: string[]): Promise<any> =>
    JSON.parse((await cliInProcess([...argv, "--json", "--db", db])).out);
  return { cli, json };
}

/** The commands that only read or change a database that exists: each must refuse one that does not. */
export const COMMANDS_ON_AN_EXISTING_DATABASE = [
  ["keys", "list"],
  ["keys", "show", "key_x"],
  ["keys", "update", "key_x", "--label", "x"],
  ["keys", "roll", "key_x", "--overlap", "0s"],
  ["keys", "revoke", "key_x"],
  ["keys", "unban", "key_x"],
  ["audit"],
  ["admin-tokens", "list"],
  ["admin-tokens", "revoke", "tok_x"],
];
