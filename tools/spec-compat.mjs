// The compatibility policy of the v1 contract as code (docs/compatibility.md is its prose; a test
// keeps the two identical): classifies every difference between two bundled OpenAPI documents.
//
// Each operation of the base is compared with the same method and path in the current document,
// with its parameters, request body, responses and security resolved through every `$ref`. So a
// change to a shared component is found, and reported, under every operation it reaches.

import { isByteMediaType, MAX_BYTES_EXTENSION } from '../spec/rules/lib/bytes.js';
import { PERMISSION_RANK } from '../spec/rules/lib/policy.js';

/** @typedef {'breaking' | 'additive' | 'deprecation'} ChangeClass */

/**
 * Every kind of change the gate knows and its class. A `request-*` schema kind is about what
 * clients send (request bodies and parameters), a `response-*` kind about what they receive.
 * @type {Readonly<Record<string, ChangeClass>>}
 */
export const POLICY = Object.freeze({
  'operation-added': 'additive',
  'operation-removed': 'breaking',
  'operation-id-changed': 'breaking',
  'operation-deprecated': 'deprecation',
  'operation-undeprecated': 'additive',
  'security-changed': 'breaking',
  'security-scheme-changed': 'breaking',
  'permission-raised': 'breaking',
  'permission-lowered': 'additive',
  'permission-renamed': 'additive',
  'permission-changed': 'breaking',
  'server-changed': 'breaking',
  'parameter-added-optional': 'additive',
  'parameter-added-required': 'breaking',
  'parameter-removed': 'breaking',
  'parameter-renamed': 'breaking',
  'parameter-became-required': 'breaking',
  'parameter-became-optional': 'additive',
  'parameter-style-changed': 'breaking',
  'parameter-deprecated': 'deprecation',
  'request-body-added-optional': 'additive',
  'request-body-added-required': 'breaking',
  'request-body-removed': 'breaking',
  'request-body-became-required': 'breaking',
  'request-body-became-optional': 'additive',
  'request-media-type-added': 'additive',
  'request-media-type-removed': 'breaking',
  'response-status-removed': 'breaking',
  'response-success-status-added': 'breaking',
  'response-error-status-added': 'additive',
  'response-media-type-added': 'additive',
  'response-media-type-removed': 'breaking',
  'response-header-added': 'additive',
  'response-header-removed': 'breaking',
  'response-header-became-optional': 'breaking',
  'request-field-added-optional': 'additive',
  'request-field-added-required': 'breaking',
  'request-field-removed': 'breaking',
  'request-field-renamed': 'breaking',
  'request-field-became-required': 'breaking',
  'request-field-became-optional': 'additive',
  'request-field-deprecated': 'deprecation',
  'response-field-added': 'additive',
  'response-field-removed': 'breaking',
  'response-field-renamed': 'breaking',
  'response-field-became-optional': 'breaking',
  'response-field-became-required': 'additive',
  'response-field-deprecated': 'deprecation',
  'request-type-changed': 'breaking',
  'request-type-widened': 'additive',
  'response-type-changed': 'breaking',
  'response-type-narrowed': 'additive',
  'request-enum-value-added': 'additive',
  'request-enum-value-removed': 'breaking',
  'response-enum-value-added': 'additive',
  'response-enum-value-removed': 'breaking',
  'request-constraint-loosened': 'additive',
  'request-constraint-tightened': 'breaking',
  'response-constraint-tightened': 'additive',
  'response-constraint-loosened': 'breaking',
  'request-constraint-changed': 'breaking',
  'response-constraint-changed': 'breaking',
  'request-default-changed': 'breaking',
  'request-variant-added': 'additive',
  'request-variant-removed': 'breaking',
  'response-variant-added': 'breaking',
  'response-variant-removed': 'additive',
  'request-additional-properties-allowed': 'additive',
  'request-additional-properties-refused': 'breaking',
  'response-additional-properties-changed': 'additive',
  // Event streams (`text/event-stream`), event by event. An event's data is compared in the `event`
  // direction: a stream replays events recorded before a change (`Last-Event-ID`, `after=0`), so what
  // an event already in the log could fail (a new required field, a narrower type, a tighter bound) is
  // breaking as well as what clients could not read (a removed or retyped field).
  'stream-event-added': 'additive',
  'stream-event-removed': 'breaking',
  'stream-event-data-changed': 'breaking',
  'event-field-added-optional': 'additive',
  'event-field-added-required': 'breaking',
  'event-field-removed': 'breaking',
  'event-field-renamed': 'breaking',
  'event-field-became-required': 'breaking',
  'event-field-became-optional': 'breaking',
  'event-field-deprecated': 'deprecation',
  'event-type-changed': 'breaking',
  'event-enum-value-added': 'additive',
  'event-enum-value-removed': 'breaking',
  'event-constraint-loosened': 'breaking',
  'event-constraint-tightened': 'breaking',
  'event-constraint-changed': 'breaking',
  'event-variant-added': 'breaking',
  'event-variant-removed': 'breaking',
  'event-additional-properties-allowed': 'additive',
  'event-additional-properties-refused': 'breaking',
  // Byte bodies (rules/lib/bytes.js: a file or a tar archive, never JSON). Their schema says nothing but
  // `type: string, format: binary`; what clients rely on is the media type, an upload's limit
  // (`x-svc-max-bytes`: a client that sent up to the old limit gets 413 under a lower one) and a
  // download's headers (response-header-removed). Bytes in place of JSON, or JSON in place of bytes,
  // or one byte type in place of another, is one body replaced by another: breaking either way.
  'request-byte-limit-lowered': 'breaking',
  'request-byte-limit-raised': 'additive',
  'byte-body-media-type-changed': 'breaking',
  // Webhooks (the `webhooks` section): what the service POSTs to receivers. A receiver reads a delivery
  // as a client reads a response, so its body and headers are compared with the `response-*` kinds
  // (a field or header removed, a type widened, is breaking). Their payload schemas are the event
  // stream's, which compares the same schemas in the stricter `event` direction as well.
  'webhook-added': 'additive',
  'webhook-removed': 'breaking',
});

