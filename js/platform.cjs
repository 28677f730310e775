'use strict';
// What this process runs on, in the platform packages' naming, and the failure every engine call
// reports when no native binary could be loaded for it (SPEC §14 D18).

const { GraphError } = require('./errors.cjs');
const pkg = require('../package.json');

const ARCH = { x64: 'x86_64', arm64: 'aarch64' };

/** `linux-x64-gnu`, `linux-arm64-musl`, `darwin-arm64`, `win32-x64-msvc`… as napi names them. */
function platformName() {
  const { platform, arch } = process;
  if (platform === 'win32') return `${platform}-${arch}-msvc`;
  if (platform !== 'linux') return `${platform}-${arch}`;
  const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : undefined;
  return `${platform}-${arch}-${report?.header?.glibcVersionRuntime ? 'gnu' : 'musl'}`;
}

/** The napi target triple this process would need, when it is one we build. */
function targetOf(platform) {
  const [os, arch, abi] = platform.split('-');
  const cpu = ARCH[arch];
  const triple = { linux: `${cpu}-unknown-linux-${abi}`, darwin: `${cpu}-apple-darwin`, win32: `${cpu}-pc-windows-${abi}` }[os];
  return pkg.napi.targets.includes(triple) ? triple : undefined;
}

/** CG_CONFIG_INVALID / check_config naming the platform seen and what would serve it. */
function bindingMissing() {
  const platform = platformName();
  const supported = targetOf(platform) !== undefined;
  return new GraphError({
    code: 'CG_CONFIG_INVALID',
    phase: 'config',
    nextAction: 'check_config',
    details: {
      reason: 'native_binding_missing',
      platform,
      ...(supported ? { package: `${pkg.name}-${platform}` } : {}),
      supportedTargets: [...pkg.napi.targets],
    },
  });
}

/** A stand-in for the engine: every function (and constructor) throws bindingMissing(). */
function missingBinding() {
  const fail = () => {
    throw bindingMissing();
  };
  return new Proxy({}, { get: (_, name) => (name === 'then' ? undefined : fail) });
}

module.exports = { platformName, missingBinding };
