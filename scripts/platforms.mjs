#!/usr/bin/env node
// The platform packages: one npm package per target in `napi.targets`, each under
// `npm/<platform>/` at the main package's version.
//
//   node scripts/platforms.mjs          write every npm/<platform>/ manifest (the `version` script,
//                                       so `npm version <v>` keeps them in step)
//   node scripts/platforms.mjs --check  write nothing; exit 1 when a folder or manifest disagrees
//   node scripts/platforms.mjs --pack   add optionalDependencies (every platform package at the
//                                       main version) to package.json for `npm pack`/`publish`
//   node scripts/platforms.mjs --unpack take them out again
//
// The optional dependencies exist only in the packed manifest (napi's pre-publish pattern): listed
// in the repository's package.json they would make `npm ci` fail until every platform package is
// published.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const LABEL = { linux: 'Linux', darwin: 'macOS', win32: 'Windows' };

/** `x86_64-unknown-linux-gnu` → { platform: 'linux-x64-gnu', os, cpu, libc }: the loader's own
 *  mapping, so the packages are named as the loader looks for them. */
export const { platformOf } = createRequire(import.meta.url)('../js/engine/platform.cjs');

const read = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
const json = (value) => JSON.stringify(value, null, 2) + '\n';

export function targetsOf(main) {
  return main.napi.targets.map(platformOf);
}

export function platformManifest(main, target) {
  const file = `${main.napi.binaryName}.${target.platform}.node`;
  return {
    name: `${main.name}-${target.platform}`,
    version: main.version,
    description: `The ${LABEL[target.os]} ${target.cpu}${target.libc ? ` (${target.libc})` : ''} native engine of ${main.name}`,
    license: main.license,
    ...(main.repository ? { repository: main.repository } : {}),
    os: [target.os],
    cpu: [target.cpu],
    ...(target.libc ? { libc: [target.libc] } : {}),
    main: file,
    files: [file],
    engines: main.engines,
    scripts: { prepublishOnly: 'node ../../scripts/publish-guard.mjs platform' },
    publishConfig: { access: 'public' },
  };
}

const readme = (manifest, main, target) =>
  `# \`${manifest.name}\`\n\nThe \`${target.triple}\` native engine of \`${main.name}\`. Install \`${main.name}\`;\nits loader picks this package on a matching platform.\n`;

export function optionalDependencies(main) {
  return Object.fromEntries(targetsOf(main).map((t) => [`${main.name}-${t.platform}`, main.version]));
}

/** Writes (or, with `check`, compares) every platform folder; returns the problems found. */
export function sync(dir, { check = false } = {}) {
  const main = read(path.join(dir, 'package.json'));
  const problems = [];
  const put = (file, text) => {
    if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === text) return;
    if (check) return problems.push(`${path.relative(dir, file)} is out of date`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  };
  const targets = targetsOf(main);
  for (const target of targets) {
    const manifest = platformManifest(main, target);
    put(path.join(dir, 'npm', target.platform, 'package.json'), json(manifest));
    put(path.join(dir, 'npm', target.platform, 'README.md'), readme(manifest, main, target));
  }
  const known = new Set(targets.map((t) => t.platform));
  for (const entry of fs.readdirSync(path.join(dir, 'npm'))) {
    if (!known.has(entry)) problems.push(`npm/${entry} is not in napi.targets`);
  }
  return problems;
}

/** Adds (`on`) or removes the optional dependencies in package.json, keeping everything else. */
export function setOptional(dir, on) {
  const file = path.join(dir, 'package.json');
  const { optionalDependencies: _, ...main } = read(file);
  // Replaced in one rename: a process resolving the package meanwhile never reads half a file.
  const next = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(next, json(on ? { ...main, optionalDependencies: optionalDependencies(main) } : main));
  fs.renameSync(next, file);
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = path.resolve(fileURLToPath(import.meta.url), '../..');
  const mode = process.argv[2];
  if (mode === '--pack' || mode === '--unpack') setOptional(dir, mode === '--pack');
  else {
    const problems = sync(dir, { check: mode === '--check' });
    for (const p of problems) console.error(p);
    if (problems.length) process.exit(1);
  }
}