/** The media type of an event stream, compared event by event (compareStream). */
const EVENT_STREAM = 'text/event-stream';

/**
 * One classified difference, seen from one operation.
 * @typedef {object} Change
 * @property {string} kind a key of POLICY
 * @property {ChangeClass} class
 * @property {string} operation `GET /path`, `WEBHOOK <event type>` for a webhook, or `*` for the whole API
 * @property {string} [operationId]
 * @property {string} where where in the operation (`response 200 (application/json) computer.name`)
 * @property {string} message what changed
 * @property {string} pointer JSON pointer into the current bundle of the changed node (or of its
 *   nearest surviving parent, for a removal)
 */

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Keywords whose growth loosens a schema, and those whose growth tightens it. */
const UPPER_BOUNDS = ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties'];
const LOWER_BOUNDS = ['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties'];
/** Keywords that restrict when present and can only be compared for equality. */
const RESTRICTIONS = ['pattern', 'format', 'multipleOf', 'const', 'contentEncoding'];

/**
 * Classifies every change from `base` to `current` (two bundled OpenAPI 3.1 documents).
 *
 * @param {Record<string, any>} base the released or merge-base bundle
 * @param {Record<string, any>} current the working tree's bundle
 * @returns {Change[]}
 * @example
 * const changes = compareContracts(released, current);
 * const failing = changes.filter((c) => c.class === 'breaking');
 */
export function compareContracts(base, current) {
  const changes = [];
  const emit = (kind, operation, where, message, pointer, operationId) => {
    const cls = POLICY[kind];
    if (!cls) throw new Error(`unclassified change kind ${kind}`);
    changes.push({ kind, class: cls, operation, operationId, where, message, pointer });
  };

  const baseServers = JSON.stringify((base.servers ?? []).map((s) => s.url));
  const currentServers = JSON.stringify((current.servers ?? []).map((s) => s.url));
  if (baseServers !== currentServers) {
    emit('server-changed', '*', 'servers', `server URLs ${baseServers} → ${currentServers}`, '/servers');
  }

  const baseOps = operations(base);
  const currentOps = operations(current);
  for (const [key, op] of currentOps) {
    if (!baseOps.has(key)) {
      emit('operation-added', key, 'operation', `new operation ${key}`, op.pointer, op.operation.operationId);
    }
  }
  for (const [key, b] of baseOps) {
    const c = currentOps.get(key);
    if (!c) {
      const parent = current.paths?.[b.path] ? `/paths/${esc(b.path)}` : '/paths';
      emit(
        'operation-removed',
        key,
        'operation',
        `operation ${key} removed`,
        parent,
        b.operation.operationId,
      );
      continue;
    }
    const id = c.operation.operationId;
    const say = (kind, where, message, pointer) => emit(kind, key, where, message, pointer, id);
    compareOperation(base, current, b, c, say);
  }
  compareWebhooks(base, current, emit);
  return changes;
}

/** Every webhook of a document (its `post`): `WEBHOOK <event type>` → its operation and pointer. */
function webhooks(doc) {
  const found = new Map();
  for (const [name, rawItem] of Object.entries(doc.webhooks ?? {})) {
    const { node: item, pointer } = deref(doc, rawItem, `/webhooks/${esc(name)}`);
    if (!item?.post) continue;
    const { node: operation, pointer: at } = deref(doc, item.post, `${pointer}/post`);
    found.set(`WEBHOOK ${name}`, { name, item, operation, pointer: at });
  }
  return found;
}

/**
 * Compares the `webhooks` sections, as their receivers see them: a new webhook is additive, a removed
 * one breaking; a delivery's body is compared as a response (`payload body`) and its header
 * parameters as response headers (a header removed or no longer required is breaking, a new one
 * additive); its operationId as an operation's (generated types are named after it).
 */
