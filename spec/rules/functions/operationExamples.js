import { isByteMediaType } from '../lib/bytes.js';
import { isObject, operations } from '../lib/openapi.js';

/**
 * svc-operation-examples: every request body and every response body of every operation carries at
 * least one named example (`examples`), which the mock server serves and the docs show. Responses
 * without a body (204) need none.
 */
export default function operationExamples(doc) {
  const results = [];
  const check = (holder, at, what) => {
    if (!isObject(holder?.content)) return;
    for (const [type, media] of Object.entries(holder.content)) {
      if (isByteMediaType(type)) continue;
      const examples = media?.examples;
      if (!isObject(examples) || Object.keys(examples).length === 0) {
        results.push({
          message: `${what} (${type}) must have at least one named example under \`examples\`.`,
          path: [...at, 'content', type],
        });
      }
    }
  };
  for (const op of operations(doc)) {
    check(op.operation.requestBody, [...op.at, 'requestBody'], 'Request body');
    for (const [status, response] of Object.entries(op.operation.responses ?? {})) {
      check(response, [...op.at, 'responses', status], 'Response body');
    }
  }
  return results;
}
