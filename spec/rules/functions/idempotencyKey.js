import { effectiveParameters, operations } from '../lib/openapi.js';

const MUTATING = new Set(['post', 'put', 'patch', 'delete']);

/**
 * svc-idempotency-key: mutating requests accept the `Idempotency-Key` header, and create requests
 * require it (conventions §4 rules 2 and 3, design §10). A create is an operation whose operationId
 * starts with `create`.
 * Options: { header: string, createPrefix: string }.
 */
export default function idempotencyKey(doc, options) {
  const header = (options?.header ?? 'Idempotency-Key').toLowerCase();
  const createPrefix = options?.createPrefix ?? 'create';
  const results = [];
  for (const op of operations(doc)) {
    if (!MUTATING.has(op.method)) continue;
    const route = op.operation.operationId ?? `${op.method.toUpperCase()} ${op.path}`;
    const found = effectiveParameters(op).find(
      ({ parameter }) => parameter.in === 'header' && String(parameter.name).toLowerCase() === header,
    );
    if (found === undefined) {
      results.push({
        message: `Mutating operation \`${route}\` must accept the \`Idempotency-Key\` header parameter.`,
        path: [...op.at, 'parameters'],
      });
      continue;
    }
    const isCreate =
      typeof op.operation.operationId === 'string' && op.operation.operationId.startsWith(createPrefix);
    if (isCreate && found.parameter.required !== true) {
      results.push({
        message: `Create operation \`${route}\` must require the \`Idempotency-Key\` header (\`required: true\`).`,
        path: [...found.at, 'required'],
      });
    }
  }
  return results;
}
