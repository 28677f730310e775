// A database authority's records stream into the engine page by page: JavaScript holds one page
// at a time, so a provider far larger than the JS heap opens.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'database-scale.mjs');

// 100k records of ~80 bytes and their 800k relation streams are well over 32 MiB of JS heap
// when gathered in JavaScript; read a page at a time they never are. (A million records under
// 256 MiB is the same test at bench scale: bench/README.md.)
const RECORDS = 100_000;

test('a 100k-record database opens under a 32 MiB JS heap: records stream into the engine page by page', { timeout: 120_000 }, async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--max-old-space-size=32', script, String(RECORDS)], { maxBuffer: 1 << 20 });
  assert.deepEqual(JSON.parse(stdout), { authorityKind: 'database', last: `gen.db::c${String(RECORDS - 1).padStart(7, '0')}` });
});