function compareWebhooks(base, current, emit) {
  const bw = webhooks(base);
  const cw = webhooks(current);
  for (const [key, c] of cw)
    if (!bw.has(key))
      emit('webhook-added', key, 'webhook', `new webhook ${c.name}`, c.pointer, c.operation.operationId);
  for (const [key, b] of bw) {
    const c = cw.get(key);
    if (!c) {
      emit(
        'webhook-removed',
        key,
        'webhook',
        `webhook ${b.name} removed`,
        '/webhooks',
        b.operation.operationId,
      );
      continue;
    }
    const say = (kind, where, message, pointer) =>
      emit(kind, key, where, message, pointer, c.operation.operationId);
    if (b.operation.operationId !== c.operation.operationId)
      say(
        'operation-id-changed',
        'operationId',
        `operationId ${b.operation.operationId} → ${c.operation.operationId}`,
        `${c.pointer}/operationId`,
      );
    compareDeliveryHeaders(base, current, b, c, say);
    const bb = deref(base, b.operation.requestBody ?? {}, '').node;
    const cb = deref(current, c.operation.requestBody ?? {}, `${c.pointer}/requestBody`);
    compareContent(
      base,
      current,
      bb.content,
      cb.node.content,
      `${cb.pointer}/content`,
      'response',
      'payload',
      say,
    );
  }
}

/** A webhook's header parameters, compared as the headers of a response its receiver reads. */
function compareDeliveryHeaders(base, current, b, c, say) {
  const headers = (doc, entry) =>
    new Map([...parametersOf(doc, entry)].filter(([, { node }]) => node.in === 'header'));
  const bh = headers(base, b);
  const ch = headers(current, c);
  for (const [key, { node }] of bh)
    if (!ch.has(key))
      say(
        'response-header-removed',
        `delivery header ${node.name}`,
        `delivery header ${node.name} removed`,
        c.pointer,
      );
  for (const [key, { node: cn, pointer }] of ch) {
    const here = `delivery header ${cn.name}`;
    const before = bh.get(key);
    if (!before) {
      say('response-header-added', here, `new delivery header ${cn.name}`, pointer);
      continue;
    }
    if (before.node.required && !cn.required)
      say('response-header-became-optional', here, `${here} became optional`, pointer);
    if (before.node.schema || cn.schema)
      compareSchema(
        base,
        current,
        { node: before.node.schema ?? {}, pointer: '' },
        { node: cn.schema ?? {}, pointer: `${pointer}/schema` },
        'response',
        here,
        '',
        say,
      );
  }
}

/** Every operation of a document: `GET /path` → its operation, path item and pointer. */
function operations(doc) {
  const found = new Map();
  for (const [path, rawItem] of Object.entries(doc.paths ?? {})) {
    const { node: item } = deref(doc, rawItem, `/paths/${esc(path)}`);
    for (const method of METHODS) {
      if (!item?.[method]) continue;
      const pointer = `/paths/${esc(path)}/${method}`;
      const { node: operation, pointer: at } = deref(doc, item[method], pointer);
      found.set(`${method.toUpperCase()} ${path}`, { path, method, item, operation, pointer: at });
    }
  }
  return found;
}

function compareOperation(base, current, b, c, say) {
  const bo = b.operation;
  const co = c.operation;
  if (bo.operationId !== co.operationId) {
    say(
      'operation-id-changed',
      'operationId',
      `operationId ${bo.operationId} → ${co.operationId}`,
      `${c.pointer}/operationId`,
    );
  }
  if (!bo.deprecated && co.deprecated)
    say('operation-deprecated', 'operation', 'operation deprecated', `${c.pointer}/deprecated`);
  if (bo.deprecated && !co.deprecated)
    say('operation-undeprecated', 'operation', 'operation no longer deprecated', c.pointer);

  compareSecurity(base, current, b, c, say);
  comparePermission(b, c, say);
  compareParameters(base, current, b, c, say);
  compareRequestBody(base, current, b, c, say);
  compareResponses(base, current, b, c, say);
}

/**
 * Who may call the operation, as its `x-svc.permission` declares (design §8): a permission that
 * admits fewer callers shuts out some who could call before (they get 403 or 404), one that admits more
 * is additive, another one that admits the same roles (`computers` → `exec`) changes no caller's
 * answer. To or from `credential` (another kind of caller) is breaking. A side that declares none
 * (a contract from before `x-svc`) has nothing to compare.
 */
function comparePermission(b, c, say) {
  const before = b.operation['x-svc']?.permission;
  const after = c.operation['x-svc']?.permission;
  if (typeof before !== 'string' || typeof after !== 'string' || before === after) return;
  const from = PERMISSION_RANK[before];
  const to = PERMISSION_RANK[after];
  const kind =
    from === undefined || to === undefined
      ? 'permission-changed'
      : to > from
        ? 'permission-raised'
        : to < from
          ? 'permission-lowered'
          : 'permission-renamed';
  say(kind, 'permission', `permission ${before} → ${after}`, `${c.pointer}/x-svc/permission`);
}

function compareSecurity(base, current, b, c, say) {
  const bs = b.operation.security ?? base.security ?? [];
  const cs = c.operation.security ?? current.security ?? [];
  const pointer = c.operation.security ? `${c.pointer}/security` : '/security';
  if (canonical(bs) !== canonical(cs)) {
    say('security-changed', 'security', `security ${canonical(bs)} → ${canonical(cs)}`, pointer);
    return;
  }
  const names = new Set(cs.flatMap((requirement) => Object.keys(requirement)));
  for (const name of names) {
    const bd = base.components?.securitySchemes?.[name];
    const cd = current.components?.securitySchemes?.[name];
    const strip = (d) => canonical({ ...d, description: undefined });
    if (strip(bd ?? {}) !== strip(cd ?? {})) {
      say(
        'security-scheme-changed',
        `security scheme ${name}`,
        `security scheme \`${name}\` changed`,
        `/components/securitySchemes/${esc(name)}`,
      );
    }
  }
}

