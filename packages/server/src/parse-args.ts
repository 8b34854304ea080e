import { UsageError } from "./usage-error.js";

/** The flags a command accepts (each takes a value or is a switch) and its positional arguments. */
export interface CommandSpec {
  name: string;
  flags: Readonly<Record<string, "value" | "switch">>;
  /** Names of the required positional arguments, in order. */
  positionals: readonly string[];
}

export interface ParsedArgs {
  values: Record<string, string>;
  switches: Set<string>;
  positionals: string[];
}

/**
 * Splits argv into flag values, switches and positionals by a command's spec: `--flag value`
 * and `--flag=value` both work, `--` ends the flags, and anything unexpected is a `UsageError`.
 * `--help` is accepted by every command.
 */
export function parseArgs(argv: readonly string[], spec: CommandSpec): ParsedArgs {
  const parsed: ParsedArgs = { values: {}, switches: new Set(), positionals: [] };
  const fail = (message: string) => new UsageError(message);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      parsed.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      parsed.positionals.push(arg);
      continue;
    }
    const equals = arg.indexOf("=");
    const flag = equals === -1 ? arg : arg.slice(0, equals);
    const name = flag.replace(/^--?/, "");
    const kind = name === "help" ? "switch" : flag.startsWith("--") ? spec.flags[name] : undefined;
    if (kind === undefined) throw fail(`unknown flag ${flag} for 'petstore ${spec.name}'`);
    if (kind === "switch") {
      if (equals !== -1) throw fail(`${flag} takes no value`);
      parsed.switches.add(name);
      continue;
    }
    if (name in parsed.values) throw fail(`${flag} is given more than once`);
    let value: string | undefined;
    if (equals !== -1) value = arg.slice(equals + 1);
    else if (i + 1 < argv.length && !argv[i + 1]!.startsWith("--")) value = argv[++i];
    if (value === undefined) throw fail(`${flag} needs a value`);
    parsed.values[name] = value;
  }
  if (parsed.switches.has("help")) return parsed;
  const missing = spec.positionals[parsed.positionals.length];
  if (missing !== undefined) throw fail(`missing <${missing}> for 'petstore ${spec.name}'`);
  const extra = parsed.positionals[spec.positionals.length];
  if (extra !== undefined) throw fail(`unexpected argument '${extra}' for 'petstore ${spec.name}'`);
  return parsed;
}
