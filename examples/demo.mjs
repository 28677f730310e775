// The demo: what an agent sees when it works through the bundled seed provider with the
// built-in lexical executor — entry points, relations, details, a selection, its documents, and
// a match from a user's words, and a paraphrase the semantic executor finds when the encoder's
// weights are built. Every step pins the revision the first step returned.
import { fileURLToPath } from 'node:url';
import { CapabilityGraph, GraphError, lexicalExecutor, providerFromTools, semanticExecutor } from '@devcodex/capability-graph';
import { activeToolsFromMatch } from '@devcodex/capability-graph/ai-sdk';
import { TOOLS } from './tool-search/tools.mjs';

const rootDir = fileURLToPath(new URL('./seed-provider', import.meta.url));
const graph = await CapabilityGraph.open({
  providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir, definitionLayout: 'directory' } }],
  executor: lexicalExecutor(),
});
/** A tool every model turn sees, whatever the request. */
const PINNED = 'slack_post_message';
const step = (n, title) => console.log(`\n${n}. ${title}`);
const show = (line) => console.log(`   ${line}`);

try {
  step(1, 'Which providers can I use?');
  const { items: providers, meta } = await graph.listProviders();
  for (const p of providers) show(`${p.providerId} "${p.name}" ${p.version} — specification ${p.specification.specificationId}`);
  const requiredStaticRevision = meta.staticRevision;
  show(`revision ${requiredStaticRevision} (pinned for every next step)`);

  step(2, 'The catalog, one page');
  const page = await graph.listCatalog({ limit: 10, requiredStaticRevision });
  for (const c of page.items) show(`${c.qualifiedId.padEnd(28)} ${c.name}`);
  show(`completeness: ${page.meta.completeness}`);

  step(3, 'What sits under seed.http::route?');
  const { groups } = await graph.getNeighbors('seed.http::route', { kinds: ['children'], requiredStaticRevision });
  for (const c of groups.children.items) show(`child ${c.qualifiedId}: ${c.whenToUse}`);

  step(4, 'Details of seed.http::route.validation');
  const [detail] = (await graph.getCapabilities(['seed.http::route.validation'], { requiredStaticRevision })).results;
  show(detail.value.description);
  show(`requires: ${detail.value.neighborSummaries.requires.items.map((i) => i.name).join(', ')}`);
  show(`knowledge: ${detail.value.knowledge.items.map((k) => `${k.knowledgeId} (${k.role})`).join(', ')}`);

  step(5, 'Select it: what else is needed?');
  const selection = await graph.resolveSelection({ selected: ['seed.http::route.validation'], requiredStaticRevision });
  for (const r of selection.reasons) {
    const why = r.reason.requested ? 'selected' : `required by ${r.reason.requiredBy.map((i) => i.capabilityId).join(', ')}`;
    show(`${r.id.capabilityId} — ${why}`);
  }

  step(6, 'Read the selection\'s documents');
  const selected = selection.resolved.map((id) => `${id.providerId}::${id.capabilityId}`);
  const reads = await graph.readDocuments({ selected, requiredStaticRevision });
  for (const r of reads.results) show(`${r.value.knowledgeId} ${r.value.source}: "${r.value.text.split('\n')[0]}" (${r.value.byteLength} bytes)`);

  step(7, 'Match a user\'s words with the lexical executor');
  for (const intent of ['validate the request body before the handler runs', 'bake a loaf of sourdough bread']) {
    const r = await graph.match({ intent });
    show(`"${intent}" → ${r.status}${r.matches.length ? `: ${r.matches.map((m) => `${m.qualifiedId} (${m.confidence})`).join(', ')}` : ''}`);
    if (r.resolution) show(`   with ${r.resolution.added.join(', ') || 'nothing else'} added by requires`);
  }

  step(8, 'A paraphrase, with the semantic executor');
  await semanticStep('refuse broken JSON sent by clients');

  step(9, 'A mistake, as the agent gets it');
  try {
    await graph.resolve({ ids: ['seed.http::route.websocket'], requiredStaticRevision });
  } catch (error) {
    if (!(error instanceof GraphError)) throw error;
    show(JSON.stringify(error.toJSON()));
  }

  step(10, 'Tool search: which 5 of a host\'s 150 tools should the model see?');
  const { definition, toolNames } = providerFromTools({ providerId: 'host.tools', name: 'Host tools', tools: TOOLS });
  const tools = await CapabilityGraph.open({ providers: [{ definition }], executor: lexicalExecutor() });
  // Rank mode: the best five every time, even for plain words that fit no tool exactly; the
  // team chat's post tool is pinned, so the model always has it.
  for (const intent of ['refund the duplicate charge for order 1182', 'what time is it in Tokyo']) {
    const answer = await tools.match({ intent, limit: 5, mode: 'rank' });
    show(`"${intent}" → activeTools: ${activeToolsFromMatch(answer, toolNames, undefined, { always: [PINNED] }).join(', ')}`);
  }
  await tools.close();
} finally {
  await graph.close();
}

/** The semantic executor finds what the words mean, here a request that shares no word with the
 *  capability it needs; it needs the encoder's weights, so without them the demo says how to
 *  build them. */
async function semanticStep(intent) {
  const semantic = await CapabilityGraph.open({
    providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir, definitionLayout: 'directory' } }],
    executor: semanticExecutor(),
  });
  try {
    const lexical = await graph.match({ intent }).catch(() => undefined);
    const r = await semantic.match({ intent });
    show(`"${intent}" → ${r.status}${r.matches.length ? `: ${r.matches.map((m) => `${m.qualifiedId} (${m.confidence})`).join(', ')}` : ''}`);
    if (r.matches[0]) show(`   ${r.matches[0].reason}`);
    if (lexical) show(`   (the lexical executor: ${lexical.status})`);
  } catch (error) {
    if (!(error instanceof GraphError) || error.details?.package === undefined) throw error;
    // Until a release publishes the weights package, only a clone can build it.
    show(`not shown: the semantic executor needs the encoder's weights, ${error.details.package}; in a clone of the repository, \`npm run build:model\` builds them`);
  } finally {
    await semantic.close();
  }
}
