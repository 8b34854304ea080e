import { runCli } from "../cli.js";

/**
 * The CLI run in process against one database (`--db` appended), for the commands' tests:
 * `cli` gives the exit code and the printed lines, `json` the object `--json` printed.
 */
export function cliOn(db: string) {
  const cli = async (argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(
      [...argv, "--db", db],
      {},
      { out: (line) => out.push(line), err: (line) => err.push(line) },
    );
    return { code, out, err };
  };
  // biome-ignore lint/suspicious/noExplicitAny: a test reads the printed JSON's fields freely
  const json = async (argv: string[]): Promise<any> => JSON.parse((await cli([...argv, "--json"])).out.join("\n"));
  return { cli, json };
}
