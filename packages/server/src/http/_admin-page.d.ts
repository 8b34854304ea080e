// The operator page's files admin-fetch.ts imports as text (`with { type: "text" }`): their contents.
declare module "*/page.html" {
  const text: string;
  export default text;
}
declare module "*/page.css" {
  const text: string;
  export default text;
}
declare module "*/page.js" {
  const text: string;
  export default text;
}