/** The effective parameters of an operation (path-item level, overridden by operation level). */
function parametersOf(doc, entry) {
  const params = new Map();
  const add = (list, pointer) => {
    (list ?? []).forEach((raw, i) => {
      const { node, pointer: at } = deref(doc, raw, `${pointer}/parameters/${i}`);
      if (!node?.name) return;
      const key = `${node.in}:${node.in === 'header' ? node.name.toLowerCase() : node.name}`;
      params.set(key, { node, pointer: at });
    });
  };
  add(entry.item.parameters, entry.pointer.replace(/\/[a-z]+$/, ''));
  add(entry.operation.parameters, entry.pointer);
  return params;
}

function compareParameters(base, current, b, c, say) {
  const bp = parametersOf(base, b);
  const cp = parametersOf(current, c);
  const removed = [...bp.keys()].filter((k) => !cp.has(k));
  const added = [...cp.keys()].filter((k) => !bp.has(k));
  const renamed = pairRenames(
    removed,
    added,
    (k) => bp.get(k).node,
    (k) => cp.get(k).node,
    (p) => p.in,
  );
  for (const [from, to] of renamed) {
    const { node } = cp.get(to);
    say(
      'parameter-renamed',
      `${node.in} parameter ${node.name}`,
      `${node.in} parameter \`${bp.get(from).node.name}\` renamed to \`${node.name}\``,
      cp.get(to).pointer,
    );
  }
  const renamedFrom = new Set(renamed.map(([from]) => from));
  const renamedTo = new Set(renamed.map(([, to]) => to));
  for (const key of removed) {
    if (renamedFrom.has(key)) continue;
    const { node } = bp.get(key);
    say(
      'parameter-removed',
      `${node.in} parameter ${node.name}`,
      `${node.in} parameter \`${node.name}\` removed`,
      c.pointer,
    );
  }
  for (const key of added) {
    if (renamedTo.has(key)) continue;
    const { node, pointer } = cp.get(key);
    const kind = node.required ? 'parameter-added-required' : 'parameter-added-optional';
    say(
      kind,
      `${node.in} parameter ${node.name}`,
      `new ${node.required ? 'required' : 'optional'} ${node.in} parameter \`${node.name}\``,
      pointer,
    );
  }
  for (const [key, { node: bn }] of bp) {
    const entry = cp.get(key);
    if (!entry) continue;
    const { node: cn, pointer } = entry;
    const where = `${cn.in} parameter ${cn.name}`;
    if (!bn.required && cn.required)
      say('parameter-became-required', where, `${where} became required`, `${pointer}/required`);
    if (bn.required && !cn.required)
      say('parameter-became-optional', where, `${where} became optional`, pointer);
    if (!bn.deprecated && cn.deprecated)
      say('parameter-deprecated', where, `${where} deprecated`, `${pointer}/deprecated`);
    if ((bn.style ?? '') !== (cn.style ?? '') || (bn.explode ?? '') !== (cn.explode ?? '')) {
      say('parameter-style-changed', where, `${where} serialization (style/explode) changed`, pointer);
    }
    if (bn.schema || cn.schema) {
      compareSchema(
        base,
        current,
        { node: bn.schema ?? {}, pointer: '' },
        { node: cn.schema ?? {}, pointer: `${pointer}/schema` },
        'request',
        where,
        '',
        say,
      );
    }
  }
}

function compareRequestBody(base, current, b, c, say) {
  const bb = b.operation.requestBody && deref(base, b.operation.requestBody, '');
  const cb = c.operation.requestBody && deref(current, c.operation.requestBody, `${c.pointer}/requestBody`);
  if (!bb && !cb) return;
  if (bb && !cb) {
    say('request-body-removed', 'request body', 'request body removed', c.pointer);
    return;
  }
  if (!bb && cb) {
    const kind = cb.node.required ? 'request-body-added-required' : 'request-body-added-optional';
    say(kind, 'request body', `new ${cb.node.required ? 'required' : 'optional'} request body`, cb.pointer);
    return;
  }
  if (!bb.node.required && cb.node.required)
    say(
      'request-body-became-required',
      'request body',
      'request body became required',
      `${cb.pointer}/required`,
    );
  if (bb.node.required && !cb.node.required)
    say('request-body-became-optional', 'request body', 'request body became optional', cb.pointer);
  compareContent(
    base,
    current,
    bb.node.content,
    cb.node.content,
    `${cb.pointer}/content`,
    'request',
    'request body',
    say,
  );
}

