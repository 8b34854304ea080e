import {
  type AccountRecord,
  type ApiKeyRecord,
  type IssueApiKeyInput,
  issueApiKey,
  type KeyInAccountFields,
  type KeyView,
  asksOwnLimits,
  keyInAccount,
  keyView,
  newKeyProblems,
} from "@petstore/core";
import { type Storage, storageFailure } from "../storage/open-storage.js";
import type { ParsedArgs } from "../cli/parse-args.js";
import { UsageError } from "../cli/usage-error.js";
import type { Command } from "./_command.js";
import { noSuchAccount } from "./_account-text.js";
import { storedLine, withCredentialDatabase } from "./_database-file.js";
import { allowFromFlag, expiresFlag, flagProblems, labelFlag, limitFlag, planFlag, scopesFlag } from "./_key-flags.js";
import { shortTime } from "./_key-text.js";
import { cliActor, dbConfig } from "./_options.js";

/**
 * The key the flags ask for; into an account (`account`, read once the database is open), the
 * account's plan and limits unless the flags cap them (core's `keyInAccount`).
 */
function keyInput(args: ParsedArgs, account?: AccountRecord): { input: IssueApiKeyInput; ownLimits: boolean } {
  const asked: KeyInAccountFields = {};
  const { "per-minute": perMinute, "per-day": perDay, label, expires, scopes, "allow-from": allowFrom } = args.values;
  if (args.values.plan !== undefined) asked.plan = planFlag(args.values.plan);
  if (perMinute !== undefined) asked.perMinute = limitFlag(perMinute, "--per-minute")!;
  if (perDay !== undefined) asked.perDay = limitFlag(perDay, "--per-day")!;
  if (label !== undefined) asked.label = labelFlag(label);
  if (expires !== undefined) asked.expiresAt = expiresFlag(expires, Date.now())!;
  if (scopes !== undefined) asked.scopes = scopesFlag(scopes);
  const ranges = allowFrom === undefined ? null : allowFromFlag(allowFrom);
  if (ranges !== null) asked.allowFrom = ranges;
  if (!account && asked.plan === undefined)
    throw new UsageError("--plan is required (free, pro, business or enterprise)");
  const input = account ? keyInAccount(account, asked) : { ...asked, plan: asked.plan! };
  // Before a database is made or opened: a key that cannot be is a usage mistake.
  const problems = newKeyProblems(input, Date.now());
  if (problems.length > 0) throw new UsageError(flagProblems(problems));
  return { input, ownLimits: account !== undefined && asksOwnLimits(asked) };
}

/** The new key's view, its usage from the database's limiter unless its servers recorded that they count in Redis. */
async function usageView(storage: Storage, record: ApiKeyRecord): Promise<KeyView> {
  const countedInRedis = (await storage.recordedSetting("limiter")) === "redis";
  return keyView(record, countedInRedis ? {} : { limiter: storage.adapters.limiter });
}

