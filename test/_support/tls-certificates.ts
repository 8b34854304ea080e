import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A certificate and its key, as PEM files. */
export interface CertificateFiles {
  cert: string;
  key: string;
}

/** What a TLS test needs: a CA the clients trust, another one they do not, and certificates from each. */
export interface TestCertificates {
  dir: string;
  /** The CA the clients are told to trust (PEM file). */
  ca: string;
  /** For 127.0.0.1 and localhost, from `ca`. */
  server: CertificateFiles;
  /** For another host only (elsewhere.test), from `ca`: a wrong host name. */
  otherHost: CertificateFiles;
  /** For 127.0.0.1 and localhost, from a CA the clients do not trust. */
  untrusted: CertificateFiles;
  /** Removes the directory. */
  remove(): void;
}

const openssl = (dir: string, ...args: string[]) =>
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });

/** A self-signed CA, `name.pem` and `name.key`. */
function makeCa(dir: string, name: string): void {
  openssl(
    dir,
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.pem`,
    "-days",
    "2",
    "-subj",
    `/CN=${name}`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  );
}

/** A server certificate for `altNames` (subjectAltName syntax), signed by the CA `ca`. */
function makeServer(dir: string, name: string, ca: string, altNames: string): CertificateFiles {
  openssl(
    dir,
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
    "-subj",
    `/CN=${name}`,
  );
  writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${altNames}\nextendedKeyUsage=serverAuth\n`);
  openssl(
    dir,
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${ca}.pem`,
    "-CAkey",
    `${ca}.key`,
    "-CAcreateserial",
    "-out",
    `${name}.pem`,
    "-days",
    "2",
    "-extfile",
    `${name}.ext`,
  );
  return { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
}

/**
 * Makes, with `openssl` (installed by scripts/test-tools.sh), a CA and a server certificate
 * for 127.0.0.1, one for another host name, and one from a second CA nobody trusts, in a new
 * temporary directory. The files belong to `owner` (a server that refuses keys others may
 * read, as PostgreSQL does, runs as it), the keys readable by it alone.
 */
export function makeTestCertificates(owner?: { uid: number; gid: number }): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), "petstore-tls-"));
  makeCa(dir, "test-ca");
  makeCa(dir, "untrusted-ca");
  const server = makeServer(dir, "server", "test-ca", "IP:127.0.0.1,DNS:localhost");
  const otherHost = makeServer(dir, "other-host", "test-ca", "DNS:elsewhere.test");
  const untrusted = makeServer(dir, "untrusted", "untrusted-ca", "IP:127.0.0.1,DNS:localhost");
  if (owner !== undefined) {
    chownSync(dir, owner.uid, owner.gid);
    for (const files of [server, otherHost, untrusted]) {
      for (const file of [files.cert, files.key]) chownSync(file, owner.uid, owner.gid);
      chmodSync(files.key, 0o600);
    }
  }
  return {
    dir,
    ca: join(dir, "test-ca.pem"),
    server,
    otherHost,
    untrusted,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
