// Tool search holds its floors: the held-out figures of `npm run eval:tools` (bench/README.md)
// as measured when they were set, each a number a later ranking must not go below. Lexical at
// both sizes; semantic at catalog size with the model (CG_REQUIRE_MODEL=1; 10k semantic stays
// in the eval); and the recorded BM25 baseline belongs to this very data. No Python, no timings.
import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { baselineInput, corpusHashes, evaluate, prepare, recordedFigures } from '../bench/eval-tools-catalog.mjs';
import { readRecording } from '../bench/bm25-baseline.mjs';

// corpus → set → measure → floor (percent, as the eval displays it), measured on the held-out
// half with the data of bench/tool-search-bm25.json's hashes.
const CATALOG_LEXICAL = { multi: { recall5: 27.7, recall10: 33.0, any5: 60.0 }, single: { top1: 31.8, top3: 47.7 }, noMatch: { precision: 88.9, recall: 72.7 } };
const TOOL_SEARCH_LEXICAL = { requests: { top1: 54.5, top3: 63.6 }, noMatch: { precision: 83.3, recall: 90.9 } };
const FLOORS = {
  lexical: {
    catalog: CATALOG_LEXICAL,
    'catalog+10k': CATALOG_LEXICAL,
    'tool-search': TOOL_SEARCH_LEXICAL,
    'tool-search+10k': TOOL_SEARCH_LEXICAL,
  },
  semantic: {
    catalog: { multi: { recall5: 37.4, recall10: 49.4, any5: 72.5 }, single: { top1: 52.3, top3: 63.6 }, noMatch: { precision: 83.3, recall: 90.9 } },
    'tool-search': { requests: { top1: 57.6, top3: 78.8 }, noMatch: { precision: 82.8, recall: 72.7 } },
  },
};

function below(report, method, floors) {
  const out = [];
  for (const [corpus, sets] of Object.entries(floors)) {
    const figures = report.find((r) => r.method === method && r.corpus === corpus && r.split === 'heldout');
    if (figures === undefined) {
      out.push(`${method} ${corpus}: not measured`);
      continue;
    }
    for (const [set, measures] of Object.entries(sets)) {
      for (const [measure, floor] of Object.entries(measures)) {
        const value = figures[set]?.[measure];
        if (!(value >= floor)) out.push(`${method} ${corpus} ${set} ${measure}: ${value} < ${floor}`);
      }
    }
  }
  return out;
}

test('the lexical executor holds its held-out floors, alone and inside the generated 10k catalog', async () => {
  const { report, mode } = await evaluate({ methods: ['lexical'], splits: ['heldout'] });
  assert.equal(mode, 'accept');
  assert.deepEqual(below(report, 'lexical', FLOORS.lexical), []);
});

const weights = fileURLToPath(new URL('../packages/minilm/model.bin', import.meta.url));
const required = process.env.CG_REQUIRE_MODEL === '1';
test('the semantic executor holds its held-out floors at catalog size', { skip: !required && 'semantic floors run with CG_REQUIRE_MODEL=1' }, async () => {
  assert.ok(existsSync(weights), 'CG_REQUIRE_MODEL=1 needs the weights: npm run build:model');
  const { report, unavailable } = await evaluate({ methods: ['semantic'], sizes: ['catalog'], splits: ['heldout'] });
  assert.deepEqual(unavailable, {});
  assert.deepEqual(below(report, 'semantic', FLOORS.semantic), []);
});

test('the recorded BM25 baseline is of this data: every corpus, its figures those of its rankings', async () => {
  const recording = await readRecording();
  assert.ok(recording, 'bench/tool-search-bm25.json: npm run eval:tools -- --baseline');
  const ctx = await prepare();
  const hashes = corpusHashes(await baselineInput(ctx));
  assert.deepEqual(recording.inputSha256, hashes, 'the data changed since BM25 was recorded: npm run eval:tools -- --baseline');
  assert.deepEqual(recording.figures, recordedFigures(recording, ctx));
  // Both halves of every corpus, each with its figures.
  for (const corpus of Object.keys(hashes)) {
    for (const split of ['tune', 'heldout']) assert.ok(recording.figures.some((f) => f.corpus === corpus && f.split === split), `${corpus} ${split}`);
  }
});
