import type { Command, Env, Io, Lines } from "./commands/_command.js";
import { adminTokensCreateCommand } from "./commands/admin-tokens-create.js";
import { adminTokensListCommand } from "./commands/admin-tokens-list.js";
import { adminTokensRevokeCommand } from "./commands/admin-tokens-revoke.js";
import { auditCommand } from "./commands/audit.js";
import { backupCommand } from "./commands/backup.js";
import { accountsCreateCommand } from "./commands/accounts-create.js";
import { accountsListCommand } from "./commands/accounts-list.js";
import { accountsShowCommand } from "./commands/accounts-show.js";
import { accountsUpdateCommand } from "./commands/accounts-update.js";
import { keysCreateCommand } from "./commands/keys-create.js";
import { keysListCommand } from "./commands/keys-list.js";
import { keysRevokeCommand } from "./commands/keys-revoke.js";
import { keysRollCommand } from "./commands/keys-roll.js";
import { keysShowCommand } from "./commands/keys-show.js";
import { keysUnbanCommand } from "./commands/keys-unban.js";
import { keysUpdateCommand } from "./commands/keys-update.js";
import { keysUsageCommand } from "./commands/keys-usage.js";
import { restoreCommand } from "./commands/restore.js";
import { serveCommand } from "./commands/serve-command.js";
import { parseArgs } from "./cli/parse-args.js";
import { UsageError } from "./cli/usage-error.js";
import { VERSION, versionLine } from "./cli/version.js";
import { programName } from "./messages/program-name.js";

const COMMANDS: readonly Command[] = [
  serveCommand,
  keysCreateCommand,
  keysListCommand,
  keysShowCommand,
  keysUsageCommand,
  keysUpdateCommand,
  keysRollCommand,
  keysRevokeCommand,
  keysUnbanCommand,
  accountsCreateCommand,
  accountsListCommand,
  accountsShowCommand,
  accountsUpdateCommand,
  auditCommand,
  adminTokensCreateCommand,
  adminTokensListCommand,
  adminTokensRevokeCommand,
  backupCommand,
  restoreCommand,
];

/** The commands of two words, by their first: `keys create`, `admin-tokens list`... */
const GROUPS = ["keys", "accounts", "admin-tokens"];

const HELP = `petstore ${VERSION}: the Pet Store API server and its API key management.

Usage:
${COMMANDS.map((command) => `  ${command.usage}`).join("\n")}
  petstore --version
  petstore <command> --help

Environment: PETSTORE_PORT, PETSTORE_HOST, PETSTORE_DB, PETSTORE_DB_AUTH_TOKEN, PETSTORE_LIMITER (flags win);
PETSTORE_BOOTSTRAP_KEY, PETSTORE_BOOTSTRAP_PER_MINUTE, PETSTORE_BOOTSTRAP_PER_DAY (see 'petstore serve --help').`;

/** The longest command name that `argv` starts with ("keys create" before "keys"). */
function findCommand(argv: readonly string[]): { command: Command; rest: readonly string[] } | undefined {
  for (const command of COMMANDS) {
    const words = command.spec.name.split(" ");
    if (words.every((word, i) => argv[i] === word)) return { command, rest: argv.slice(words.length) };
  }
  return undefined;
}

function usageFailure(io: Io, message: string, hint: string): number {
  io.err(`petstore: ${message}`);
  io.err(hint);
  return 2;
}

/** A synopsis (`petstore keys list ...`) as the user runs it here. */
function asRun(usage: string, io: Io): string {
  return usage.replace(/^petstore /, `${io.program} `);
}

/**
 * The whole command line: argv and the environment become a command's configuration, the
 * command runs, and the result is the exit code (2 for a usage mistake, 1 for a failure).
 * Commands a line asks the user to run are named as the user runs petstore (`programName`,
 * unless `lines` already says how).
 * @example process.exitCode = await runCli(process.argv.slice(2), process.env, lines);
 */
export async function runCli(argv: readonly string[], env: Env, lines: Lines | Io): Promise<number> {
  const io: Io = "program" in lines ? lines : { out: lines.out, err: lines.err, program: programName(env) };
  const [first] = argv;
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    io.out(HELP);
    return 0;
  }
  if (first === "--version" || first === "-v") {
    io.out(versionLine());
    return 0;
  }
  if (GROUPS.includes(first) && (argv[1] === undefined || argv[1] === "--help" || argv[1] === "-h")) {
    const group = COMMANDS.filter((c) => c.spec.name.startsWith(`${first} `));
    const words = group.map((c) => c.spec.name.slice(first.length + 1));
    if (argv[1] === undefined)
      return usageFailure(
        io,
        `'petstore ${first}' needs a command: ${words.join(", ")}`,
        `Usage: ${io.program} ${first} <${words.join("|")}>  (see '${io.program} ${first} --help')`,
      );
    io.out(
      `Usage:\n${group.map((c) => `  ${c.usage}`).join("\n")}\n\nSee 'petstore ${first} <${words.join("|")}> --help'.`,
    );
    return 0;
  }
  const found = findCommand(argv);
  if (!found) {
    const what = first.startsWith("-")
      ? `unknown flag ${first}`
      : `unknown command '${argv.slice(0, GROUPS.includes(first) ? 2 : 1).join(" ")}'`;
    return usageFailure(
      io,
      what,
      `Usage: ${io.program} ${COMMANDS.map((c) => c.spec.name).join(" | ")}  (see '${io.program} --help')`,
    );
  }
  const { command, rest } = found;
  try {
    const args = parseArgs(rest, command.spec);
    if (args.switches.has("help")) {
      io.out(`Usage: ${command.usage}\n\n${command.help}`);
      return 0;
    }
    return await command.run(args, env, io);
  } catch (error) {
    if (error instanceof UsageError) {
      return usageFailure(
        io,
        error.message,
        `Usage: ${asRun(command.usage, io)}  (see '${io.program} ${command.spec.name} --help')`,
      );
    }
    io.err(`petstore: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
