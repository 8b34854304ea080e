#!/usr/bin/env bash
# The Debian tools the test suites drive (`npm test` runs this first). Missing ones are
# installed with apt-get when we are root; otherwise one line names the packages and exits 1.
set -euo pipefail

# command -> Debian package that provides it
declare -A tools=(
  [chromium]=chromium              # test/e2e/docs-browser.test.ts
  [sqlite3]=sqlite3                # the lock and fault suites open the database from outside
  [python3]=python3                # ... and so does Python's sqlite3 module
  [chattr]=e2fsprogs               # test/faults: read-only database files
  [prometheus]=prometheus          # test/e2e/prometheus-scrape.test.ts scrapes the binary
  [promtool]=prometheus            # checks the exposition; unit-tests deploy/prometheus rules
  [systemd-analyze]=systemd        # test/deploy/systemd.test.ts verifies deploy/systemd units
  [mount]=mount                    # test/faults and backup.test.ts: small tmpfs mounts (as root)
  [qemu-aarch64-static]=qemu-user-static  # test/release runs the linux-arm64 binary
  [file]=file                      # ... and checks every binary's format and architecture
  [sha256sum]=coreutils            # ... and its SHA256SUMS
  [setpriv]=util-linux             # test/_support/postgres-server.ts runs PostgreSQL as its own user
  [faketime]=faketime              # test/scale-out: servers whose clocks disagree (libfaketime)
  [redis-server]=redis-server      # packages/adapters/src/redis and the binary's --limiter redis:// tests
  [redis-cli]=redis-tools          # test/_support/redis-cluster.ts: --cluster create, CLUSTER NODES
  [redis-sentinel]=redis-sentinel  # test/_support/redis-sentinel.ts: three sentinels over a master and its replica
  [pgbouncer]=pgbouncer            # test/_support/pgbouncer.ts: PostgreSQL behind transaction and session pooling
  [openssl]=openssl                # test/_support/tls-certificates.ts: a CA and certificates for PostgreSQL and Redis over TLS
)

# file -> Debian package that provides it: arm64 libraries the emulated binary loads, from
# Debian's cross packages (architecture "all", so no `dpkg --add-architecture` is needed).
declare -A files=(
  [/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1]=libc6-arm64-cross
  [/usr/aarch64-linux-gnu/lib/libgcc_s.so.1]=libgcc-s1-arm64-cross
)

missing=()
# PostgreSQL's server binaries live in a versioned directory (/usr/lib/postgresql/<major>/bin),
# which test/_support/postgres-server.ts finds; the package also makes the `postgres` user.
compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null && id -u postgres >/dev/null 2>&1 || missing+=(postgresql)
for command in "${!tools[@]}"; do
  command -v "$command" >/dev/null 2>&1 || missing+=("${tools[$command]}")
done
for file in "${!files[@]}"; do
  [ -e "$file" ] || missing+=("${files[$file]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test-tools: installing ${missing[*]} (Debian packages the tests need)" >&2
  apt-get update -qq
  # One package may provide several commands (prometheus: prometheus and promtool).
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "test-tools: the tests need these Debian packages: ${missing[*]} (sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
