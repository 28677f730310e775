// Writes a synthetic file provider (directory layout) with N capabilities, deterministically.
// Generated trees are cached under $BENCH_CACHE (default os.tmpdir()) by N and
// GENERATOR_VERSION: writing 100k files takes longer than benchmarking them. Bump the version
// whenever the output changes. Records are generated and written one at a time (at most 256
// writes in flight), so a million capabilities never sit in memory together.
//
//   node bench/generate.mjs 10000   → prints the provider directory

import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

export const GENERATOR_VERSION = 2;
export const PROVIDER_ID = 'bench.synthetic';

// A group of ~40 capabilities and 25 groups per area give 1 area at 1k and 100 at 100k, so both
// the folder tree and the ID prefixes look like a real catalog at every size.
const GROUP_SIZE = 40;
const GROUPS_PER_AREA = 25;

/** Capability `i`'s ID; derivable without generating, so workers can pick random IDs. */
export function capabilityId(i) {
  const g = Math.floor(i / GROUP_SIZE);
  return `area${Math.floor(g / GROUPS_PER_AREA)}.group${g}.cap${i}`;
}

/** Every third capability maps one document, so workers can pick IDs that have knowledge. */
export const hasKnowledge = (i) => i % 3 === 0;
const documentPath = (i) => `knowledge/area${Math.floor(i / GROUP_SIZE / GROUPS_PER_AREA)}/cap${i}.md`;

/** mulberry32: tiny, seedable and good enough to pick words and edges. */
export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  next.int = (n) => Math.floor(next() * n);
  next.pick = (list) => list[next.int(list.length)];
  return next;
}

const VERBS = ['validate', 'route', 'cache', 'render', 'schedule', 'migrate', 'index', 'export',
  'import', 'authorize', 'audit', 'retry', 'throttle', 'serialize', 'parse', 'notify', 'archive',
  'sign', 'encrypt', 'compress', 'paginate', 'aggregate', 'deduplicate', 'reconcile', 'publish'];
const NOUNS = ['request', 'payload', 'session', 'invoice', 'report', 'webhook', 'queue', 'record',
  'schema', 'template', 'endpoint', 'token', 'customer', 'order', 'ledger', 'event', 'metric',
  'document', 'attachment', 'tenant', 'job', 'snapshot', 'config', 'permission', 'cursor'];
const QUALIFIERS = ['incoming', 'stored', 'pending', 'signed', 'partial', 'nested', 'batched',
  'versioned', 'external', 'internal', 'expired', 'encrypted', 'paged', 'cached', 'streamed'];
const PLACES = ['at the request boundary', 'before it is persisted', 'inside a background job',
  'when a tenant is provisioned', 'during nightly maintenance', 'behind the public API',
  'in the admin console', 'after a deployment', 'for audit purposes', 'across service restarts'];

function sentence(rnd, words) {
  const parts = [];
  for (let i = 0; i < words; i++) {
    parts.push(i % 3 === 0 ? rnd.pick(VERBS) : i % 3 === 1 ? rnd.pick(QUALIFIERS) : rnd.pick(NOUNS));
  }
  return parts.join(' ');
}

