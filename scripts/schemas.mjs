#!/usr/bin/env node
// Writes schema/*.json, the JSON Schemas the package ships, from their hand-written sources in
// schema/src/: each shipped schema is its top (schema/src/<name>.json) with the shared
// definitions of schema/src/defs.json it reaches. Each shipped file stands alone (only `#/$defs/…`
// references), so an editor validates with it offline whatever the schema's `$id` says. A test
// checks the shipped files against their sources (`npm run schemas` after editing schema/src/).
import fs from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const SCHEMAS = ['provider', 'capability', 'definition', 'config'];

const dir = (rel) => fileURLToPath(new URL(`../schema/${rel}`, import.meta.url));
const readJson = (rel) => JSON.parse(fs.readFileSync(dir(rel), 'utf8'));

/** The names of the shared definitions `value` refers to. */
function refsOf(value, out = new Set()) {
  if (Array.isArray(value)) {
    for (const v of value) refsOf(v, out);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')) out.add(v.slice('#/$defs/'.length));
      else refsOf(v, out);
    }
  }
  return out;
}

/** The text of schema/<name>.json. */
export function bundle(name) {
  const { $defs } = readJson('src/defs.json');
  const top = readJson(`src/${name}.json`);
  const reached = new Set();
  const pending = [...refsOf(top)];
  while (pending.length > 0) {
    const ref = pending.pop();
    if (reached.has(ref)) continue;
    if (!(ref in $defs)) throw new Error(`schema/src/${name}.json reaches #/$defs/${ref}, which schema/src/defs.json lacks`);
    reached.add(ref);
    pending.push(...refsOf($defs[ref]));
  }
  const used = Object.fromEntries(Object.entries($defs).filter(([key]) => reached.has(key)));
  return `${JSON.stringify({ ...top, $defs: used }, null, 2)}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const name of SCHEMAS) fs.writeFileSync(dir(`${name}.json`), bundle(name));
}
