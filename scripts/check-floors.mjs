#!/usr/bin/env node
// The engine's floors (SPEC D28): every path a file of `src/` names through `crate::`, `super::`
// or `self::` (a `use` line or inline, and a bare path through a module a `use` brought in)
// points to a file on its own floor or a lower one, and no two files reach each other through
// any chain. Test modules (`#[cfg(test)] mod … { }`) and files included only under `cfg(test)`
// do not count, nor do comments and string literals.
//
//   node scripts/check-floors.mjs [SRC_DIR]      exit 1 listing upward imports and circles
import { readFileSync, existsSync } from 'node:fs';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Top-level modules by floor, lowest first. */
export const FLOORS = [
  ['error', 'ids', 'json', 'fsx', 'lane', 'memory', 'cursor', 'hostcall', 'encoder', 'opcount', 'workers'],
  ['config', 'definitions'],
  ['snapshot'],
  ['store', 'scope', 'knowledge'],
  ['query', 'matching'],
  ['sources'],
  ['engine'],
  ['binding'],
];

const floorOf = new Map(FLOORS.flatMap((mods, floor) => mods.map((m) => [m, floor])));

/** Rust source as tokens: identifiers, `::` and single punctuation; comments, string, byte
 * string, raw string and char literals and lifetimes are dropped. */
export function tokenize(text) {
  const tokens = [];
  let i = 0;
  const n = text.length;
  const isIdStart = (c) => /[A-Za-z_]/.test(c) || c > '\x7f';
  const isId = (c) => /[A-Za-z0-9_]/.test(c) || c > '\x7f';
  const skipQuoted = (j) => {
    // j is just after the opening quote of a "…" literal
    while (j < n && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
    return j + 1;
  };
  const skipRaw = (j) => {
    // j at the `#`s or quote after `r`
    let hashes = 0;
    while (text[j] === '#') hashes++, j++;
    if (text[j] !== '"') return -1;
    const close = '"' + '#'.repeat(hashes);
    const end = text.indexOf(close, j + 1);
    return end < 0 ? n : end + close.length;
  };
  while (i < n) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? n : end;
    } else if (c === '/' && text[i + 1] === '*') {
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (text[i] === '/' && text[i + 1] === '*') depth++, (i += 2);
        else if (text[i] === '*' && text[i + 1] === '/') depth--, (i += 2);
        else i++;
      }
    } else if (c === '"') {
      i = skipQuoted(i + 1);
    } else if ((c === 'r' || (c === 'b' && text[i + 1] === 'r')) && !isId(text[i - 1] ?? ' ')) {
      const at = c === 'r' ? i + 1 : i + 2;
      const end = text[at] === '"' || text[at] === '#' ? skipRaw(at) : -1;
      if (end >= 0) i = end;
      else if (c === 'r' && text[i + 1] === '#' && isIdStart(text[i + 2] ?? '')) {
        // raw identifier r#name
        let j = i + 2;
        while (j < n && isId(text[j])) j++;
        tokens.push(text.slice(i + 2, j));
        i = j;
      } else {
        let j = i;
        while (j < n && isId(text[j])) j++;
        tokens.push(text.slice(i, j));
        i = j;
      }
    } else if (c === 'b' && (text[i + 1] === '"' || text[i + 1] === "'") && !isId(text[i - 1] ?? ' ')) {
      if (text[i + 1] === '"') i = skipQuoted(i + 2);
      else i = skipChar(i + 1);
    } else if (c === "'") {
      // a char literal, or a lifetime / label (dropped either way)
      const end = charEnd(i);
      if (end >= 0) i = end;
      else {
        let j = i + 1;
        while (j < n && isId(text[j])) j++;
        i = j;
      }
    } else if (isIdStart(c)) {
      let j = i;
      while (j < n && isId(text[j])) j++;
      tokens.push(text.slice(i, j));
      i = j;
    } else if (c === ':' && text[i + 1] === ':') {
      tokens.push('::');
      i += 2;
    } else if (/\s/.test(c)) {
      i++;
    } else {
      tokens.push(c);
      i++;
    }
  }
  return tokens;

  function charEnd(q) {
    // q at the opening quote; the index after the closing quote, or -1 for a lifetime
    if (text[q + 1] === '\\') {
      let j = q + 2;
      while (j < n && text[j] !== "'") j++;
      return j + 1;
    }
    const cp = text.codePointAt(q + 1);
    if (cp === undefined) return -1;
    const width = cp > 0xffff ? 2 : 1;
    return text[q + 1 + width] === "'" ? q + 2 + width : -1;
  }
  function skipChar(q) {
    const end = charEnd(q);
    return end < 0 ? q + 1 : end;
  }
}

/** Whether a `cfg(…)` predicate (as tokens inside the parentheses) holds only under test. */
function onlyUnderTest(tokens) {
  let at = 0;
  const parse = () => {
    const name = tokens[at++];
    if (name === 'all' || name === 'any' || name === 'not') {
      const args = [];
      at++; // (
      while (tokens[at] !== ')') {
        args.push(parse());
        if (tokens[at] === ',') at++;
      }
      at++; // )
      if (name === 'all') return args.some(Boolean);
      if (name === 'any') return args.length > 0 && args.every(Boolean);
      return false;
    }
    if (tokens[at] === '=') at += 1; // key = "value" (the value was a string, dropped)
    return name === 'test';
  };
  return parse();
}

