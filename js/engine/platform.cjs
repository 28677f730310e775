'use strict';
// What this process runs on, in the platform packages' naming, and the failure every engine call
// reports when no native binary could be loaded for it. The package itself still loads then
// (`--help` and `--version` work): the binary ships in a per-platform optional dependency that
// a platform without one, or an install with --omit=optional, does not have.

const { GraphError } = require('../errors.cjs');
const pkg = require('../../package.json');

const NODE_CPU = { x86_64: 'x64', aarch64: 'arm64' };
const LIBC = { gnu: 'glibc', musl: 'musl' };

/** `x86_64-unknown-linux-gnu` → { triple, platform: 'linux-x64-gnu', os, cpu, libc } — napi's
 *  naming of a target, as process.platform/arch and the platform packages spell it. */
function platformOf(triple) {
  const [arch, vendor, system, abi] = triple.split('-');
  const os = vendor === 'apple' && system === 'darwin' ? 'darwin' : system === 'windows' ? 'win32' : system === 'linux' ? 'linux' : undefined;
  const cpu = NODE_CPU[arch];
  if (!os || !cpu || (os === 'linux' && !LIBC[abi])) throw new Error(`unsupported target ${triple}`);
  const platform = os === 'darwin' ? `${os}-${cpu}` : `${os}-${cpu}-${abi}`;
  return { triple, platform, os, cpu, libc: os === 'linux' ? LIBC[abi] : undefined };
}

/** `linux-x64-gnu`, `linux-arm64-musl`, `darwin-arm64`, `win32-x64-msvc`… as napi names them. */
function platformName() {
  const { platform, arch } = process;
  if (platform === 'win32') return `${platform}-${arch}-msvc`;
  if (platform !== 'linux') return `${platform}-${arch}`;
  const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : undefined;
  return `${platform}-${arch}-${report?.header?.glibcVersionRuntime ? 'gnu' : 'musl'}`;
}

/** The napi target triple this process would need, when it is one we build. */
const targetOf = (platform) => pkg.napi.targets.find((triple) => platformOf(triple).platform === platform);

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

module.exports = { platformName, platformOf, missingBinding };
