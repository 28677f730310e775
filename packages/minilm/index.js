'use strict';
// The folder holding model.bin and vocab.txt, handed to the engine's encoder as it is; model.json
// is written last by the build, so its presence says the two files beside it are complete.
const fs = require('node:fs');
const path = require('node:path');

let record;
try {
  record = JSON.parse(fs.readFileSync(path.join(__dirname, 'model.json'), 'utf8'));
} catch {
  throw new Error('@devcodex/capability-graph-minilm has no weights: it was installed from a checkout without `npm run build:model`');
}

module.exports = { modelDir: __dirname, modelId: record.modelId, sha256: record.sha256 };