/** The index after the token group opened at `at` (`{`, `(` or `[`). */
function closing(tokens, at) {
  const open = tokens[at];
  const close = { '{': '}', '(': ')', '[': ']' }[open];
  let depth = 0;
  for (let j = at; j < tokens.length; j++) {
    if (tokens[j] === open) depth++;
    else if (tokens[j] === close && --depth === 0) return j + 1;
  }
  return tokens.length;
}

/**
 * One file's declarations and paths. `module` is its module path (['snapshot', 'size']).
 * Returns child module declarations (`mod x;`, with whether only under test) and every path
 * it names, made absolute (['crate', …] segments without 'crate').
 */
export function scanFile(tokens, module) {
  const children = [];
  const paths = [];
  const aliases = new Map(); // name brought in by `use` -> absolute path
  const mods = []; // inline module stack: { name, end }
  const here = () => [...module, ...mods.map((m) => m.name)];

  const absolute = (segs, base) => {
    // resolve crate/super/self at the head of `segs` against the module path `base`
    let out;
    let k = 0;
    if (segs[0] === 'crate') (out = []), (k = 1);
    else if (segs[0] === 'super' || segs[0] === 'self') {
      out = [...base];
      while (segs[k] === 'super' || segs[k] === 'self') {
        if (segs[k] === 'super') out.pop();
        k++;
      }
    } else return null;
    return [...out, ...segs.slice(k)];
  };

  // `use` trees, expanded: each leaf as a segment list (with `self` leaves folded into their prefix)
  const useTree = (at, prefix, leaves) => {
    let segs = [...prefix];
    while (at < tokens.length) {
      const t = tokens[at];
      if (t === '{') {
        const end = closing(tokens, at) - 1;
        let j = at + 1;
        while (j < end) {
          j = useTree(j, segs, leaves);
          if (tokens[j] === ',') j++;
        }
        return end + 1;
      }
      if (t === '*') {
        leaves.push({ segs, alias: null });
        return at + 1;
      }
      if (t === '::') {
        at++;
        continue;
      }
      if (/^[A-Za-z_]/.test(t)) {
        if (t === 'self' && segs.length === prefix.length && prefix.length > 0) {
          // `{self, …}`: the prefix itself
          leaves.push({ segs, alias: prefix[prefix.length - 1] });
          at++;
          if (tokens[at] === 'as') at += 2;
          return at;
        }
        segs = [...segs, t];
        at++;
        if (tokens[at] === 'as') {
          leaves.push({ segs, alias: tokens[at + 1] });
          return at + 2;
        }
        if (tokens[at] !== '::') {
          leaves.push({ segs, alias: t });
          return at;
        }
        continue;
      }
      return at; // `,` or `}` or `;`
    }
    return at;
  };

  let cfgTest = false;
  for (let i = 0; i < tokens.length; i++) {
    while (mods.length && i >= mods[mods.length - 1].end) mods.pop();
    const t = tokens[i];
    if (t === '#' && tokens[i + 1] === '[') {
      const end = closing(tokens, i + 1);
      if (tokens[i + 2] === 'cfg' && tokens[i + 3] === '(') {
        if (onlyUnderTest(tokens.slice(i + 4, closing(tokens, i + 3) - 1))) cfgTest = true;
        i = end - 1;
        continue;
      }
      // other attributes: their paths (`#[cfg_attr]`, derive paths) still count
      continue;
    }
    if (t === '#' && tokens[i + 1] === '!' && tokens[i + 2] === '[') {
      i = closing(tokens, i + 2) - 1;
      continue;
    }
    if (t === 'mod' && /^[A-Za-z_]/.test(tokens[i + 1] ?? '') && (tokens[i + 2] === ';' || tokens[i + 2] === '{')) {
      const name = tokens[i + 1];
      if (tokens[i + 2] === ';') {
        if (mods.length === 0) children.push({ name, test: cfgTest });
        cfgTest = false;
        i += 2;
        continue;
      }
      const end = closing(tokens, i + 2);
      if (cfgTest) {
        cfgTest = false;
        i = end - 1; // a test module: nothing inside counts
        continue;
      }
      mods.push({ name, end });
      i += 2;
      continue;
    }
    if (t === 'use' && tokens[i - 1] !== '::') {
      const leaves = [];
      const end = useTree(i + 1, [], leaves);
      for (const { segs, alias } of leaves) {
        const abs = absolute(segs, here()) ?? (aliases.has(segs[0]) ? [...aliases.get(segs[0]), ...segs.slice(1)] : null);
        if (!abs) continue;
        if (!cfgTest) paths.push(abs);
        if (alias && alias !== '_' && !cfgTest) aliases.set(alias, abs);
      }
      cfgTest = false;
      i = end;
      continue;
    }
    if (t === ';' || t === '}') cfgTest = false;
    if (t === '{' && cfgTest) {
      // a `#[cfg(test)]` item's body (a function, an impl): leave it out as a test module is
      cfgTest = false;
      i = closing(tokens, i) - 1;
      continue;
    }
    const prev = tokens[i - 1];
    if ((t === 'crate' || t === 'super' || t === 'self') && tokens[i + 1] === '::' && prev !== '::' && prev !== '$') {
      const segs = [t];
      let j = i + 1;
      while (tokens[j] === '::' && /^[A-Za-z_]/.test(tokens[j + 1] ?? '')) {
        segs.push(tokens[j + 1]);
        j += 2;
      }
      if (!cfgTest) paths.push(absolute(segs, here()));
      i = j - 1;
      continue;
    }
    if (aliases.has(t) && tokens[i + 1] === '::' && prev !== '::' && prev !== '$' && prev !== '.') {
      const segs = [];
      let j = i + 1;
      while (tokens[j] === '::' && /^[A-Za-z_]/.test(tokens[j + 1] ?? '')) {
        segs.push(tokens[j + 1]);
        j += 2;
      }
      if (!cfgTest) paths.push([...aliases.get(t), ...segs]);
      i = j - 1;
    }
  }
  return { children, paths };
}

