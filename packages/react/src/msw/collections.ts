// The resource collections of the document, found from its shape rather than listed by hand: a
// collection is a path whose GET answers the list envelope (`{<plural>: […], next_cursor, has_more}`);
// its items live at the path plus one `{param}`, whose GET answers `{<noun>: {…}}`.
import {
  deref,
  type JsonObject,
  listOperations,
  type OpenApiDocument,
  type OperationInfo,
  operationResponses,
} from '@svc/contract/browser';

/** One collection of resources and the operations on it. */
export interface Collection {
  /** The list path: `/workspaces/{workspace}/computers`. */
  path: string;
  /** The item path: `/workspaces/{workspace}/computers/{computer}`. */
  itemPath: string;
  /** The item's path parameter: `computer`. */
  param: string;
  /** The path parameters of the list path, outermost first: `['workspace']`. */
  parents: string[];
  /** The list envelope's key (`computers`) and the item envelope's (`computer`). */
  plural: string;
  noun: string;
  /** The properties of the item schema: what a request body may set. */
  fields: Set<string>;
  list: OperationInfo;
  create?: OperationInfo;
  get?: OperationInfo;
  update?: OperationInfo;
  remove?: OperationInfo;
  /** POST `itemPath/<verb>` operations: actions on one item. */
  actions: OperationInfo[];
}

const PARAM = /^\{(.+)\}$/;

/** The path parameters of a path, outermost first. */
export function pathParams(path: string): string[] {
  return path.split('/').flatMap((segment) => PARAM.exec(segment)?.[1] ?? []);
}

/** The JSON schema of an operation's success answer, `$ref`s of its top level followed. */
export function successSchema(document: OpenApiDocument, op: OperationInfo): JsonObject | undefined {
  const ok = operationResponses(document, op).find((r) => /^2\d\d$/.test(r.status));
  return ok?.schema === undefined ? undefined : deref(document, ok.schema);
}

/**
 * Every collection of the document, parents before children.
 *
 * @example
 * import { BUNDLED_DOCUMENT, findCollections } from '@svc/react/msw';
 * findCollections(BUNDLED_DOCUMENT).map((c) => c.plural); // ['workspaces', 'members', …]
 */
export function findCollections(document: OpenApiDocument): Collection[] {
  const operations = listOperations(document);
  const at = (method: string, path: string) =>
    operations.find((op) => op.method === method && op.path === path);
  const found: Collection[] = [];
  for (const list of operations.filter((op) => op.method === 'get')) {
    const properties = (successSchema(document, list)?.properties ?? {}) as Record<string, JsonObject>;
    const plural = Object.keys(properties).find((key) => deref(document, properties[key]).type === 'array');
    if (!plural || !('has_more' in properties)) continue;
    const item = operations.find(
      (op) => op.path.startsWith(`${list.path}/{`) && PARAM.test(op.path.slice(list.path.length + 1)),
    );
    if (!item) continue;
    const itemPath = item.path;
    const get = at('get', itemPath);
    const create = at('post', list.path);
    const enveloped = (successSchema(document, get ?? create ?? list)?.properties ?? {}) as Record<
      string,
      JsonObject
    >;
    const noun = get || create ? Object.keys(enveloped)[0] : undefined;
    if (!noun) continue;
    const items = deref(document, properties[plural]).items;
    const itemSchema = items === undefined ? {} : deref(document, items);
    found.push({
      path: list.path,
      itemPath,
      param: PARAM.exec(itemPath.slice(list.path.length + 1))![1]!,
      parents: pathParams(list.path),
      plural,
      noun,
      fields: new Set(Object.keys((itemSchema.properties ?? {}) as object)),
      list,
      create,
      get,
      update: at('patch', itemPath) ?? at('put', itemPath),
      remove: at('delete', itemPath),
      actions: operations.filter(
        (op) =>
          op.method === 'post' &&
          op.path.startsWith(`${itemPath}/`) &&
          !op.path.slice(itemPath.length + 1).includes('/'),
      ),
    });
  }
  // A create of a child collection is not an action on its parent's item.
  const lists = new Set(found.map((c) => c.path));
  for (const collection of found) collection.actions = collection.actions.filter((op) => !lists.has(op.path));
  return found.sort((a, b) => a.parents.length - b.parents.length);
}
