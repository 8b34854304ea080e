// The operator page's files admin-fetch.ts imports as text (`with { type: "text" }`): their contents.
declare module "*/page.html" {
  const text: string;
  export default text;
}
declare module "*/page.css" {
  const text: string;
  export default text;
}
// The page's ES modules are `.mjs`, a suffix no TypeScript source here imports.
declare module "*.mjs" {
  const text: string;
  export default text;
}