/** Reads the crate at `srcDir` (from lib.rs) and returns its files, edges, upward imports and circles. */
export function analyze(srcDir, read = (p) => readFileSync(p, 'utf8'), exists = existsSync) {
  const files = new Map(); // module key ('snapshot::size', '' for the root) -> { file, scan }
  const visit = (module, file, dir) => {
    const scan = scanFile(tokenize(read(file)), module);
    files.set(module.join('::'), { file, module, scan });
    for (const child of scan.children) {
      if (child.test) continue;
      const flat = join(dir, `${child.name}.rs`);
      const nested = join(dir, child.name, 'mod.rs');
      const childFile = exists(flat) ? flat : exists(nested) ? nested : null;
      if (!childFile) throw new Error(`module ${[...module, child.name].join('::')} has no file`);
      visit([...module, child.name], childFile, join(dir, child.name));
    }
  };
  visit([], join(srcDir, 'lib.rs'), srcDir);

  const fileOf = (path) => {
    for (let k = path.length; k >= 0; k--) {
      const hit = files.get(path.slice(0, k).join('::'));
      if (hit) return hit;
    }
    return files.get('');
  };
  const floor = (entry) => (entry.module.length ? floorOf.get(entry.module[0]) : -1);
  const name = (entry) => relative(dirname(srcDir), entry.file).split('\\').join('/');

  const edges = new Map(); // file -> Set(file)
  const upward = [];
  const unknown = [];
  for (const entry of files.values()) {
    const from = name(entry);
    edges.set(from, edges.get(from) ?? new Set());
    if (entry.module.length && floor(entry) === undefined) unknown.push(from);
    for (const path of entry.scan.paths) {
      const target = fileOf(path);
      if (target === entry) continue;
      const to = name(target);
      edges.get(from).add(to);
      const named = `crate::${path.join('::')}`;
      if (floor(target) > floor(entry) && !upward.some((u) => u.from === from && u.path === named)) {
        upward.push({ from, to, path: named });
      }
    }
  }
  return { files: [...files.values()].map(name), edges, upward, circles: circles(edges), unknown };
}

/** The strongly connected components of more than one file, each with one cycle through them. */
export function circles(edges) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const out = [];
  const strong = (v) => {
    idx.set(v, index), low.set(v, index++), stack.push(v), on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) strong(w), low.set(v, Math.min(low.get(v), low.get(w)));
      else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const part = [];
      let w;
      do (w = stack.pop()), on.delete(w), part.push(w);
      while (w !== v);
      if (part.length > 1) out.push(part.sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) strong(v);
  return out.map((files) => ({ files, cycle: cycleThrough(files, edges) }));
}

function cycleThrough(files, edges) {
  // the shortest cycle from the component's first file back to it
  const inside = new Set(files);
  const start = files[0];
  const from = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of edges.get(v) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const cycle = [v];
        for (let u = from.get(v); u !== null; u = from.get(u)) cycle.unshift(u);
        return [...cycle, start];
      }
      if (!from.has(w)) from.set(w, v), queue.push(w);
    }
  }
  return files;
}

function main() {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const src = process.argv[2] ?? join(root, 'src');
  const { files, upward, circles: found, unknown } = analyze(src);
  for (const u of upward) console.log(`upward: ${u.from} -> ${u.to} (${u.path})`);
  for (const c of found) console.log(`circle: ${c.cycle.join(' -> ')}${c.files.length > c.cycle.length - 1 ? ` (${c.files.length} files: ${c.files.join(', ')})` : ''}`);
  for (const f of unknown) console.log(`no floor: ${f} (add its module to FLOORS)`);
  const failed = upward.length + found.length + unknown.length;
  console.log(`floors: ${files.length} files, ${upward.length} upward imports, ${found.length} circles`);
  process.exit(failed ? 1 : 0);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
