#!/usr/bin/env node
// The release workflow's matrices, generated from `napi.targets` so the workflow, `npm/` and the
// optional dependencies cannot name different targets. Prints `build=<json>` and `test=<json>`
// lines for $GITHUB_OUTPUT.
//
// build: where each target is compiled (native runners; zig for musl, the napi cross toolchain
//        for Linux arm64 glibc). test: each binary on its own platform with every supported Node.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { platformOf } from './platforms.mjs';

export const NODE_VERSIONS = ['20', '22', '24'];

const RUNNERS = {
  // The napi cross toolchain links Linux glibc builds against glibc 2.17, older than any distro.
  'x86_64-unknown-linux-gnu': { host: 'ubuntu-24.04', cross: '--use-napi-cross' },
  'aarch64-unknown-linux-gnu': { host: 'ubuntu-24.04', cross: '--use-napi-cross' },
  'x86_64-unknown-linux-musl': { host: 'ubuntu-24.04', cross: '-x' },
  'aarch64-unknown-linux-musl': { host: 'ubuntu-24.04', cross: '-x' },
  'x86_64-apple-darwin': { host: 'macos-15', cross: '' },
  'aarch64-apple-darwin': { host: 'macos-15', cross: '' },
  'x86_64-pc-windows-msvc': { host: 'windows-2022', cross: '' },
};

/** GitHub-hosted runner labels a matrix may name (the linter's own list predates several). */
export const HOSTED_RUNNERS = ['ubuntu-24.04', 'ubuntu-24.04-arm', 'macos-15', 'macos-15-intel', 'windows-2022'];

/** Where a binary runs for its tests: a native runner, in a container for Linux. */
function testerOf(target) {
  const { os, cpu, libc } = platformOf(target);
  if (os === 'linux') {
    return {
      host: cpu === 'arm64' ? 'ubuntu-24.04-arm' : 'ubuntu-24.04',
      image: libc === 'musl' ? 'alpine' : 'bookworm-slim',
    };
  }
  if (os === 'darwin') return { host: cpu === 'arm64' ? 'macos-15' : 'macos-15-intel', image: '' };
  return { host: 'windows-2022', image: '' };
}

export function releaseMatrix(main) {
  const build = main.napi.targets.map((target) => {
    const runner = RUNNERS[target];
    if (!runner) throw new Error(`no release runner for ${target}`);
    return { target, platform: platformOf(target).platform, host: runner.host, cross: runner.cross };
  });
  const test = build.flatMap(({ target, platform }) =>
    NODE_VERSIONS.map((node) => ({ target, platform, node, ...testerOf(target) })),
  );
  return { build: { include: build }, test: { include: test } };
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(fileURLToPath(import.meta.url), '../..');
  const { build, test } = releaseMatrix(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')));
  console.log(`build=${JSON.stringify(build)}`);
  console.log(`test=${JSON.stringify(test)}`);
}
