// The swagger-ui-dist files docs.ts imports as text (`with { type: "text" }`): their contents.
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const text: string;
  export default text;
}
declare module "swagger-ui-dist/swagger-ui.css" {
  const text: string;
  export default text;
}
declare module "swagger-ui-dist/index.css" {
  const text: string;
  export default text;
}