function compareContent(base, current, bc = {}, cc = {}, pointer, direction, where, say) {
  const bytesBefore = Object.keys(bc).some(isByteMediaType);
  const bytesAfter = Object.keys(cc).some(isByteMediaType);
  const swapped = Object.keys(bc).filter((type) => !(type in cc));
  if ((bytesBefore || bytesAfter) && swapped.length > 0 && Object.keys(cc).some((type) => !(type in bc))) {
    // One body for another where bytes are involved (a file for an archive, bytes for JSON or back):
    // said once as what it is, beside the media type removed that makes it breaking.
    say(
      'byte-body-media-type-changed',
      where,
      `${where}: ${Object.keys(bc).join(', ')} → ${Object.keys(cc).join(', ')}`,
      pointer,
    );
  }
  for (const type of swapped) {
    say(`${direction}-media-type-removed`, where, `${where}: media type ${type} removed`, pointer);
  }
  for (const type of Object.keys(cc)) {
    const at = `${pointer}/${esc(type)}`;
    if (!(type in bc)) {
      say(`${direction}-media-type-added`, where, `${where}: new media type ${type}`, at);
      continue;
    }
    const bs = bc[type].schema;
    const cs = cc[type].schema;
    if (isByteMediaType(type) && direction === 'request')
      compareByteLimit(base, current, bs, cs, `${at}/schema`, `${where} (${type})`, say);
    if (type === EVENT_STREAM && direction === 'response' && bs && cs) {
      compareStream(base, current, bs, cs, `${at}/schema`, `${where} (${type})`, say);
      continue;
    }
    if (bs || cs) {
      compareSchema(
        base,
        current,
        { node: bs ?? {}, pointer: '' },
        { node: cs ?? {}, pointer: `${at}/schema` },
        direction,
        type === 'application/json' ? `${where} body` : `${where} body (${type})`,
        '',
        say,
      );
    }
  }
}

/**
 * An upload's limit, `x-svc-max-bytes` on its byte body's schema: lower, and a client that sent up to
 * the old limit is refused (413); higher, and every request that passed still passes. A side without a
 * limit (svc-byte-body requires one) has nothing to compare.
 */
function compareByteLimit(base, current, bs, cs, pointer, where, say) {
  const before = bs && deref(base, bs, '').node?.[MAX_BYTES_EXTENSION];
  const after = cs && deref(current, cs, pointer).node?.[MAX_BYTES_EXTENSION];
  if (typeof before !== 'number' || typeof after !== 'number' || before === after) return;
  say(
    after < before ? 'request-byte-limit-lowered' : 'request-byte-limit-raised',
    where,
    `${where}: ${MAX_BYTES_EXTENSION} ${before} → ${after}`,
    `${pointer}/${MAX_BYTES_EXTENSION}`,
  );
}

function compareResponses(base, current, b, c, say) {
  const br = b.operation.responses ?? {};
  const cr = c.operation.responses ?? {};
  const pointer = `${c.pointer}/responses`;
  for (const status of Object.keys(br)) {
    if (!(status in cr))
      say('response-status-removed', `response ${status}`, `response ${status} removed`, pointer);
  }
  for (const status of Object.keys(cr)) {
    const at = `${pointer}/${esc(status)}`;
    if (!(status in br)) {
      const success = /^[123]/.test(status);
      const kind = success ? 'response-success-status-added' : 'response-error-status-added';
      say(kind, `response ${status}`, `new ${success ? 'success' : 'error'} response ${status}`, at);
      continue;
    }
    const bn = deref(base, br[status], '').node;
    const { node: cn, pointer: cp } = deref(current, cr[status], at);
    const where = `response ${status}`;
    compareHeaders(base, current, bn.headers, cn.headers, `${cp}/headers`, where, say);
    compareContent(base, current, bn.content, cn.content, `${cp}/content`, 'response', where, say);
  }
}

function compareHeaders(base, current, bh = {}, ch = {}, pointer, where, say) {
  const lower = (headers) =>
    new Map(Object.entries(headers).map(([name, h]) => [name.toLowerCase(), [name, h]]));
  const bm = lower(bh);
  const cm = lower(ch);
  for (const [key, [name]] of bm) {
    if (!cm.has(key))
      say('response-header-removed', `${where} header ${name}`, `${where}: header ${name} removed`, pointer);
  }
  for (const [key, [name, raw]] of cm) {
    const at = `${pointer}/${esc(name)}`;
    if (!bm.has(key)) {
      say('response-header-added', `${where} header ${name}`, `${where}: new header ${name}`, at);
      continue;
    }
    const bn = deref(base, bm.get(key)[1], '').node;
    const { node: cn, pointer: cp } = deref(current, raw, at);
    const here = `${where} header ${name}`;
    if (bn.required && !cn.required)
      say('response-header-became-optional', here, `${here} became optional`, cp);
    if (bn.schema || cn.schema) {
      compareSchema(
        base,
        current,
        { node: bn.schema ?? {}, pointer: '' },
        { node: cn.schema ?? {}, pointer: `${cp}/schema` },
        'response',
        here,
        '',
        say,
      );
    }
  }
}

/**
 * Compares two schemas in one direction (`request`: what clients send; `response`: what they get).
 * `field` is the dotted path inside the body, for messages; `stack` stops recursive schemas.
 */
