'use strict';
// The first-party encoder's weights: the optional package @devcodex/capability-graph-minilm,
// resolved only when a semantic match needs it and handed to the engine as a folder.

const { GraphError } = require('../errors.cjs');
const { resolvePeer } = require('../engine/peer.cjs');

const MINILM = '@devcodex/capability-graph-minilm';

const unavailable = () => new GraphError({ code: 'CG_MODEL_UNAVAILABLE', nextAction: 'check_config', details: { package: MINILM } });

/**
 * `{ dir, id }` of the installed weights package, or CG_MODEL_UNAVAILABLE / check_config with
 * `details.package` when it is not installed or holds no weights (never its path or its own error).
 */
function resolveModel() {
  const entry = resolvePeer(MINILM);
  if (entry === null) throw unavailable();
  let model;
  try {
    model = require(entry);
  } catch {
    throw unavailable();
  }
  if (typeof model?.modelDir !== 'string' || typeof model.modelId !== 'string') throw unavailable();
  return { dir: model.modelDir, id: model.modelId };
}

module.exports = { resolveModel, MINILM };