/** `petstore keys create`: issues a key, stores only its hash, and shows the key this once. */
export const keysCreateCommand: Command = {
  spec: {
    name: "keys create",
    flags: {
      plan: "value",
      "per-minute": "value",
      "per-day": "value",
      label: "value",
      expires: "value",
      scopes: "value",
      "allow-from": "value",
      account: "value",
      db: "value",
      json: "switch",
    },
    positionals: [],
  },
  usage:
    "petstore keys create --plan free|pro|business|enterprise [--account ID] [--per-minute N] [--per-day N] [--label TEXT] [--expires ISO-8601] [--scopes S,...] [--allow-from CIDR,...] [--db URL] [--json]",
  help: `Creates an API key and prints it. The key is shown only this once: the database keeps its
SHA-256, never the key.

  --plan NAME       free (60/min, 1000/day), pro (300/10000), business (1000/100000),
                    or enterprise (needs --per-minute and --per-day)
  --account ID      the account the key joins (see 'petstore accounts create'): its requests
                    count against the account's limits too, with its other keys'. The key
                    follows the account's plan and limits (and their changes) unless
                    --plan, --per-minute or --per-day give it caps of its own: --plan that
                    plan's limits, a limit alone the account's plan and other limit of now.
                    Without it, the key gets an account of its own, with its plan and
                    limits (acct_ and its id's characters), printed
  --per-minute N    requests per minute for this key, overriding the plan's
  --per-day N       requests per day for this key, overriding the plan's
  --label TEXT      a note to recognise the key by in 'petstore keys list'
  --expires TIME    from this instant on the key is refused (401), e.g. 2027-01-31T00:00:00Z:
                    ISO 8601 with its offset, in the future ('petstore keys update' changes it)
  --scopes LIST     what the key may do, comma-separated: pets:read (list and get pets),
                    pets:write (create pets), orders:read (store orders); default all three.
                    Outside them a request is answered 403 insufficient_scope
  --allow-from LIST CIDR ranges the key's requests must come from, comma-separated, IPv4 or
                    IPv6 (10.0.0.0/8,2001:db8::/32; an address alone is a range of one); from
                    elsewhere 403 address_not_allowed. Default (or 'any'): any address
  --db URL          the database: file:PATH (default file:petstore.db, in the current
                    directory; made when missing), libsql://, postgres:// (env PETSTORE_DB;
                    PETSTORE_DB_AUTH_TOKEN, PGPASSWORD). Not :memory:, which ends with the command.
                    Give the database your server uses: a key stored elsewhere gets 401 there
  --json            print one JSON object: the key as 'petstore keys show --json' prints it
                    (id, plan, perMinute, perDay, label, createdAt, expiresAt, ...) with key,
                    database (the path or URL it was stored in) and databaseCreated (true
                    when made now)`,
  run: async (args, env, io) => {
    const accountId = args.values.account;
    // Checked before a database is made or opened, unless the account's plan completes it.
    if (accountId === undefined) keyInput(args);
    const db = dbConfig(args, env);
    // A key in a process's private memory is gone when the command ends (exit 0 would lie).
    const memoryMistake = `--db :memory: would lose the key when this command ends: give the database the server uses (a :memory: server takes its key from PETSTORE_BOOTSTRAP_KEY, see '${io.program} serve --help')`;
    return withCredentialDatabase(db, memoryMistake, async (target) => {
      const { storage, database, created } = target;
      const account = accountId === undefined ? undefined : await storage.adapters.keys.getAccount(accountId);
      if (accountId !== undefined && account === undefined) return noSuchAccount(io, accountId);
      const { input, ownLimits } = keyInput(args, account);
      const options = {
        actor: cliActor(env),
        ...(account !== undefined && { accountId: account.id }),
        ...(ownLimits && { ownLimits: true as const }),
      };
      const { key, record } = await issueApiKey(storage.adapters.keys, input, options).catch((error: unknown) => {
        throw new Error(storageFailure(db, error), { cause: error });
      });
      // The key exists now: whatever the limiter says (or fails to say), it is printed.
      const view = await usageView(storage, record).catch(() => keyView(record));
      if (args.switches.has("json")) {
        io.out(JSON.stringify({ ...view, key, database, databaseCreated: created }));
      } else {
        const label = record.label === undefined ? "" : `, label ${JSON.stringify(record.label)}`;
        const expires = view.expiresAt === null ? "" : `, expires ${shortTime(view.expiresAt)}`;
        io.out(
          `Created API key ${record.id} (plan ${record.plan}: ${view.perMinute} requests/minute, ${view.perDay} requests/day${label}${expires}).`,
        );
        io.out(storedLine(target, "A server on another database answers this key 401"));
        io.out("");
        io.out(`    ${key}`);
        io.out("");
        io.out("This is the only time the key is shown: store it now. Send it as 'Authorization: Bearer <key>'.");
        io.out(
          account === undefined
            ? `In account ${record.accountId}, made for it with the key's plan and limits.`
            : `In account ${record.accountId} (${JSON.stringify(account.name)}), with its other keys.`,
        );
      }
      return 0;
    });
  },
};