function capability(i, n, rnd) {
  const id = capabilityId(i);
  const group = Math.floor(i / GROUP_SIZE);
  const groupStart = group * GROUP_SIZE;
  const areaStart = Math.floor(group / GROUPS_PER_AREA) * GROUPS_PER_AREA * GROUP_SIZE;
  const verb = rnd.pick(VERBS);
  const Verb = verb[0].toUpperCase() + verb.slice(1);
  const noun = rnd.pick(NOUNS);
  const qualifier = rnd.pick(QUALIFIERS);

  const record = {
    capabilityId: id,
    name: `${Verb} ${qualifier} ${noun}s (${i})`,
    description: `${Verb} ${qualifier} ${noun}s ${rnd.pick(PLACES)}; ` +
      `covers ${sentence(rnd, 6)}.`,
    whenToUse: `Use when a change needs to ${verb} a ${qualifier} ${noun} ${rnd.pick(PLACES)}, ` +
      `for example to ${sentence(rnd, 3)}.`,
    distinction: `Only about ${qualifier} ${noun}s; it does not ${rnd.pick(VERBS)} ` +
      `${rnd.pick(NOUNS)}s or ${sentence(rnd, 2)}.`,
    examples: [`${Verb} every ${qualifier} ${noun} ${rnd.pick(PLACES)}.`],
  };
  if (rnd() < 0.5) record.examples.push(`Make ${sentence(rnd, 5)} ${rnd.pick(PLACES)}.`);

  // Parents form one tree: group members hang below an earlier member, group heads below the
  // area head, area heads below capability 0.
  if (i > groupStart) record.parents = [capabilityId(groupStart + rnd.int(i - groupStart))];
  else if (i > areaStart) record.parents = [capabilityId(areaStart)];
  else if (i > 0) record.parents = [capabilityId(0)];

  // Targets always have a smaller index, so specializes and requires stay acyclic.
  if (i > groupStart && rnd() < 0.1) record.specializes = [capabilityId(groupStart + rnd.int(i - groupStart))];
  if (rnd() < 0.15) {
    const other = rnd.int(n); // any node, later ones included: related may form cycles
    if (other !== i) record.related = [capabilityId(other)];
  }
  // `requires` stays inside the group plus the area's first group (its "foundations"), so a
  // closure reaches tens of nodes at every provider size instead of growing with N.
  const requires = new Set();
  const local = i - groupStart;
  for (let k = Math.min(local, 1 + rnd.int(3)); k > 0; k--) requires.add(groupStart + rnd.int(local));
  if (groupStart > areaStart && rnd() < 0.5) requires.add(areaStart + rnd.int(GROUP_SIZE));
  if (requires.size) record.requires = [...requires].map(capabilityId);

  if (hasKnowledge(i)) {
    record.knowledge = [{
      kind: 'document',
      knowledgeId: `D-${i}`,
      role: rnd() < 0.5 ? 'guide' : 'reference',
      locale: 'en',
      title: `Guide to ${qualifier} ${noun}s`,
      locator: { type: 'relative-file', path: documentPath(i) },
    }];
  }
  return record;
}

/** A markdown body of 0.5–5 KiB, so document reads have something realistic to return. */
function knowledgeBody(record, rnd) {
  const paragraphs = [`# ${record.name}\n`, `${record.description}\n`];
  for (let p = 2 + rnd.int(12); p > 0; p--) paragraphs.push(`${sentence(rnd, 20 + rnd.int(30))}.\n`);
  return paragraphs.join('\n');
}

function providerManifest(providerId) {
  return {
    providerId,
    name: 'Synthetic benchmark provider',
    version: `bench-${GENERATOR_VERSION}`,
    specification: {
      specificationId: 'bench.synthetic.conventions',
      version: '1',
      documents: [{
        kind: 'document',
        knowledgeId: 'SPEC-01',
        role: 'specification',
        locale: 'en',
        title: 'Synthetic conventions',
        locator: { type: 'relative-file', path: 'PROVIDER.md' },
      }],
    },
  };
}

