import type { CommandSpec, ParsedArgs } from "../cli/parse-args.js";

/** The process environment, read-only. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Where a command writes: whole lines, without their newline. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
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
