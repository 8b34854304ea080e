import type { Settings } from "../options.js";
import type { Decision } from "../ports.js";
import { rolledKeyHeaders } from "../http/answer-headers.js";
import type { Identity } from "./identify.js";

/**
 * The key's use, once the request is answered: a rolled key's old secret gets the answer's
 * `Deprecation`, `Sunset` and (when configured) `Link` headers, so its client learns in-band
 * that it must take the new one and until when.
 */
export function keyUseStage(
  settings: Pick<Settings, "rolledKeyLink">,
): (response: Response, identity: Identity | undefined, decision: Decision | undefined) => void {
  const { rolledKeyLink } = settings;
  return (response, identity, decision) => {
    const caller = identity?.caller;
    if (!caller || !decision) return;
    if (identity.oldSecret) {
      for (const [name, value] of Object.entries(rolledKeyHeaders(caller.rolled!, rolledKeyLink))) {
        if (name === "Link") response.headers.append(name, value);
        else response.headers.set(name, value);
      }
    }
  };
}
