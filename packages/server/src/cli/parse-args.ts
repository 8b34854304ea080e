import { parseArgs as parseTokens } from "node:util";
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
 * Splits argv into flag values, switches and positionals by a command's spec, with
 * `node:util`'s `parseArgs` (Bun and Deno have it too): `--flag value` and `--flag=value`
 * both work, `--` ends the flags. It runs non-strict and the tokens it returns are checked
 * here, so that every mistake is a `UsageError` naming the flag in our words rather than
 * Node's. `--help` (`-h`) is accepted by every command, whatever else is missing.
 */
export function parseArgs(argv: readonly string[], spec: CommandSpec): ParsedArgs {
  const options = Object.fromEntries(
    Object.entries(spec.flags).map(([name, kind]) => [
      name,
      { type: kind === "value" ? "string" : "boolean" } as const,
    ]),
  );
  const { tokens } = parseTokens({
    args: [...argv],
    options: { ...options, help: { type: "boolean", short: "h" } },
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const parsed: ParsedArgs = { values: {}, switches: new Set(), positionals: [] };
  const fail = (message: string) => new UsageError(message);
  for (const token of tokens) {
    if (token.kind === "positional") parsed.positionals.push(token.value);
    if (token.kind !== "option") continue;
    const flag = token.rawName;
    const kind = token.name === "help" ? "switch" : flag.startsWith("--") ? spec.flags[token.name] : undefined;
    if (kind === undefined) throw fail(`unknown flag ${flag} for 'petstore ${spec.name}'`);
    if (kind === "switch") {
      if (token.value !== undefined) throw fail(`${flag} takes no value`);
      parsed.switches.add(token.name);
      continue;
    }
    // `--port --json`: parseArgs would take `--json` as the port; a value never looks like a flag.
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith("--")))
      throw fail(`${flag} needs a value`);
    if (token.name in parsed.values) throw fail(`${flag} is given more than once`);
    parsed.values[token.name] = token.value;
  }
  if (parsed.switches.has("help")) return parsed;
  const missing = spec.positionals[parsed.positionals.length];
  if (missing !== undefined) throw fail(`missing <${missing}> for 'petstore ${spec.name}'`);
  const extra = parsed.positionals[spec.positionals.length];
  if (extra !== undefined) throw fail(`unexpected argument '${extra}' for 'petstore ${spec.name}'`);
  return parsed;
}