function compareSchema(base, current, b, c, direction, where, field, say, stack = new Set()) {
  const bv = view(base, b.node, b.pointer);
  const cv = view(current, c.node, c.pointer ?? '');
  const key = `${bv.id}|${cv.id}`;
  if (stack.has(key)) return;
  const inner = new Set(stack).add(key);
  const place = where;
  const lead = field ? `\`${field}\`: ` : '';
  const at = cv.pointer;
  const emit = (what, message, pointer = at) => say(`${direction}-${what}`, place, message, pointer);

  // Types.
  if (bv.types && cv.types) {
    const added = [...cv.types].filter(
      (t) => !bv.types.has(t) && !(t === 'number' && bv.types.has('integer')),
    );
    const removed = [...bv.types].filter(
      (t) => !cv.types.has(t) && !(t === 'integer' && cv.types.has('number')),
    );
    const integerToNumber =
      bv.types.has('integer') &&
      !bv.types.has('number') &&
      cv.types.has('number') &&
      !cv.types.has('integer');
    const numberToInteger =
      bv.types.has('number') &&
      !bv.types.has('integer') &&
      cv.types.has('integer') &&
      !cv.types.has('number');
    const wider = added.length > 0 || integerToNumber;
    const narrower = removed.length > 0 || numberToInteger;
    const text = `${lead}type ${[...bv.types].join('|')} → ${[...cv.types].join('|')}`;
    if (direction === 'request' && wider && !narrower) emit('type-widened', text, `${at}/type`);
    else if (direction === 'response' && narrower && !wider) emit('type-narrowed', text, `${at}/type`);
    else if (wider || narrower) emit('type-changed', text, `${at}/type`);
  }

  // Enums: a list of allowed values, or none.
  if (bv.enum || cv.enum) {
    if (!bv.enum)
      emit('constraint-tightened', `${lead}now limited to ${JSON.stringify(cv.enum)}`, `${at}/enum`);
    else if (!cv.enum) emit('constraint-loosened', `${lead}no longer limited to ${JSON.stringify(bv.enum)}`);
    else {
      const bset = new Set(bv.enum.map((v) => JSON.stringify(v)));
      const cset = new Set(cv.enum.map((v) => JSON.stringify(v)));
      for (const v of cset)
        if (!bset.has(v)) emit('enum-value-added', `${lead}new enum value ${v}`, `${at}/enum`);
      for (const v of bset)
        if (!cset.has(v)) emit('enum-value-removed', `${lead}enum value ${v} removed`, `${at}/enum`);
    }
  }

  // Numeric and length bounds, patterns, formats.
  const bound = (name, tighter) =>
    emit(
      tighter ? 'constraint-tightened' : 'constraint-loosened',
      `${lead}${name} ${show(bv.raw[name])} → ${show(cv.raw[name])}`,
      `${at}/${name}`,
    );
  for (const name of UPPER_BOUNDS) {
    const [x, y] = [bv.raw[name], cv.raw[name]];
    if (x === y) continue;
    bound(name, y !== undefined && (x === undefined || y < x));
  }
  for (const name of LOWER_BOUNDS) {
    const [x, y] = [bv.raw[name], cv.raw[name]];
    if (x === y) continue;
    bound(name, y !== undefined && (x === undefined || y > x));
  }
  for (const name of RESTRICTIONS) {
    const [x, y] = [bv.raw[name], cv.raw[name]];
    if (canonical(x) === canonical(y)) continue;
    if (x !== undefined && y !== undefined)
      emit('constraint-changed', `${lead}${name} ${show(x)} → ${show(y)}`, `${at}/${name}`);
    else bound(name, y !== undefined);
  }
  if (!bv.raw.uniqueItems !== !cv.raw.uniqueItems) bound('uniqueItems', Boolean(cv.raw.uniqueItems));
  if (direction === 'request' && canonical(bv.raw.default) !== canonical(cv.raw.default)) {
    emit(
      'default-changed',
      `${lead}default ${show(bv.raw.default)} → ${show(cv.raw.default)}`,
      `${at}/default`,
    );
  }

  // Object properties.
  const removed = [...bv.props.keys()].filter((p) => !cv.props.has(p));
  const added = [...cv.props.keys()].filter((p) => !bv.props.has(p));
  const renamed = pairRenames(
    removed,
    added,
    (p) => bv.props.get(p).node,
    (p) => cv.props.get(p).node,
    () => '',
  );
  const renamedFrom = new Set(renamed.map(([from]) => from));
  const renamedTo = new Set(renamed.map(([, to]) => to));
  const sub = (name) => (field ? `${field}.${name}` : name);
  for (const [from, to] of renamed)
    emit('field-renamed', `\`${sub(from)}\` renamed to \`${sub(to)}\``, cv.props.get(to).pointer);
  for (const name of removed)
    if (!renamedFrom.has(name)) emit('field-removed', `\`${sub(name)}\` removed`, `${at}/properties`);
  for (const name of added) {
    if (renamedTo.has(name)) continue;
    const pointer = cv.props.get(name).pointer;
    if (direction === 'response') emit('field-added', `new field \`${sub(name)}\``, pointer);
    else if (cv.required.has(name))
      emit('field-added-required', `new required field \`${sub(name)}\``, pointer);
    else emit('field-added-optional', `new optional field \`${sub(name)}\``, pointer);
  }
  for (const [name, bp] of bv.props) {
    const cp = cv.props.get(name);
    if (!cp) continue;
    const was = bv.required.has(name);
    const is = cv.required.has(name);
    if (!was && is) emit('field-became-required', `\`${sub(name)}\` became required`, `${at}/required`);
    if (was && !is) emit('field-became-optional', `\`${sub(name)}\` became optional`, cp.pointer);
    if (!bp.node?.deprecated && cp.node?.deprecated)
      emit('field-deprecated', `\`${sub(name)}\` deprecated`, `${cp.pointer}/deprecated`);
    compareSchema(base, current, bp, cp, direction, where, sub(name), say, inner);
  }

  // Unknown properties: refused (`additionalProperties: false`), allowed, or a schema of their own.
  const [ba, ca] = [bv.raw.additionalProperties, cv.raw.additionalProperties];
  const refuses = (a) => a === false;
  if (refuses(ba) !== refuses(ca)) {
    const text = `${lead}unknown fields ${refuses(ca) ? 'now refused' : 'now allowed'}`;
    if (direction === 'response') emit('additional-properties-changed', text, `${at}/additionalProperties`);
    else emit(refuses(ca) ? 'additional-properties-refused' : 'additional-properties-allowed', text, at);
  } else if (typeof ba === 'object' && typeof ca === 'object') {
    compareSchema(
      base,
      current,
      { node: ba, pointer: `${bv.pointer}/additionalProperties` },
      { node: ca, pointer: `${at}/additionalProperties` },
      direction,
      where,
      sub('*'),
      say,
      inner,
    );
  }

  // Array items.
  if (bv.raw.items && cv.raw.items) {
    compareSchema(
      base,
      current,
      { node: bv.raw.items, pointer: `${bv.pointer}/items` },
      { node: cv.raw.items, pointer: `${at}/items` },
      direction,
      where,
      `${field}[]`,
      say,
      inner,
    );
  }

  // The schema of a string's content (`contentMediaType: application/json`): JSON inside a string is
  // still what clients read or send, so it is compared like the rest.
  const [bc, cc] = [bv.raw.contentSchema, cv.raw.contentSchema];
  if (bc && cc) {
    compareSchema(
      base,
      current,
      { node: bc, pointer: `${bv.pointer}/contentSchema` },
      { node: cc, pointer: `${at}/contentSchema` },
      direction,
      where,
      `${field}<json>`,
      say,
      inner,
    );
  } else if (bc || cc) {
    emit(
      cc ? 'constraint-tightened' : 'constraint-loosened',
      `${lead}contentSchema ${cc ? 'added' : 'removed'}`,
    );
  }

  // Alternatives, compared by position.
  for (const keyword of ['oneOf', 'anyOf']) {
    const bl = bv.raw[keyword] ?? [];
    const cl = cv.raw[keyword] ?? [];
    if (!bl.length && !cl.length) continue;
    for (let i = 0; i < Math.min(bl.length, cl.length); i++) {
      compareSchema(
        base,
        current,
        { node: bl[i], pointer: `${bv.pointer}/${keyword}/${i}` },
        { node: cl[i], pointer: `${at}/${keyword}/${i}` },
        direction,
        where,
        `${field}<${keyword} ${i}>`,
        say,
        inner,
      );
    }
    if (cl.length > bl.length)
      emit(
        'variant-added',
        `${lead}${cl.length - bl.length} new ${keyword} alternative(s)`,
        `${at}/${keyword}`,
      );
    if (cl.length < bl.length)
      emit(
        'variant-removed',
        `${lead}${bl.length - cl.length} ${keyword} alternative(s) removed`,
        `${at}/${keyword}`,
      );
  }
}

