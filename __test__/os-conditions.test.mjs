// Conditions of the operating system are told apart by whether they pass: a link loop or a name
// too long stays until someone changes the tree (never `retry`); running out of file
// descriptors passes (always `retry`, never a definition error).
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { cap, repoRoot, seedRoot } from './helpers.mjs';

const run = promisify(execFile);

test('a symlink loop and an over-long name are permanent: fix_input, never retry', { skip: process.platform === 'win32' }, async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-os-'));
  fs.symlinkSync('loop-b.md', path.join(root, 'loop-a.md'));
  fs.symlinkSync('loop-a.md', path.join(root, 'loop-b.md'));
  fs.writeFileSync(path.join(root, 'ok.md'), '# ok\n');
  const doc = (knowledgeId, file) => ({ kind: 'document', knowledgeId, role: 'guide', locator: { type: 'relative-file', path: file } });
  const knowledge = [doc('LOOP', 'loop-a.md'), doc('LONG', `${'n'.repeat(300)}.md`), doc('OK', 'ok.md')];
  const graph = await CapabilityGraph.open({ providers: [{ definition: { providerId: 'acme', name: 'A', version: '1', capabilities: [cap('x', { knowledge })] }, documentRoot: root }] });
  try {
    const { results } = await graph.readDocuments({ selected: ['acme::x'] });
    const [loop, long, ok] = results;
    for (const slot of [loop, long]) {
      assert.equal(slot.ok, false);
      assert.deepEqual([slot.error.code, slot.error.phase, slot.error.nextAction], ['CG_DOCUMENT_UNREADABLE', 'document', 'fix_input']);
    }
    assert.equal(ok.value.text, '# ok\n');
  } finally {
    await graph.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('out of file descriptors at open and reload is a passing condition: CG_CONFIG_INVALID/load with retry', { skip: process.platform === 'win32' }, async () => {
  // The child takes every descriptor it can, then opens a file provider (and reloads one).
  const source = `import fs from 'node:fs';
import { CapabilityGraph } from '@devcodex/capability-graph';
const providers = [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: ${JSON.stringify(seedRoot)}, definitionLayout: 'directory' } }];
const graph = await CapabilityGraph.open({ providers });
const held = [];
try { for (;;) held.push(fs.openSync('/dev/null', 'r')); } catch {}
const outcome = (p) => p.then((v) => v, (e) => e.toJSON());
const opened = await outcome(CapabilityGraph.open({ providers }));
const reloaded = await outcome(graph.reload({ providerId: 'seed.http' }));
const inline = { definition: { providerId: 'acme', name: 'A', version: '1', capabilities: [] } };
const rooted = await outcome(CapabilityGraph.open({ providers: [{ ...inline, documentRoot: ${JSON.stringify(seedRoot)} }] }));
const aliased = await outcome(CapabilityGraph.open({ providers: [{ ...inline, knowledgeRoots: { docs: { kind: 'directory', rootDir: ${JSON.stringify(seedRoot)} } } }] }));
for (const fd of held) fs.closeSync(fd);
process.stdout.write(JSON.stringify({ opened, reloaded, rooted, aliased }));
await graph.close();`;
  const { stdout } = await run('/bin/sh', ['-c', `ulimit -n 256 && exec "${process.execPath}" --input-type=module -e "$0"`, source], { cwd: repoRoot, timeout: 60_000 });
  const { opened, reloaded, rooted, aliased } = JSON.parse(stdout);
  // A document root or an alias root that cannot be opened for want of descriptors.
  for (const [e, at] of [[rooted, 'providers[0].documentRoot'], [aliased, 'providers[0].knowledgeRoots["docs"].rootDir']]) {
    assert.deepEqual([e.code, e.phase, e.nextAction, e.details?.path, e.details?.reason], ['CG_CONFIG_INVALID', 'load', 'retry', at, 'temporarily_unreadable'], JSON.stringify(e));
  }
  assert.equal(opened.code, 'CG_CONFIG_INVALID', JSON.stringify(opened));
  assert.equal(opened.phase, 'load');
  assert.equal(opened.nextAction, 'retry');
  assert.equal(opened.details.reason, 'temporarily_unreadable');
  const [entry] = reloaded.providers ?? reloaded;
  assert.equal(entry.ok, false, JSON.stringify(reloaded));
  assert.deepEqual([entry.error.code, entry.error.phase, entry.error.nextAction], ['CG_CONFIG_INVALID', 'load', 'retry']);
});
