// A small tour of the bundled seed provider: open it, resolve a capability with what it
// requires, and see how a failure is reported. (The full discovery and match demo grows here.)
import { fileURLToPath } from 'node:url';
import { CapabilityGraph, GraphError } from '@devcodex/capability-graph';

const rootDir = fileURLToPath(new URL('./seed-provider', import.meta.url));
const graph = await CapabilityGraph.open({
  providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir, definitionLayout: 'directory' } }],
});

try {
  const resolved = await graph.resolve({ ids: ['seed.http::route.validation'] });
  console.log(`seed.http is at revision ${resolved.meta.staticRevision}`);
  console.log(`resolve(route.validation) → requested ${resolved.requested.join(', ')}; added ${resolved.added.join(', ')}`);
  for (const item of resolved.items) {
    const why = item.reason.requested ? 'requested' : `required by ${item.reason.requiredBy.join(', ')}`;
    console.log(`  ${item.qualifiedId} (${why}): ${item.whenToUse}`);
  }

  try {
    await graph.resolve({ ids: ['seed.http::route.websocket'] });
  } catch (error) {
    if (!(error instanceof GraphError)) throw error;
    console.log(`resolve(route.websocket) → ${JSON.stringify(error.toJSON())}`);
  }
} finally {
  await graph.close();
}