async function exists(p) {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

/** Where generated trees live; outside the repository (a million capabilities take ~5 GB). */
export const cacheDir = () => path.join(process.env.BENCH_CACHE ?? os.tmpdir(), `cg-bench-v${GENERATOR_VERSION}`);

/**
 * Every record of a provider of `n` capabilities in order, with its document body when it has
 * one; `seed` picks the words and edges (the default is the single-provider bench's).
 */
function* records(n, seed) {
  const rnd = prng(seed);
  for (let i = 0; i < n; i++) {
    const record = capability(i, n, rnd);
    yield { i, record, body: hasKnowledge(i) ? knowledgeBody(record, rnd) : undefined };
  }
}

/** Writes files below `root` with bounded concurrency, creating folders once. */
function writer(root) {
  const madeDirs = new Set();
  const pending = [];
  return {
    async write(rel, text) {
      const file = path.join(root, rel);
      const folder = path.dirname(file);
      if (!madeDirs.has(folder)) {
        madeDirs.add(folder);
        await mkdir(folder, { recursive: true });
      }
      pending.push(writeFile(file, text));
      // Bounded concurrency: enough to keep the disk busy without thousands of open handles.
      if (pending.length >= 256) await Promise.all(pending.splice(0));
    },
    done: () => Promise.all(pending),
  };
}

const definitionPath = (record, i) => {
  const [area, group] = record.capabilityId.split('.');
  return `capabilities/${area}/${group}/cap${i}.json`;
};

/**
 * Builds `dir` through a staging folder renamed at the end: an interrupted run leaves no half
 * tree that a later run would take for a cached one.
 */
async function staged(dir, marker, build, log) {
  if (await exists(path.join(dir, marker))) return dir;
  const staging = `${dir}.tmp-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  log(`generating ${dir} ...`);
  const started = performance.now();
  await mkdir(staging, { recursive: true });
  await build(staging);
  await rm(dir, { recursive: true, force: true });
  await rename(staging, dir);
  log(`generated in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return dir;
}

/**
 * Returns the provider directory for `n` capabilities, generating it if it is not cached.
 * `name`, `providerId` and `seed` tell the providers of a multi-provider configuration apart.
 */
export async function generate(n, { log = () => {}, name = `n${n}`, providerId = PROVIDER_ID, seed = 0xc0ffee ^ n } = {}) {
  const cache = cacheDir();
  const dir = path.join(cache, name);
  if (await exists(path.join(dir, 'provider.json'))) return dir;

  // Trees of older generator versions are never read again; at 100k each is about 0.5 GB.
  const parent = path.dirname(cache);
  for (const entry of await readdir(parent).catch(() => [])) {
    if (/^cg-bench-v\d+$/.test(entry) && entry !== path.basename(cache)) {
      await rm(path.join(parent, entry), { recursive: true, force: true });
    }
  }

  return staged(dir, 'provider.json', async (staging) => {
    await writeFile(path.join(staging, 'provider.json'), JSON.stringify(providerManifest(providerId), null, 2));
    await writeFile(path.join(staging, 'PROVIDER.md'), '# Synthetic conventions\n');
    const out = writer(staging);
    for (const { i, record, body } of records(n, seed)) {
      await out.write(definitionPath(record, i), JSON.stringify(record, null, 2));
      if (body !== undefined) await out.write(documentPath(i), body);
    }
    await out.done();
  }, log);
}

/**
 * The provider of `generate(n)` with every description changed (same IDs, relations and
 * documents), as a lone `capabilities/` folder at `<dir>.changed`: the definitions a reload
 * that changes everything reads.
 */
async function generateChanged(n, { log = () => {}, name = `n${n}`, seed = 0xc0ffee ^ n, legacy = false } = {}) {
  const dir = path.join(cacheDir(), `${name}.changed${legacy ? '.legacy' : ''}`);
  return staged(dir, 'capabilities', async (staging) => {
    const out = writer(staging);
    for (const { i, record } of records(n, seed)) {
      record.description = `Revised: ${record.description}`;
      const file = definitionPath(record, i);
      await out.write(legacy ? legacyName(file) : file, JSON.stringify(record, null, 2));
    }
    await out.done();
  }, log);
}

/**
 * A private copy of the provider `generate(n)` wrote (hard links, so it costs no data) and the
 * changed variant beside it, for measuring a reload that changes every definition:
 * `swapDefinitions(tree)` exchanges the two `capabilities/` folders by renames (the provider
 * root and its handle stay the same), so each swap changes every definition. The shared cached
 * tree is never renamed under another run. `legacy: true`: both in the legacy layout.
 */
export async function reloadTree(n, options = {}) {
  const { log = () => {}, name = `n${n}`, legacy = false } = options;
  const generated = await generate(n, options);
  const source = legacy ? await legacyTree(generated, { log }) : generated;
  // Written in the requested layout (never derived from another changed tree: a changed
  // tree alternates with its reload tree at every swap).
  const changed = await generateChanged(n, options);
  const root = path.join(cacheDir(), `${name}${legacy ? '.legacy' : ''}.reload`);
  const tree = { root, changed };
  await repairSwap(tree);
  if (!(await exists(path.join(root, 'provider.json')))) {
    log(`linking ${root} ...`);
    const staging = `${root}.tmp-${process.pid}`;
    await rm(staging, { recursive: true, force: true });
    await promisify(execFile)('cp', ['-al', source, staging]);
    await rm(root, { recursive: true, force: true });
    await rename(staging, root);
  }
  return tree;
}

/** A definition file's name in the legacy layout. */
const legacyName = (file) => `${file.slice(0, -'.json'.length)}.capability.json`;

/**
 * The tree `dir` in the `legacy` layout, at `<dir>.legacy`: the same files hard-linked (no data
 * is copied), each capability definition named `*.capability.json` where it lies. The legacy
 * reader walks the whole root for that suffix.
 */
export async function legacyTree(dir, { log = () => {} } = {}) {
  const target = `${dir}.legacy`;
  return staged(target, 'provider.json', async (staging) => {
    await rm(staging, { recursive: true });
    await promisify(execFile)('cp', ['-al', dir, staging]);
    for (const file of filesBelow(path.join(staging, 'capabilities'))) {
      if (file.endsWith('.json')) await rename(file, legacyName(file));
    }
  }, log);
}

const parked = (tree) => `${tree.root}.swapping`;

/** Exchanges the definitions of `tree.root` with the changed variant (three renames). */
export async function swapDefinitions(tree) {
  await rename(path.join(tree.root, 'capabilities'), parked(tree));
  await rename(path.join(tree.changed, 'capabilities'), path.join(tree.root, 'capabilities'));
  await rename(parked(tree), path.join(tree.changed, 'capabilities'));
}

/** Finishes a swap an interrupted run left half done. */
async function repairSwap(tree) {
  if (!(await exists(parked(tree)))) return;
  const rootDefs = path.join(tree.root, 'capabilities');
  const changedDefs = path.join(tree.changed, 'capabilities');
  if (!(await exists(rootDefs))) await rename(changedDefs, rootDefs);
  await rename(parked(tree), changedDefs);
}

/** Every file below `dir`, one folder listed at a time (a million names never pile up). */
function* filesBelow(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* filesBelow(full);
    else if (entry.isFile()) yield full;
  }
}

