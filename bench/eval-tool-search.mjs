// Evaluates tool search: the 150 tools of examples/tool-search's MCP server, read through the
// MCP SDK's client, made a provider by providerFromTools, and `graph.match` asked for the tool
// each of bench/tool-search-intents.json's requests needs (written before the matcher was run on
// these tools).
//
//   node bench/eval-tool-search.mjs                      the lexical executor; misses listed
//   node bench/eval-tool-search.mjs --executor=semantic  the semantic executor, where this build has it
//   node bench/eval-tool-search.mjs --min-score=0.1      pass { minScore } to the executor
//   node bench/eval-tool-search.mjs --mode=rank          ask match in rank mode (default accept)
//   node bench/eval-tool-search.mjs --json               JSON summary on stdout
//
// Measures, over the requests (each should match exactly one tool), with `limit: 5` (the tools a
// model would see): top-k, the share whose tool is among the first k matches (a `no_match`
// answer counts as a miss), and how many answers were `no_match`. The exit code is 0 unless the
// engine fails or the executor is not available (1): this is a measurement, not a test.

import { readFile } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import * as api from '@devcodex/capability-graph';
import { createToolServer } from '../examples/tool-search/server.mjs';

export const EXECUTORS = ['lexical', 'semantic'];
const LIMIT = 5;

/** The executor `name` with `options`, or undefined when this build of the package has none. */
export function executorOf(name, options = {}) {
  if (name === 'lexical') return api.lexicalExecutor(options);
  if (name === 'semantic' && typeof api.semanticExecutor === 'function') return api.semanticExecutor(options);
  return undefined;
}

/** The tools as a host gets them: tools/list of the MCP server, through the SDK's client. */
export async function listTools() {
  const server = createToolServer();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'eval-tool-search', version: '1.0.0' });
  await client.connect(clientSide);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
    await server.close();
  }
}

export async function loadIntents() {
  return JSON.parse(await readFile(new URL('./tool-search-intents.json', import.meta.url), 'utf8')).intents;
}

const pct = (num, den) => (den === 0 ? null : Math.round((num / den) * 1000) / 10);

/** Every request's answer and the summary, for `executor` (an executor object). */
export async function evaluateToolSearch(executor, { mode } = {}) {
  const tools = await listTools();
  const intents = await loadIntents();
  const { definition, toolNames } = api.providerFromTools({ providerId: 'host.tools', name: 'Host tools', tools });
  const graph = await api.CapabilityGraph.open({ providers: [{ definition }], executor });
  const rows = [];
  try {
    for (const { intent, tool } of intents) {
      const answer = await graph.match({ intent, limit: LIMIT, ...(mode === undefined ? {} : { mode }) });
      const got = answer.matches.map((m) => toolNames.get(m.id.capabilityId));
      rows.push({ intent, tool, status: answer.status, got, rank: got.indexOf(tool), confidence: answer.matches[0]?.confidence ?? null });
    }
  } finally {
    await graph.close();
  }
  const within = (k) => rows.filter((r) => r.rank >= 0 && r.rank < k).length;
  const summary = {
    tools: tools.length,
    intents: rows.length,
    top1: pct(within(1), rows.length),
    top3: pct(within(3), rows.length),
    top5: pct(within(5), rows.length),
    noMatch: rows.filter((r) => r.status === 'no_match').length,
    counts: { top1: within(1), top3: within(3), top5: within(5) },
  };
  return { rows, summary };
}

async function main(argv) {
  const flag = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const name = flag('executor') ?? 'lexical';
  const minScore = flag('min-score');
  const mode = flag('mode');
  if (!EXECUTORS.includes(name)) {
    console.error(`unknown executor "${name}" (one of: ${EXECUTORS.join(', ')})`);
    return 1;
  }
  const executor = executorOf(name, minScore === undefined ? {} : { minScore: Number(minScore) });
  if (executor === undefined) {
    console.error(`the ${name} executor is not available in this build of @devcodex/capability-graph`);
    return 1;
  }
  let evaluated;
  try {
    evaluated = await evaluateToolSearch(executor, { mode });
  } catch (error) {
    // The semantic executor's first-party encoder lives in an optional model package.
    const pkg = error?.code === 'CG_MODEL_UNAVAILABLE' ? error.details?.package : undefined;
    if (pkg === undefined) throw error;
    console.error(`the ${name} executor is not available: its model package ${pkg} is not installed`);
    return 1;
  }
  const { rows, summary } = evaluated;
  if (argv.includes('--json')) {
    console.log(JSON.stringify({ executor: name, minScore: minScore === undefined ? null : Number(minScore), mode: mode ?? 'accept', ...summary }, null, 2));
    return 0;
  }
  console.log(`tool search, ${name} executor${minScore === undefined ? '' : ` (minScore ${minScore})`}, ${mode ?? 'accept'} mode: ${summary.tools} tools, ${summary.intents} requests`);
  console.log(`  top-1 ${summary.top1}%  top-3 ${summary.top3}%  top-5 ${summary.top5}%  no_match ${summary.noMatch}`);
  const misses = rows.filter((r) => r.rank < 0 || r.rank >= 3);
  if (misses.length > 0) console.log('\nnot in the top 3:');
  for (const r of misses) console.log(`  "${r.intent}" → ${r.tool}; got ${r.status === 'no_match' ? 'no_match' : r.got.join(', ')}`);
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main(process.argv.slice(2));
}
