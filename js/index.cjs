'use strict';
// The package entry: one implementation, shared by require() and import.

const { GraphError, ErrorCode, Phase, NextAction } = require('./errors.cjs');
const {
  CapabilityGraph,
  BoundProviderGraph,
  parseQualifiedId,
  formatQualifiedId,
  lexicalExecutor,
} = require('./graph.cjs');

module.exports = {
  CapabilityGraph,
  BoundProviderGraph,
  GraphError,
  ErrorCode,
  Phase,
  NextAction,
  parseQualifiedId,
  formatQualifiedId,
  lexicalExecutor,
};
