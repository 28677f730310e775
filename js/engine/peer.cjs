'use strict';
// Optional peer packages (the MCP SDK, the Codex SDK, the agent SDKs): loaded only by the
// feature that needs them, so the package installs and loads without them; when one is not
// installed, the feature fails with a GraphError naming the package to install
// (`details.package`).

const { GraphError } = require('../errors.cjs');

const MCP_SDK = '@modelcontextprotocol/sdk';

/** True when `error` says `pkg` itself cannot be found (not some file inside it, not its deps). */
function isMissing(error, pkg) {
  const code = error?.code;
  if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') return false;
  // The request is quoted in the message: `pkg` alone or a subpath of it ('ai' is not 'aiohttp').
  const message = String(error.message);
  return message.includes(`'${pkg}'`) || message.includes(`'${pkg}/`);
}

/**
 * The file `request` (`pkg` or a subpath of it) names: beside this package (in its own
 * node_modules or the host's above it), or else in the host's own project (the working
 * directory), where a host that installed `pkg` as its dependency put it when this package is
 * linked from a checkout or installed elsewhere. One rule for every optional peer. null when
 * neither has `pkg`.
 */
function resolveFrom(request, pkg) {
  for (const options of [undefined, { paths: [process.cwd()] }]) {
    try {
      return require.resolve(request, options);
    } catch (error) {
      if (!isMissing(error, pkg)) throw error;
    }
  }
  return null;
}

const notInstalled = (pkg) => new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'config', nextAction: 'check_config', details: { package: pkg } });

/** `require` of `pkg` (or its `subpath`) where resolveFrom finds it, or CG_CONFIG_INVALID /
 *  check_config with details.package. */
function requirePeer(pkg, subpath) {
  const file = resolveFrom(subpath === undefined ? pkg : `${pkg}/${subpath}`, pkg);
  if (file === null) throw notInstalled(pkg);
  return require(file);
}

/** `require` of `subpath` of the MCP SDK, as requirePeer. */
const requireMcpSdk = (subpath) => requirePeer(MCP_SDK, subpath);

/** The entry file of optional package `pkg`, found as requirePeer finds it; null when missing. */
const resolvePeer = (pkg) => resolveFrom(pkg, pkg);

module.exports = { requireMcpSdk, requirePeer, isMissing, resolvePeer };
