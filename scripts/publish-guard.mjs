#!/usr/bin/env node
// Refuses to pack or publish a package that would not work for its users.
//
//   node scripts/publish-guard.mjs main       (the main package's `prepack`) — the generated
//       loader and engine tables must be there, the loader built for this version, and nothing
//       packed may be a native binary (binaries ship only in the platform packages).
//   node scripts/publish-guard.mjs platform   (a platform package's `prepublishOnly`, run in its
//       folder) — its binary must be there and be a release build, told by the profile marker
//       build.rs embeds, never by its size.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const MARKER = 'capability-graph-build-profile=';

export function profileOf(file) {
  const bytes = fs.readFileSync(file);
  const at = bytes.indexOf(MARKER);
  if (at < 0) return undefined;
  const rest = bytes.subarray(at + MARKER.length, at + MARKER.length + 32).toString('latin1');
  return /^[a-z0-9_-]+/.exec(rest)?.[0];
}

function checkMain(dir) {
  const problems = [];
  const { version } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  for (const file of ['binding.js', 'js/engine-tables.cjs']) {
    if (!fs.existsSync(path.join(dir, file))) problems.push(`${file} is missing: run \`npm run build\` first`);
  }
  const loader = path.join(dir, 'binding.js');
  if (fs.existsSync(loader) && !fs.readFileSync(loader, 'utf8').includes(`expected ${version} but got`)) {
    problems.push(`binding.js was generated for another version than ${version}: run \`npm run build\``);
  }
  const listing = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir, encoding: 'utf8' }));
  for (const { path: file } of listing[0].files) {
    if (file.endsWith('.node')) problems.push(`${file}: the main package must not contain a native binary`);
  }
  return problems;
}

function checkPlatform(dir) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const binary = path.join(dir, manifest.main);
  if (!fs.existsSync(binary)) return [`${manifest.main} is missing`];
  const profile = profileOf(binary);
  if (profile !== 'release') return [`${manifest.main} is a ${profile ?? 'unmarked'} build; publish only a release build`];
  return [];
}

const mode = process.argv[2];
const dir = process.cwd();
const problems = mode === 'main' ? checkMain(dir) : mode === 'platform' ? checkPlatform(dir) : [`unknown mode ${mode}`];
if (problems.length) {
  for (const p of problems) console.error(`publish guard: ${p}`);
  process.exit(1);
}