/**
 * Compact JSON bytes of the definitions below `dirs` (`provider.json` and every capability
 * file, parsed and re-serialised without whitespace), cached beside each tree: what a snapshot
 * is compared with.
 */
export async function canonicalBytes(dirs) {
  let total = 0;
  for (const dir of dirs) {
    const meta = `${dir}.meta.json`;
    try {
      total += JSON.parse(readFileSync(meta, 'utf8')).canonicalBytes;
      continue;
    } catch {
      // not computed yet
    }
    let bytes = 0;
    for (const file of [path.join(dir, 'provider.json'), ...filesBelow(path.join(dir, 'capabilities'))]) {
      bytes += Buffer.byteLength(JSON.stringify(JSON.parse(readFileSync(file, 'utf8'))));
    }
    await writeFile(meta, JSON.stringify({ canonicalBytes: bytes }));
    total += bytes;
  }
  return total;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const n = Number(process.argv[2] ?? 1000);
  console.log(await generate(n, { log: (m) => console.error(m) }));
}

/** Size of the large document the paged-read step walks. */
export const LARGE_DOCUMENT_BYTES = 64 * 2 ** 20;

/**
 * A folder holding one 64 MiB Markdown document of mixed scripts (cached like the providers),
 * for measuring paged reads of a document far larger than any whole-read budget.
 */
export async function generateLargeDocument() {
  const dir = path.join(cacheDir(), 'large-document');
  const file = path.join(dir, 'large.md');
  try {
    if ((await stat(file)).size >= LARGE_DOCUMENT_BYTES) return dir;
  } catch {
    // not generated yet
  }
  await mkdir(dir, { recursive: true });
  const paragraph = Buffer.from('## 段落 section 🙂\n\nLorem ipsum dolor sit amet, 中文内容 with ünïcödé and 𝄞 symbols.\n\n```\ncode block\n```\n\n');
  const copies = Math.ceil(LARGE_DOCUMENT_BYTES / paragraph.length);
  await writeFile(file, Buffer.concat(Array.from({ length: copies }, () => paragraph)));
  return dir;
}
