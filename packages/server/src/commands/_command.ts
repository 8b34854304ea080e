import type { CommandSpec, ParsedArgs } from "../cli/parse-args.js";

/** The process environment, read-only. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Where a command writes: whole lines, without their newline. */
export interface Lines {
  out(line: string): void;
  err(line: string): void;
}

/** A command's terminal: where its lines go, and what the user types there to run petstore again. */
export interface Io extends Lines {
  /** `petstore`, the binary's path, or `npm run petstore --` (see `programName`), for the commands a line names. */
  program: string;
}

/** One subcommand of `petstore`: how it parses, how it is described, what it does. */
export interface Command {
  spec: CommandSpec;
  /** The synopsis line, e.g. "petstore keys revoke <id> [--db URL]". */
  usage: string;
  /** The rest of the `--help` text: what it does and each flag. */
  help: string;
  /** Runs the command and resolves with the process's exit code. */
  run(args: ParsedArgs, env: Env, io: Io): Promise<number>;
}
