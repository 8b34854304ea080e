/**
 * The check a factory makes of what it is given (`createPetstore`, `createAdmin`, `keyLife`),
 * so that a mistake is one `TypeError` at construction naming what is missing or wrong and the
 * fix, never a 500 on every request or a `Cannot read properties of undefined` later.
 */

/** Each option a factory needs: the methods it calls on it, or `"function"` for a callback. */
export type Needs = Record<string, readonly string[] | "function">;

/** "a", "a and b", "a, b and c". */
const listed = (names: readonly string[]) =>
  names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;

/** Throws the one `TypeError` for `options` lacking what `needs` names; `fix` says where to get it. */
export function checkOptions(factory: string, options: unknown, needs: Needs, fix: string): void {
  const names = Object.keys(needs);
  if (typeof options !== "object" || options === null)
    throw new TypeError(`${factory} needs an options object with ${listed(names)}: ${fix}`);
  const given = options as Record<string, unknown>;
  const missing = names.filter((name) => given[name] === undefined || given[name] === null);
  if (missing.length > 0) {
    const present = names.filter((name) => !missing.includes(name));
    const beside = present.length > 0 ? ` beside ${listed(present)}` : "";
    throw new TypeError(`${factory} needs ${listed(missing)}${beside}: ${fix}`);
  }
  for (const [name, need] of Object.entries(needs)) {
    const value = given[name];
    if (need === "function") {
      if (typeof value !== "function")
        throw new TypeError(`${factory}'s ${name} must be a function, not ${typeof value}`);
      continue;
    }
    const lacking = need.filter((method) => typeof (value as Record<string, unknown>)[method] !== "function");
    if (lacking.length > 0)
      throw new TypeError(
        `${factory}'s ${name} lacks ${listed(lacking)}: it is not the port ${factory} needs (${fix})`,
      );
  }
}
