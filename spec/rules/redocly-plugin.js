// Redocly CLI plugin of the v1 contract (loaded by ../redocly.yaml under `plugins:`): rules that need
// data shared with the Spectral ruleset, so that data lives in one place (lib/verbs.js).
import { OPERATION_VERBS } from './lib/verbs.js';

const OPERATION_ID = new RegExp(`^(${OPERATION_VERBS.join('|')})[A-Z][A-Za-z0-9]*$`);

/**
 * svc/operation-id-verb: every operationId is lowerCamelCase and starts with a verb of
 * lib/verbs.js (listComputers, getMe, startComputer, exchangeToken). Clients, CLI commands and MCP
 * tools derive their names from it.
 */
function OperationIdVerb() {
  return {
    Operation: {
      enter(operation, ctx) {
        const id = operation.operationId;
        if (typeof id !== 'string' || OPERATION_ID.test(id)) return;
        ctx.report({
          message: `operationId \`${id}\` must be lowerCamelCase and start with a verb (${OPERATION_VERBS.join(', ')}); the list is rules/lib/verbs.js.`,
          location: ctx.location.child('operationId'),
        });
      },
    },
  };
}

/** The plugin: its rules are named `svc/<rule>` in redocly.yaml. */
export default function svcPlugin() {
  return {
    id: 'svc',
    rules: {
      oas3: {
        'operation-id-verb': OperationIdVerb,
      },
    },
  };
}
