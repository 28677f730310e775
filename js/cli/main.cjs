'use strict';
// The capability-graph command line: parses it, runs the command's family (graph commands,
// maintenance, mcp, embed) and writes the answer. Every question goes to the graph's verbs; a
// failure is the stderr envelope {"ok":false,"error":…} with nothing on stdout and exit 1 (on a
// terminal without --json, one line for a person after it). A batch whose every item failed is
// a failure (its first item's error); a partial batch is an answer. A closed stdout ends the
// command quietly. Help (`help [COMMAND]`, `-h`/`--help`, or no command at all) and the version
// (`-V`, `-v`, `--version`) go to stdout with exit 0.

const { GraphError } = require('../errors.cjs');
const { internal } = require('../graph/graph.cjs');
const { COMMANDS, COMMAND_NAMES, own } = require('./commands.cjs');
const { parseCommandLine, usage, unknown, SUGGESTION } = require('./args.cjs');
const { VERSION, HELP, commandHelp } = require('./help.cjs');
const { readConfig, configHint, openGraph } = require('./config.cjs');
const { HUMAN, report, errorHint, output, readerGone } = require('./output.cjs');
const { GRAPH_COMMANDS, renderExport, everyItemFailed, readHint } = require('./graph-commands.cjs');
const { doctor, init, INIT_NEXT, migrate } = require('./maintenance.cjs');
const { embed } = require('./embed.cjs');
const { serveMcp, reportReloads } = require('./mcp.cjs');

/** Runs the CLI; returns the exit code. */
async function main(argv, io = { stdout: process.stdout, stderr: process.stderr }) {
  const stdout = output(io.stdout);
  const stderr = output(io.stderr);
  let code = await run(argv, stdout, stderr);
  const failed = await stdout.settled();
  await stderr.settled();
  if (failed !== undefined && !readerGone(failed) && code === 0) code = 1;
  return code;
}

async function run(argv, stdout, stderr) {
  let graph;
  const seen = {};
  // A person reads stderr: on a terminal, without --json (known before the arguments are).
  const options = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv;
  const person = stderr.isTTY && !options.includes('--json');
  const fail = (error, configLine, suggestion) => {
    stderr.write(JSON.stringify({ ok: false, error }) + '\n');
    if (person) stderr.write(configLine ?? errorHint(error, own(COMMANDS, seen.command) ? seen.command : undefined, suggestion));
    return 1;
  };
  try {
    const { command, args, flags } = parseCommandLine(argv, seen);
    if (flags.version) {
      stdout.write(`${VERSION}\n`);
      return 0;
    }
    if (command === 'help') {
      const known = (name) => name === 'help' || own(COMMANDS, name) !== undefined;
      if (args.length > 1) throw usage(args[args.length - 1]);
      if (args.length === 1 && !known(args[0])) throw unknown(args[0], args[0], COMMAND_NAMES);
      const topic = args[0] ?? (flags.help ? 'help' : undefined);
      stdout.write(topic ? commandHelp(topic) : HELP);
      return 0;
    }
    const spec = own(COMMANDS, command);
    if (flags.help || command === undefined) {
      stdout.write(spec ? commandHelp(command) : HELP);
      return 0;
    }
    if (!spec) throw unknown(command, command, COMMAND_NAMES);
    if (args.length < spec.args[0] || args.length > spec.args[1]) throw usage(command);
    if (command === 'init') {
      const result = await init(args[0], flags);
      return report(stdout, flags, result, result.status === 'ok' ? INIT_NEXT : undefined);
    }
    if (command === 'migrate') {
      if (flags.config !== undefined) readConfig(flags.config);
      return report(stdout, flags, await migrate(args[0], flags));
    }
    if (command === 'doctor') return report(stdout, flags, await doctor(flags));
    if (command === 'embed') return report(stdout, flags, await embed(args[0], flags));
    if (command === 'export' && !['mermaid', 'dot', 'json'].includes(flags.format)) throw usage('--format');
    const opened = await openGraph(flags, stderr);
    graph = opened.graph;
    if (command === 'mcp') {
      if (flags.watch) reportReloads(graph, stderr);
      await serveMcp(graph, opened.mcp, flags, stderr);
      return 0;
    }
    if (command === 'export') {
      const exported = await internal.query(graph, 'export', flags.provider ? { providerId: flags.provider } : {});
      stdout.write(flags.format === 'json' ? JSON.stringify(exported) + '\n' : renderExport(exported, flags.format));
      return 0;
    }
    const result = await GRAPH_COMMANDS[command](graph, args, flags);
    const failure = everyItemFailed(result);
    if (failure) return fail(failure);
    const human = !flags.json && stdout.isTTY && HUMAN[command];
    stdout.write(human ? human(result) : JSON.stringify(result) + '\n');
    if (person && command === 'read' && result.knowledgeState === 'filtered_empty' && result.results?.length === 0) {
      const hint = await readHint(graph, args[0], flags).catch(() => undefined);
      if (hint) stderr.write(hint);
    }
    return 0;
  } catch (error) {
    const graphError = error instanceof GraphError ? error : new GraphError({ code: 'CG_INTERNAL', phase: 'config' });
    return fail(graphError.toJSON(), configHint(graphError), graphError[SUGGESTION]);
  } finally {
    await graph?.close();
  }
}

module.exports = { main };
