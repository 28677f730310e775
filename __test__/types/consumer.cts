// CommonJS consumers see the same types.
import cg = require('@devcodex/capability-graph');
const e: cg.GraphError = new cg.GraphError({ code: 'CG_INTERNAL' });
const p: Promise<cg.CapabilityGraph> = cg.CapabilityGraph.open({ providers: [] });
void [e, p];