/**
 * Compares two event streams (the `text/event-stream` schema of a response: `type: array` of an item
 * schema whose `oneOf` branches tie event names to the schema of their data, `data.contentSchema`)
 * event by event: a new event name is additive, a removed one breaking, a name whose branch names
 * another data schema breaking, and each data schema is compared in the `event` direction (POLICY),
 * once per branch. The item's own fields (`id`, `retry`, …) are compared as a response.
 */
function compareStream(base, current, bs, cs, pointer, where, say) {
  const b = streamOf(base, bs, '');
  const c = streamOf(current, cs, pointer);
  // The item without its names and branches, which are compared event by event below.
  const bare = (item) => ({
    ...item,
    oneOf: undefined,
    properties: { ...item.properties, event: { ...item.properties?.event, enum: undefined } },
  });
  compareSchema(
    base,
    current,
    { node: bare(b.item), pointer: b.itemPointer },
    { node: bare(c.item), pointer: c.itemPointer },
    'response',
    where,
    '',
    say,
  );
  for (const [name, event] of c.events)
    if (!b.events.has(name))
      say('stream-event-added', `${where} event ${name}`, `new event \`${name}\``, event.pointer);
  for (const name of b.events.keys())
    if (!c.events.has(name))
      say(
        'stream-event-removed',
        `${where} event ${name}`,
        `event \`${name}\` removed`,
        `${c.itemPointer}/oneOf`,
      );
  const compared = new Set();
  for (const [name, ce] of c.events) {
    const be = b.events.get(name);
    if (!be) continue;
    const names = [...c.events]
      .filter(([, e]) => e.branch === ce.branch && b.events.has(e.name))
      .map(([n]) => n);
    const here = `${where} event ${names.join('|')}`;
    if (be.ref !== ce.ref) {
      say(
        'stream-event-data-changed',
        `${where} event ${name}`,
        `event \`${name}\`: its data is ${ce.ref ?? 'an inline schema'}, was ${be.ref ?? 'an inline schema'}`,
        `${ce.pointer}/properties/data/contentSchema`,
      );
      continue;
    }
    if (compared.has(ce.branch)) continue;
    compared.add(ce.branch);
    compareSchema(
      base,
      current,
      { node: be.data, pointer: '' },
      { node: ce.data, pointer: `${ce.pointer}/properties/data/contentSchema` },
      'event',
      here,
      '',
      say,
    );
  }
}

