import { isPluralNoun, operations } from '../lib/openapi.js';
import { CUSTOM_VERBS } from '../lib/verbs.js';

const isTemplate = (segment) => /^\{[^}]+\}$/.test(segment);

/**
 * svc-custom-action: a custom action is a POST on an action segment right after a resource,
 * `/<collection>/{resource}/<verb>` (a singular literal after a path parameter; a plural one is a
 * sub-collection). The verb is one of CUSTOM_VERBS (rules/lib/verbs.js, the list Redocly's
 * svc/operation-id-verb reads too), the method is POST, and the operationId starts with the verb.
 */
export default function customAction(doc) {
  const results = [];
  for (const { path, method, operation, at } of operations(doc)) {
    const segments = path.split('/').filter(Boolean);
    if (segments.length < 2) continue;
    const last = segments[segments.length - 1];
    if (isTemplate(last) || !isTemplate(segments[segments.length - 2]) || isPluralNoun(last)) continue;
    const problems = [];
    if (!CUSTOM_VERBS.includes(last))
      problems.push(
        `\`${last}\` is not a custom-action verb (${CUSTOM_VERBS.join(', ')}; the list is rules/lib/verbs.js)`,
      );
    if (method !== 'post') problems.push(`it must be a POST, not ${method.toUpperCase()}`);
    const id = typeof operation.operationId === 'string' ? operation.operationId : '';
    if (!new RegExp(`^${last}[A-Z]`).test(id))
      problems.push(`its operationId \`${id}\` must start with the verb \`${last}\``);
    if (problems.length > 0) {
      results.push({
        message: `${method.toUpperCase()} ${path} is a custom action: ${problems.join('; ')}.`,
        path: at,
      });
    }
  }
  return results;
}
