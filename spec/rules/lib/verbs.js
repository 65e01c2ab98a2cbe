// The verbs an operation of the v1 API may start with, read by both linters:
//
//   - Redocly (redocly-plugin.js, rule svc/operation-id-verb, on the sources): every operationId is
//     lowerCamelCase and starts with a standard verb, or with the verb of the custom action it declares
//     (`x-svc.action`, rules/lib/policy.js).
//   - Spectral (functions/customAction.js, rule svc-custom-action, on the bundle): a declared custom
//     action is none of these.
//
// A new custom action (say `POST /workspaces/{workspace}/computers/{computer}/resize`) declares its verb
// in the spec, `x-svc: {action: resize, …}`, beside the operation; nothing here changes.

/** Standard methods: every resource is listed, read, created, updated and deleted with these. */
export const STANDARD_VERBS = Object.freeze(['list', 'get', 'create', 'update', 'delete']);