/** An event stream's item schema and its events: name → its branch, the `$ref` and schema of its data. */
function streamOf(doc, schema, pointer) {
  const { node: array, pointer: at } = deref(doc, schema, pointer);
  const { node: item, pointer: itemPointer } = deref(doc, array.items ?? {}, `${at}/items`);
  const events = new Map();
  (item.oneOf ?? []).forEach((raw, branch) => {
    const { node, pointer: branchPointer } = deref(doc, raw, `${itemPointer}/oneOf/${branch}`);
    const event = node.properties?.event ?? {};
    const names = event.const !== undefined ? [event.const] : (event.enum ?? []);
    const data = node.properties?.data?.contentSchema ?? {};
    const ref = typeof data.$ref === 'string' ? data.$ref : undefined;
    for (const name of names) events.set(name, { name, branch, data, ref, pointer: branchPointer });
  });
  return { item, itemPointer, events };
}

/** A schema with `$ref`s followed and `allOf` merged, ready to compare. */
function view(doc, node, pointer) {
  // OpenAPI 3.1: keywords next to a `$ref` apply together with the referenced schema (like allOf).
  if (typeof node?.$ref === 'string' && Object.keys(node).length > 1) {
    const { $ref, ...siblings } = node;
    return view(doc, { ...siblings, allOf: [{ $ref }, ...(siblings.allOf ?? [])] }, pointer);
  }
  const { node: raw, pointer: at } = deref(doc, node ?? {}, pointer);
  const props = new Map();
  const required = new Set(raw.required ?? []);
  let merged = { ...raw };
  for (const [name, schema] of Object.entries(raw.properties ?? {})) {
    props.set(name, { node: schema, pointer: `${at}/properties/${esc(name)}` });
  }
  (raw.allOf ?? []).forEach((part, i) => {
    const inner = view(doc, part, `${at}/allOf/${i}`);
    for (const [name, p] of inner.props) props.set(name, p);
    for (const name of inner.required) required.add(name);
    merged = { ...inner.raw, ...merged };
    if (inner.types && !raw.type) merged.type = [...inner.types];
  });
  const type = merged.type;
  const types = type === undefined ? undefined : new Set(Array.isArray(type) ? type : [type]);
  if (types && merged.nullable === true) types.add('null');
  return { id: at || canonical(raw), pointer: at, raw: merged, types, enum: merged.enum, props, required };
}

/** Follows `#/…` references inside one document. */
function deref(doc, node, pointer) {
  let at = pointer;
  let current = node;
  for (let hops = 0; current && typeof current.$ref === 'string' && hops < 32; hops++) {
    if (!current.$ref.startsWith('#')) break;
    at = current.$ref.slice(1);
    current = get(doc, at);
  }
  return { node: current ?? {}, pointer: at };
}

function get(doc, pointer) {
  let node = doc;
  for (const part of pointer.split('/').slice(1)) {
    node = node?.[decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return node;
}

/**
 * Pairs removed and added names whose definitions are identical (and, for parameters, in the same
 * place): a rename rather than a removal plus an addition. Only unambiguous one-to-one pairs.
 */
function pairRenames(removed, added, before, after, group) {
  const pairs = [];
  for (const from of removed) {
    const shape = canonical(withoutName(before(from)));
    const candidates = added.filter(
      (to) => group(after(to)) === group(before(from)) && canonical(withoutName(after(to))) === shape,
    );
    const rivals = removed.filter(
      (other) =>
        canonical(withoutName(before(other))) === shape && group(before(other)) === group(before(from)),
    );
    if (candidates.length === 1 && rivals.length === 1) pairs.push([from, candidates[0]]);
  }
  return pairs;
}

function withoutName(node) {
  if (!node || typeof node !== 'object') return node;
  const { name: _name, description: _description, example: _example, examples: _examples, ...rest } = node;
  return rest;
}

/** Stable JSON text (sorted keys), to compare values structurally. */
export function canonical(value) {
  if (value === undefined) return 'undefined';
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

const show = (value) => (value === undefined ? 'none' : JSON.stringify(value));
const esc = (segment) => String(segment).replaceAll('~', '~0').replaceAll('/', '~1');
