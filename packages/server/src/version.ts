import packageJson from "../package.json" with { type: "json" };

/** The version `petstore --version` prints: the server package's. */
export const VERSION: string = packageJson.version;
