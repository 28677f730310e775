'use strict';
// Optional peer packages (the MCP SDK, the Codex SDK): loaded only by the feature that needs
// them, so the package installs and loads without them; when one is not installed, the feature
// fails with a GraphError naming the package to install (`details.package`).

const { GraphError } = require('./errors.cjs');

const MCP_SDK = '@modelcontextprotocol/sdk';

/** True when `error` says `pkg` itself cannot be found (not some file inside it, not its deps). */
function isMissing(error, pkg) {
  const code = error?.code;
  return (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') && String(error.message).includes(`'${pkg}`);
}

/** `require` of `subpath` of the MCP SDK, or CG_CONFIG_INVALID / check_config with details.package. */
function requireMcpSdk(subpath) {
  try {
    return require(`${MCP_SDK}/${subpath}`);
  } catch (error) {
    if (!isMissing(error, MCP_SDK)) throw error;
    throw new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'config', nextAction: 'check_config', details: { package: MCP_SDK } });
  }
}

module.exports = { requireMcpSdk, isMissing };
