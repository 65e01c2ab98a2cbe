// Redocly CLI plugin of the v1 contract (loaded by ../redocly.yaml under `plugins:`): rules that need
// data shared with the Spectral ruleset, so that data lives in one place (lib/verbs.js).
import { STANDARD_VERBS } from './lib/verbs.js';

/**
 * svc/operation-id-verb: every operationId is lowerCamelCase and starts with a standard verb of
 * lib/verbs.js (listComputers, getMe) or with the verb of the custom action the operation declares,
 * `x-svc.action` (startComputer, exchangeToken). Clients, CLI commands and MCP tools derive their names
 * from it.
 */
function OperationIdVerb() {
  return {
    Operation: {
      enter(operation, ctx) {
        const id = operation.operationId;
        const action = operation['x-svc']?.action;
        const verbs =
          typeof action === 'string' && /^[a-z]+$/.test(action)
            ? [...STANDARD_VERBS, action]
            : STANDARD_VERBS;
        if (typeof id !== 'string' || new RegExp(`^(${verbs.join('|')})[A-Z][A-Za-z0-9]*$`).test(id)) return;
        ctx.report({
          message: `operationId \`${id}\` must be lowerCamelCase and start with a standard verb (${STANDARD_VERBS.join(', ')}; rules/lib/verbs.js) or the verb its custom action declares (\`x-svc.action\`).`,
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
