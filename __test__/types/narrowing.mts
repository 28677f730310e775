// A consumer's first TypeScript file, compiled with --strict (nodenext) by types.test.mjs and,
// against the package installed from the private registry without its optional peers, by
// .ci/install-like-a-user.mjs: results narrow on `status`, `ok` and the meta's provider
// revisions; errors narrow with instanceof.
import { CapabilityGraph, GraphError, lexicalExecutor, seedProviderRoot } from '@devcodex/capability-graph';

export async function firstAnswer(): Promise<string[]> {
  const graph = await CapabilityGraph.open({
    providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: seedProviderRoot, definitionLayout: 'directory' } }],
    executor: lexicalExecutor(),
  });
  try {
    const { added, meta } = await graph.resolve({ ids: ['seed.http::route.validation'] });
    const revision: string = meta.staticRevisionByProvider ? (meta.staticRevisionByProvider['seed.http'] ?? '') : meta.staticRevision;

    const found = await graph.match({ intent: 'validate the request body' });
    // @ts-expect-error -- `resolution` exists only once `status` says matched or partial
    found.resolution.added;
    const more = found.status === 'matched' || found.status === 'partial' ? found.resolution.added : [];

    const report = await graph.reload();
    if (!report.ok) return [report.error.code, ...report.providers.flatMap((p) => (p.ok ? [] : [p.error.code]))];
    // @ts-expect-error -- a successful reload carries no error
    report.error.code;
    return [...added, ...more, revision];
  } catch (error) {
    if (error instanceof GraphError) return [error.code, error.phase];
    throw error;
  } finally {
    await graph.close();
  }
}
