'use strict';
// The command line's config file: read and opened by the graph's config-file module (as
// `CapabilityGraph.openConfigFile` opens it); here, the default file, the file named on the
// problem for the human line, and the progress while the graph loads.

const { CapabilityGraph } = require('../graph/graph.cjs');
const { CONFIG_MAX, CONFIG_PROBLEM, readConfigFile, loadConfigFile } = require('../graph/config-file.cjs');

const DEFAULT_CONFIG = 'capability-graph.json';

/** The config file a problem was found in, as given, for the human line (never in the envelope). */
const CONFIG_FILE = Symbol('configFile');

/** `error`, when the config file could not be read, naming `file` for the human line. */
function named(error, file) {
  if (error?.[CONFIG_PROBLEM] !== undefined) Object.defineProperty(error, CONFIG_FILE, { value: file });
  return error;
}

/** Reads the JSON config file; a missing, oversized or non-JSON file fails the command. */
function readConfig(file) {
  try {
    return readConfigFile(file);
  } catch (error) {
    throw named(error, file);
  }
}

/** The open config of `file` and its `mcp` block (see config-file.cjs). */
const loadConfig = (file, options) =>
  loadConfigFile(file, options).catch((error) => {
    throw named(error, file);
  });

/** The line a person reads after the envelope: which file (as given) and what is wrong with it;
 *  undefined for any other error. */
function configHint(error) {
  const file = error?.[CONFIG_FILE];
  if (file === undefined) return undefined;
  const name = JSON.stringify(file);
  const problem = error[CONFIG_PROBLEM];
  if (problem === 'missing') {
    return `capability-graph: config file ${name} does not exist; create one with \`capability-graph init DIR\` or pass --config FILE\n`;
  }
  if (problem === 'invalid') return `capability-graph: config file ${name} is not valid JSON holding an object\n`;
  return `capability-graph: config file ${name} cannot be read (not a readable regular file of at most ${CONFIG_MAX})\n`;
}

async function openGraph(flags, stderr) {
  const { config, mcp } = await loadConfig(flags.config ?? DEFAULT_CONFIG, { watch: flags.watch === true });
  // Progress only for a person watching: never with --json, never into a pipe.
  const progress = stderr.isTTY && !flags.json;
  if (progress) stderr.write('loading providers…');
  try {
    return { graph: await CapabilityGraph.open(config), mcp };
  } finally {
    if (progress) stderr.write('\r\x1b[K');
  }
}

module.exports = { DEFAULT_CONFIG, readConfig, loadConfig, configHint, openGraph };
