import { isObject, matchesRoute, operations } from '../lib/openapi.js';

/**
 * svc-bearer-auth: every route except the health route needs `Authorization: Bearer <token>`
 * (conventions §1 and §4 rule 1). The effective security of each operation (its own `security`, else
 * the document's) must be non-empty, and every alternative in it must name an `http`/`bearer` scheme,
 * so no alternative lets a call through without a Bearer token. The public routes must say so
 * explicitly with `security: []`.
 * Options: { public: string[] } routes like "GET /health".
 */
export default function bearerAuth(doc, options) {
  const publicRoutes = options?.public ?? [];
  const schemes = isObject(doc?.components?.securitySchemes) ? doc.components.securitySchemes : {};
  const bearer = new Set(
    Object.entries(schemes)
      .filter(([, s]) => isObject(s) && s.type === 'http' && String(s.scheme).toLowerCase() === 'bearer')
      .map(([name]) => name),
  );
  const results = [];
  for (const op of operations(doc)) {
    const route = `${op.method.toUpperCase()} ${op.path}`;
    const own = op.operation.security;
    if (matchesRoute(publicRoutes, op)) {
      if (!(Array.isArray(own) && own.length === 0)) {
        results.push({
          message: `\`${route}\` is public and must declare \`security: []\` explicitly.`,
          path: own === undefined ? op.at : [...op.at, 'security'],
        });
      }
      continue;
    }
    const effective = own ?? doc.security;
    const at =
      own === undefined ? (doc.security === undefined ? op.at : ['security']) : [...op.at, 'security'];
    if (!Array.isArray(effective) || effective.length === 0) {
      results.push({
        message: `\`${route}\` must be secured by an http bearer security scheme (its effective security is empty).`,
        path: at,
      });
      continue;
    }
    effective.forEach((requirement, index) => {
      const names = isObject(requirement) ? Object.keys(requirement) : [];
      if (!names.some((name) => bearer.has(name))) {
        const where = own === undefined ? 'Global security' : `\`${route}\` security`;
        results.push({
          message: `${where} alternative ${index} (${names.join(' + ') || 'anonymous {}'}) does not require an http bearer scheme; every alternative must.`,
          path: [...at, index],
        });
      }
    });
  }
  return results;
}
