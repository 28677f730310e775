// The package's JavaScript is in rooms that show its layers, and imports point one way: from a
// room to its own files or to a room below it, never up or across.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './helpers.mjs';

const js = path.join(repoRoot, 'js');

/** Each room and its layer: a room imports only its own files and the rooms of lower layers. */
const LAYER = { top: 0, engine: 1, executors: 2, graph: 3, tools: 4, sdk: 5, mcp: 5, cli: 6 };
/** The package entry brings every room together. */
const ENTRY = new Set(['index.cjs', 'index.mjs']);

/** `js/`-relative path → its room: the top files, a folder, or one SDK subpath's own folder. */
function roomOf(file) {
  const parts = file.split('/');
  if (parts.length === 1) return 'top';
  return parts[0] === 'sdk' ? `sdk/${parts[1]}` : parts[0];
}
const layerOf = (room) => LAYER[room.split('/')[0]];

const sources = fs
  .readdirSync(js, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && /\.(cjs|mjs|d\.cts|d\.mts)$/.test(entry.name))
  .map((entry) => path.relative(js, path.join(entry.parentPath ?? entry.path, entry.name)).split(path.sep).join('/'));

/** The relative modules `file` loads: require(), import() and import/export … from. */
function importsOf(file) {
  const text = fs.readFileSync(path.join(js, file), 'utf8');
  return [...text.matchAll(/(?:require\(|import\(|from )'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]);
}

test('every file of js/ is in a known room and no longer than 600 lines', () => {
  assert.ok(sources.length >= 40, sources.join(', '));
  for (const file of sources) {
    const room = roomOf(file);
    assert.ok(ENTRY.has(file) || layerOf(room) !== undefined, `${file} is in no known room`);
    const lines = fs.readFileSync(path.join(js, file), 'utf8').split('\n').length;
    assert.ok(lines <= 600, `${file} has ${lines} lines`);
  }
});

test('imports point one way: a room loads its own files and rooms below it, never one beside or above', () => {
  const checked = [];
  for (const file of sources) {
    const from = roomOf(file);
    for (const spec of importsOf(file)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
      checked.push(`${file} -> ${target}`);
      if (target.startsWith('../')) {
        // Outside js/: the manifest, the native loader (the engine's, and the error catalog's
        // cut of details) and the public types.
        const outside = target.slice(3);
        const allowed = outside === 'package.json' || outside === 'index.js' || (outside === 'binding.js' && (from === 'engine' || file === 'errors.cjs'));
        assert.ok(allowed, `${file} loads ${outside} from outside js/`);
        continue;
      }
      assert.ok(fs.existsSync(path.join(js, target)), `${file} loads ${target}, which does not exist`);
      if (ENTRY.has(file)) continue;
      assert.ok(!ENTRY.has(target), `${file} loads the package entry ${target}`);
      const to = roomOf(target);
      assert.ok(to === from || layerOf(to) < layerOf(from), `${file} (${from}) loads ${target} (${to}): not a room below it`);
    }
  }
  // The check saw the imports it judges: the facade's own rooms and the way up to the CLI.
  for (const edge of ['cli/main.cjs -> cli/args.cjs', 'tools/adapter.cjs -> graph/graph.cjs', 'graph/graph.cjs -> engine/native.cjs', 'sdk/ai-sdk/index.mjs -> sdk/ai-sdk/index.cjs']) {
    assert.ok(checked.includes(edge), `${edge} was checked`);
  }
});
