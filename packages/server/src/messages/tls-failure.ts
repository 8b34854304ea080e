import { firstLine } from "./first-line.js";
import { errorChain } from "@petstore/core";
/** Error codes of Node's and Bun's TLS: a certificate refused, a handshake that failed. */
const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|ERR_OSSL|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|CERT_|HOSTNAME_MISMATCH|TLS)/;

/**
 * `TLS: <why>` when `error` (or one of its causes) is a TLS failure: the server's certificate
 * not trusted (`UNABLE_TO_VERIFY_LEAF_SIGNATURE`, `SELF_SIGNED_CERT_IN_CHAIN`...), issued for
 * another host name (`ERR_TLS_CERT_ALTNAME_INVALID`), or a handshake cut short; undefined
 * otherwise. The one line a server prints when it cannot start says TLS, not just "closed".
 */
export function tlsFailure(error: unknown): string | undefined {
  for (const cause of errorChain(error)) {
    const code = (cause as { code?: unknown }).code;
    if ((typeof code === "string" && TLS_CODES.test(code)) || /\b(TLS|SSL)\b|certificate/i.test(cause.message)) {
      return `TLS: ${firstLine(cause)}${typeof code === "string" ? ` (${code})` : ""}`;
    }
  }
  return undefined;
}
