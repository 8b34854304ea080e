/**
 * Every relative link of every Markdown file in the repository resolves: the file exists, and
 * an `#anchor` into a Markdown file names one of its headings (GitHub's slugs). Pages move
 * (the README's sections now live in docs/), and a dead link is the first thing a newcomer meets.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const markdown = execFileSync("git", ["ls-files", "*.md"], { cwd: ROOT, encoding: "utf8" })
  .trim()
  .split("\n")
  .filter(Boolean);

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!
      .replace(/`/g, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .trim()
      .toLowerCase();
    const slug = text.replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The relative links of a Markdown text, outside code blocks and code spans. */
function linksOf(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe("the Markdown files' relative links", () => {
  it("finds the Markdown files", () => {
    expect(markdown).toEqual(expect.arrayContaining(["README.md", "CONTRIBUTING.md"]));
  });

  it.each(markdown)("%s: every relative link and anchor resolves", (file) => {
    const path = join(ROOT, file);
    const broken: string[] = [];
    for (const link of linksOf(readFileSync(path, "utf8"))) {
      const [target, anchor] = link.split("#") as [string, string | undefined];
      const resolved = target === "" ? path : resolve(dirname(path), decodeURIComponent(target));
      if (!existsSync(resolved)) {
        broken.push(`${link}: no such file`);
        continue;
      }
      if (
        anchor !== undefined &&
        resolved.endsWith(".md") &&
        statSync(resolved).isFile() &&
        !anchorsOf(resolved).has(anchor)
      ) {
        broken.push(`${link}: no heading with that anchor`);
      }
    }
    expect(broken).toEqual([]);
  });
});

/**
 * The files outside Markdown that send a reader to a page (the systemd units' comments):
 * `see PATH.md, "Heading"` names a file that exists and a heading it has.
 */
describe("the deploy files' references to the documentation", () => {
  const files = execFileSync("git", ["ls-files", "deploy"], { cwd: ROOT, encoding: "utf8" })
    .trim()
    .split("\n")
    .filter(Boolean);
  const references = files.flatMap((file) =>
    [...readFileSync(join(ROOT, file), "utf8").matchAll(/([\w./-]+\.md)(?:, "([^"]+)")?/g)].map((match) => ({
      file,
      page: match[1]!,
      heading: match[2],
    })),
  );

  it("finds them (petstore.service points to its install steps)", () => {
    expect(references.map(({ file }) => file)).toContain("deploy/systemd/petstore.service");
  });

  it.each(references)("$file: $page, $heading", ({ page, heading }) => {
    const path = join(ROOT, page);
    expect(existsSync(path)).toBe(true);
    if (heading !== undefined)
      expect([...anchorsOf(path)]).toContain(
        heading
          .toLowerCase()
          .replace(/[^\p{L}\p{N}\s_-]/gu, "")
          .replace(/\s/g, "-"),
      );
  });
});
