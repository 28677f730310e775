// The pinned BM25 baseline: a private Python virtual environment with the packages of
// bench/bm25-requirements.txt (bm25s, PyStemmer, numpy at exact versions), outside the
// repository, and bench/bm25_baseline.py run in it on the input the evaluation exports.
// Only `--baseline` runs Python; everything else reads the recording (bench/tool-search-bm25.json).

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sha256 } from './tool-search-data.mjs';

const bench = fileURLToPath(new URL('./', import.meta.url));
export const RECORDING = path.join(bench, 'tool-search-bm25.json');
const REQUIREMENTS = path.join(bench, 'bm25-requirements.txt');
const SCRIPT = path.join(bench, 'bm25_baseline.py');
export const SETTINGS = { method: 'lucene', k1: 1.5, b: 0.75, stopwords: 'en (bm25s)', stemmer: 'Snowball English (PyStemmer)', k: 10 };

const venvDir = () => process.env.CG_BM25_VENV ?? path.join(os.homedir(), '.cache', 'capability-graph', 'bm25-venv');

function run(command, args, what) {
  const out = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (out.error || out.status !== 0) throw new Error(`${what} failed (${out.error?.message ?? `exit ${out.status}`})`);
}

/** The venv's Python, the venv made and the pinned packages installed first when they are not. */
export async function pinnedPython({ log = () => {} } = {}) {
  const dir = venvDir();
  const python = path.join(dir, 'bin', 'python');
  const stamp = path.join(dir, 'requirements.sha256');
  const wanted = sha256(await readFile(REQUIREMENTS));
  if (existsSync(python) && (await readFile(stamp, 'utf8').catch(() => '')) === wanted) return python;
  log(`installing the pinned BM25 into ${dir}`);
  await mkdir(path.dirname(dir), { recursive: true });
  if (!existsSync(python)) run(process.env.PYTHON ?? 'python3', ['-m', 'venv', dir], 'creating the virtual environment');
  run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', REQUIREMENTS], 'installing bench/bm25-requirements.txt');
  await writeFile(stamp, wanted);
  return python;
}

/** Runs the pinned BM25 on `input`; resolves `{ versions, rankings }`. */
export async function runBm25(input, options = {}) {
  const python = await pinnedPython(options);
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'cg-bm25-'));
  try {
    const source = path.join(tmp, 'input.json');
    const target = path.join(tmp, 'output.json');
    await writeFile(source, JSON.stringify(input));
    run(python, [SCRIPT, source, target], 'bench/bm25_baseline.py');
    return JSON.parse(await readFile(target, 'utf8'));
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** The recording, or undefined when there is none. */
export async function readRecording() {
  try {
    return JSON.parse(await readFile(RECORDING, 'utf8'));
  } catch (error) {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  }
}

export async function writeRecording(recording) {
  await writeFile(RECORDING, `${JSON.stringify(recording, null, 1)}\n`);
}
