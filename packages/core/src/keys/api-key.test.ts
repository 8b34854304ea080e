import { createHash } from "node:crypto";
import { crc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { generateApiKey, hashApiKey, isWellFormedApiKey, randomBase62 } from "./api-key.js";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** The checksum as the format defines it, computed independently: CRC-32 in 6 base62 digits. */
function expectedChecksum(body: string): string {
  let value = crc32(body);
  let out = "";
  for (let i = 0; i < 6; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

describe("API keys", () => {
  it("are psk_ followed by 32 random base62 characters and a 6-character CRC-32 checksum", async () => {
    const key = generateApiKey();
    expect(key).toMatch(/^psk_[0-9A-Za-z]{38}$/);
    const body = key.slice(4, 36);
    expect(key.slice(36)).toBe(expectedChecksum(body));
    expect(generateApiKey(() => body)).toBe(key);
  });

  it("accepts every key generateApiKey makes", () => {
    for (let i = 0; i < 200; i++) expect(isWellFormedApiKey(generateApiKey())).toBe(true);
  });

  it("rejects every one-character typo, in the random part and in the checksum", () => {
    const key = generateApiKey();
    for (let position = 4; position < key.length; position++) {
      for (const replacement of BASE62) {
        if (replacement === key[position]) continue;
        const typo = key.slice(0, position) + replacement + key.slice(position + 1);
        expect(isWellFormedApiKey(typo), typo).toBe(false);
      }
    }
  });

  it("rejects two swapped neighbouring characters", () => {
    const key = generateApiKey(() => "0123456789ABCDEFGHIJKLMNOPQRSTUV");
    for (let position = 4; position < key.length - 1; position++) {
      if (key[position] === key[position + 1]) continue;
      const swapped = key.slice(0, position) + key[position + 1] + key[position] + key.slice(position + 2);
      expect(isWellFormedApiKey(swapped), swapped).toBe(false);
    }
  });

  it("rejects the wrong prefix, a wrong length and characters outside base62", () => {
    const key = generateApiKey();
    for (const bad of [
      `PSK_${key.slice(4)}`,
      `psk-${key.slice(4)}`,
      key.slice(0, -1),
      `${key}0`,
      `${key.slice(0, 10)}_${key.slice(11)}`,
      ` ${key}`,
      "",
    ]) {
      expect(isWellFormedApiKey(bad), bad).toBe(false);
    }
  });

  it("makes random text of any length, beyond what one getRandomValues call may fill", () => {
    expect(randomBase62(100_000)).toMatch(/^[0-9A-Za-z]{100000}$/);
  });

  it("draws every base62 character equally often", () => {
    const counts = new Map<string, number>();
    for (const char of randomBase62(62 * 4_000)) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect([...counts.keys()].sort().join("")).toBe([...BASE62].sort().join(""));
    // 4,000 expected each (standard deviation about 63): 10% off is six deviations, so only a bias gets there.
    for (const [char, count] of counts) expect(Math.abs(count - 4_000), char).toBeLessThan(400);
  });

  it("hashes a key to the lowercase hex SHA-256 of its text", async () => {
    expect(await hashApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const key = generateApiKey();
    expect(await hashApiKey(key)).toBe(createHash("sha256").update(key).digest("hex"));
  });
});
