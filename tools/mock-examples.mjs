// The examples of a newer bundle, served before Prism has loaded it (the spec-dev loop's mock). Prism
// takes seconds to load the full bundle (a new process, the document dereferenced twice); meanwhile the
// front of tools/spec-mock.mjs keeps sending requests to the Prism that has loaded the older bundle.
// When the two bundles differ only in examples and prose, that Prism checks a request and chooses its
// answer (security, parameters, `Prefer`, status, media type, example name) exactly as one on the newer
// bundle would: only the example's value differs. So the front finds which example Prism answered (the
// one of that operation, status and media type whose value equals Prism's body) and sends the newer
// bundle's example of the same name instead. Anything else (a generated body, a changed schema or path)
// is Prism's answer as it is, until the newer Prism takes over.
import { isDeepStrictEqual } from 'node:util';

/** Keys that never change how Prism checks a request or which answer it picks, only what it says. */
const ANNOTATIONS = new Set(['example', 'examples', 'description', 'summary']);
/** Maps whose keys are names the spec's author chose: a property called `example` is not an annotation. */
const NAME_MAPS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'dependentSchemas',
  'paths',
  'webhooks',
  'schemas',
  'parameters',
  'headers',
  'responses',
  'requestBodies',
  'securitySchemes',
  'content',
  'encoding',
  'links',
  'callbacks',
  'pathItems',
  'variables',
  'mapping',
]);

const shapes = new WeakMap();

/** `node` without its annotations, as JSON; `names`: the node's keys are names, not keywords. */
function shapeOf(node, names = false) {
  if (Array.isArray(node)) return node.map((item) => shapeOf(item));
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (!names && ANNOTATIONS.has(key)) continue;
    out[key] = shapeOf(value, !names && NAME_MAPS.has(key));
  }
  return out;
}

/**
 * Whether two bundles differ at most in examples and prose (`example`, `examples`, `description`,
 * `summary`), so that Prism answers a request on either with the same status, headers and example name.
 * Each document's shape is computed once (documents are not changed after they are handed over).
 *
 * @param {Record<string, any>} a
 * @param {Record<string, any>} b
 * @returns {boolean}
 * @example
 * if (differOnlyInExamples(prismDoc, latestDoc)) … // the front may swap example values
 */
export function differOnlyInExamples(a, b) {
  if (a === b) return true;
  const shape = (doc) => {
    let text = shapes.get(doc);
    if (text === undefined) {
      text = JSON.stringify(shapeOf(doc));
      shapes.set(doc, text);
    }
    return text;
  };
  return shape(a) === shape(b);
}

/** The node a local `$ref` (`#/…`) points at, or the node itself. */
function local(doc, node) {
  if (typeof node?.$ref !== 'string' || !node.$ref.startsWith('#/')) return node;
  return node.$ref
    .slice(2)
    .split('/')
    .reduce((at, key) => at?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
}

/** The path template of `doc` that `pathname` falls under: a literal path before a templated one. */
function pathTemplate(doc, pathname) {
  let best;
  let bestParams = Number.POSITIVE_INFINITY;
  for (const template of Object.keys(doc.paths ?? {})) {
    const parts = template.split('/');
    const given = pathname.split('/');
    if (parts.length !== given.length) continue;
    let params = 0;
    const matches = parts.every((part, index) => {
      if (/^\{[^}]+\}$/.test(part)) {
        params += 1;
        return given[index] !== '';
      }
      return part === given[index];
    });
    if (matches && params < bestParams) {
      best = template;
      bestParams = params;
    }
  }
  return best;
}

/** The media type object of an answer: the operation's response for `status` (else its range, else `default`). */
function mediaOf(doc, template, method, status, mediaType) {
  const operation = doc.paths?.[template]?.[method];
  const responses = operation?.responses ?? {};
  const response = local(
    doc,
    responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default,
  );
  return response?.content?.[mediaType];
}

/** A media type's examples by name, values resolved (`''` names a lone `example`). */
function examplesOf(doc, media) {
  const named = Object.entries(media?.examples ?? {}).map(([name, example]) => [
    name,
    local(doc, example)?.value,
  ]);
  return media?.example === undefined ? named : [...named, ['', media.example]];
}

/**
 * The value the newer bundle gives the example Prism answered from the older one, or `undefined` when
 * Prism's body is not one of that answer's examples (generated, or the example was renamed away). The
 * caller has checked {@link differOnlyInExamples}.
 *
 * @param {{ served: Record<string, any>, current: Record<string, any>, method: string, pathname: string,
 *   status: number, mediaType: string, body: unknown, preferred?: string }} answer `served`: the bundle
 *   Prism has loaded; `body`: its parsed answer; `preferred`: the request's `Prefer: example=` name
 * @returns {{ name: string, value: unknown } | undefined}
 * @example
 * const newer = currentExample({ served, current, method: 'get', pathname: '/health', status: 200,
 *   mediaType: 'application/json', body: JSON.parse(text) });
 */
export function currentExample({ served, current, method, pathname, status, mediaType, body, preferred }) {
  const template = pathTemplate(served, pathname);
  if (template === undefined) return undefined;
  const lower = method.toLowerCase();
  const before = examplesOf(served, mediaOf(served, template, lower, status, mediaType));
  // The preferred example first: two examples may hold the same value.
  before.sort(([a], [b]) => (b === preferred) - (a === preferred));
  const match = before.find(([, value]) => isDeepStrictEqual(value, body));
  if (match === undefined) return undefined;
  const after = examplesOf(current, mediaOf(current, template, lower, status, mediaType));
  const same = after.find(([name]) => name === match[0]);
  return same === undefined ? undefined : { name: same[0], value: same[1] };
}
