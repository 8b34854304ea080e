import { cliInProcess } from "../../../../test/_support/cli-in-process.js";

/**
 * The CLI run in process against one database (`--db` appended), for the commands' tests:
 * `cli` gives the exit code and the printed lines, `json` the object `--json` printed.
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
