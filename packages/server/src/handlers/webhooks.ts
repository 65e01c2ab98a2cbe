import { ApiError, invalidArgument } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { pageRequest, toPage } from '../platform/paging.js';
import { newWebhookSecret } from '../platform/secrets.js';
import { urlProblem } from '../webhooks/outbound.js';
import {
  attemptsOf,
  listWebhookDeliveryRows,
  queueWebhookDelivery,
  redeliverWebhookDelivery,
  webhookDeliveryOf,
} from '../webhooks/repositories/webhook-deliveries.js';
import {
  countWebhookEndpoints,
  deleteWebhookEndpoint,
  disableWebhookEndpoint,
  enableWebhookEndpoint,
  insertWebhookEndpoint,
  listWebhookEndpointRows,
  rotateWebhookEndpoint,
  sealedSecretOf,
  updateWebhookEndpoint,
  webhookEndpointOf,
} from '../webhooks/repositories/webhooks.js';
import { sampleEvent, workspaceEventTypes } from '../webhooks/samples.js';
import { API_PREFIX, permittedWorkspace, quotaExceeded } from './common.js';
import type { WebhookDeps } from './deps.js';
import type { Ctx, Handler } from './types.js';
import { renderWebhookDelivery, renderWebhookEndpoint } from './webhooks-render.js';

// The webhook endpoints of a workspace and their deliveries (design "Webhooks"). Reads need `read`
// and never show a secret; changes need `manage` (admin and owner): an endpoint receives every event
// of the workspace and holds a secret, like a key.

/** 400 on `url` when the receiver URL is refused (scheme, credentials, fragment, its addresses). */
async function checkUrl(deps: WebhookDeps, url: string | undefined): Promise<void> {
  if (url === undefined) return;
  const problem = await urlProblem(url, deps.webhooks.outbound);
  if (problem) throw invalidArgument([{ field: 'url', description: problem }]);
}

/** 400 on `event_types` for a type the spec does not list (`*` aside). */
function checkEventTypes(types: string[] | undefined): void {
  if (types === undefined) return;
  const known = new Set(workspaceEventTypes());
  const unknown = types.filter((type) => type !== '*' && !known.has(type));
  if (unknown.length > 0)
    throw invalidArgument([
      {
        field: 'event_types',
        description: `unknown event types: ${unknown.join(', ')} (see WorkspaceEventType)`,
      },
    ]);
}

type Managing =
  | Ctx<'updateWebhookEndpoint', WebhookDeps>
  | Ctx<'deleteWebhookEndpoint', WebhookDeps>
  | Ctx<'disableWebhookEndpoint', WebhookDeps>
  | Ctx<'enableWebhookEndpoint', WebhookDeps>
  | Ctx<'rotateWebhookEndpoint', WebhookDeps>
  | Ctx<'testWebhookEndpoint', WebhookDeps>
  | Ctx<'redeliverWebhookDelivery', WebhookDeps>;

/** The workspace and the endpoint of a change, the endpoint's row locked; counts the mutation. */
async function managed(ctx: Managing) {
  const { workspace } = await permittedWorkspace(ctx);
  await ctx.countMutation(workspace.id);
  const endpoint = await webhookEndpointOf(ctx.db, workspace.id, ctx.path.webhook_endpoint, { lock: true });
  return { workspace, endpoint };
}

const now = (ctx: { deps: WebhookDeps }) => new Date(ctx.deps.webhooks.now());

export const listWebhookEndpoints: Handler<'listWebhookEndpoints', WebhookDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  const page = pageRequest(ctx.deps.cursors, ctx.query, {
    op: 'listWebhookEndpoints',
    workspace: workspace.id,
  });
  const rows = await listWebhookEndpointRows(ctx.db, workspace.id, {
    after: page.after,
    limit: page.limit + 1,
  });
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  return {
    status: 200,
    body: { webhook_endpoints: items.map(renderWebhookEndpoint), next_cursor, has_more },
  };
};

/** A new endpoint with its secret, shown once (the idempotency record keeps the answer for a replay). */
export const createWebhookEndpoint: Handler<'createWebhookEndpoint', WebhookDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx, { lock: true });
  await ctx.countMutation(workspace.id);
  checkEventTypes(ctx.body.event_types);
  await checkUrl(ctx.deps, ctx.body.url);
  const limit = ctx.deps.config.quotas.webhookEndpointsPerWorkspace;
  if ((await countWebhookEndpoints(ctx.db, workspace.id)) >= limit)
    throw quotaExceeded(
      'webhook_endpoints_per_workspace',
      limit,
      `workspace ${workspace.name} already has ${limit} webhook endpoints; delete one first`,
    );
  const id = newId();
  const secret = newWebhookSecret();
  const row = await insertWebhookEndpoint(ctx.db, {
    id,
    workspaceId: workspace.id,
    url: ctx.body.url,
    description: ctx.body.description || null,
    eventTypes: ctx.body.event_types,
    sealed: ctx.deps.webhooks.box.seal(id, secret),
  });
  return {
    status: 201,
    body: { webhook_endpoint: { ...renderWebhookEndpoint(row), secret } },
    headers: { location: `${API_PREFIX}/workspaces/${workspace.id}/webhook-endpoints/${id}` },
  };
};

export const getWebhookEndpoint: Handler<'getWebhookEndpoint', WebhookDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  const row = await webhookEndpointOf(ctx.db, workspace.id, ctx.path.webhook_endpoint);
  return { status: 200, body: { webhook_endpoint: renderWebhookEndpoint(row) } };
};

const updateWebhookEndpoint_: Handler<'updateWebhookEndpoint', WebhookDeps> = async (ctx) => {
  const { endpoint } = await managed(ctx);
  checkEventTypes(ctx.body.event_types);
  await checkUrl(ctx.deps, ctx.body.url);
  const row = await updateWebhookEndpoint(ctx.db, endpoint.id, {
    url: ctx.body.url,
    eventTypes: ctx.body.event_types,
    description: ctx.body.description,
  });
  return { status: 200, body: { webhook_endpoint: renderWebhookEndpoint(row) } };
};

const deleteWebhookEndpoint_: Handler<'deleteWebhookEndpoint', WebhookDeps> = async (ctx) => {
  const { endpoint } = await managed(ctx);
  await deleteWebhookEndpoint(ctx.db, endpoint.id);
  return { status: 204, body: undefined };
};

const disableWebhookEndpoint_: Handler<'disableWebhookEndpoint', WebhookDeps> = async (ctx) => {
  const { endpoint } = await managed(ctx);
  const row = await disableWebhookEndpoint(ctx.db, endpoint.id);
  return { status: 200, body: { webhook_endpoint: renderWebhookEndpoint(row) } };
};

const enableWebhookEndpoint_: Handler<'enableWebhookEndpoint', WebhookDeps> = async (ctx) => {
  const { endpoint } = await managed(ctx);
  const row = await enableWebhookEndpoint(ctx.db, endpoint.id, now(ctx));
  return { status: 200, body: { webhook_endpoint: renderWebhookEndpoint(row) } };
};

/** A new secret, shown once; the current one signs beside it for `overlap_seconds` (default a day). */
const rotateWebhookEndpoint_: Handler<'rotateWebhookEndpoint', WebhookDeps> = async (ctx) => {
  const { endpoint } = await managed(ctx);
  const overlap = ctx.body?.overlap_seconds ?? 86_400;
  const { box } = ctx.deps.webhooks;
  const secret = newWebhookSecret();
  const previous = overlap > 0 ? await sealedSecretOf(ctx.db, endpoint.id) : null;
  const row = await rotateWebhookEndpoint(ctx.db, endpoint.id, {
    secret: box.seal(endpoint.id, secret),
    previous,
    previousUntil: previous ? new Date(now(ctx).getTime() + overlap * 1000) : null,
  });
  return { status: 200, body: { webhook_endpoint: { ...renderWebhookEndpoint(row), secret } } };
};

/** Queues a sample event of the chosen type (`svc-webhook-test: true`), whatever the endpoint's state. */
export const testWebhookEndpoint: Handler<'testWebhookEndpoint', WebhookDeps> = async (ctx) => {
  const { workspace, endpoint } = await managed(ctx);
  const type = ctx.body.event_type;
  const eventId = newId();
  const at = now(ctx);
  const event = workspaceEventTypes().includes(type)
    ? sampleEvent(type, workspace.id, eventId, at)
    : undefined;
  if (!event)
    throw invalidArgument([
      { field: 'event_type', description: `${type} is not a workspace event type (see WorkspaceEventType)` },
    ]);
  const id = newId();
  await queueWebhookDelivery(ctx.db, {
    id,
    endpointId: endpoint.id,
    eventId,
    sequence: null,
    type,
    payload: JSON.stringify(event),
    test: true,
    due: at,
  });
  ctx.deps.webhooks.wake();
  const row = await webhookDeliveryOf(ctx.db, endpoint.id, id);
  return { status: 200, body: { webhook_delivery: renderWebhookDelivery(row, []) } };
};

export const listWebhookDeliveries: Handler<'listWebhookDeliveries', WebhookDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  const endpoint = await webhookEndpointOf(ctx.db, workspace.id, ctx.path.webhook_endpoint);
  const page = pageRequest(ctx.deps.cursors, ctx.query, {
    op: 'listWebhookDeliveries',
    endpoint: endpoint.id,
    status: ctx.query.status ?? null,
  });
  const rows = await listWebhookDeliveryRows(ctx.db, endpoint.id, {
    after: page.after,
    limit: page.limit + 1,
    status: ctx.query.status,
  });
  const { items, next_cursor, has_more } = toPage(ctx.deps.cursors, page, rows);
  const attempts = await attemptsOf(
    ctx.db,
    items.map((row) => row.id),
  );
  return {
    status: 200,
    body: {
      webhook_deliveries: items.map((row) => renderWebhookDelivery(row, attempts.get(row.id) ?? [])),
      next_cursor,
      has_more,
    },
  };
};

export const getWebhookDelivery: Handler<'getWebhookDelivery', WebhookDeps> = async (ctx) => {
  const { workspace } = await permittedWorkspace(ctx);
  const endpoint = await webhookEndpointOf(ctx.db, workspace.id, ctx.path.webhook_endpoint);
  const row = await webhookDeliveryOf(ctx.db, endpoint.id, ctx.path.delivery);
  const attempts = await attemptsOf(ctx.db, [row.id]);
  return { status: 200, body: { webhook_delivery: renderWebhookDelivery(row, attempts.get(row.id) ?? []) } };
};

/** The delivery again, at once, with a fresh round of retries; not while pending or disabled. */
const redeliverWebhookDelivery_: Handler<'redeliverWebhookDelivery', WebhookDeps> = async (ctx) => {
  const { endpoint } = await managed(ctx);
  const delivery = await webhookDeliveryOf(ctx.db, endpoint.id, ctx.path.delivery, { lock: true });
  if (delivery.status === 'pending')
    throw new ApiError('invalid_state', `delivery ${delivery.id} is still pending`, {
      details: { current_state: delivery.status },
    });
  if (endpoint.status === 'disabled')
    throw new ApiError('invalid_state', `webhook endpoint ${endpoint.id} is disabled; enable it first`, {
      details: { current_state: endpoint.status },
    });
  const row = await redeliverWebhookDelivery(ctx.db, delivery.id, now(ctx));
  ctx.deps.webhooks.wake();
  const attempts = await attemptsOf(ctx.db, [row.id]);
  return { status: 200, body: { webhook_delivery: renderWebhookDelivery(row, attempts.get(row.id) ?? []) } };
};

export const webhookHandlers = {
  listWebhookEndpoints,
  createWebhookEndpoint,
  getWebhookEndpoint,
  updateWebhookEndpoint: updateWebhookEndpoint_,
  deleteWebhookEndpoint: deleteWebhookEndpoint_,
  disableWebhookEndpoint: disableWebhookEndpoint_,
  enableWebhookEndpoint: enableWebhookEndpoint_,
  rotateWebhookEndpoint: rotateWebhookEndpoint_,
  testWebhookEndpoint,
  listWebhookDeliveries,
  getWebhookDelivery,
  redeliverWebhookDelivery: redeliverWebhookDelivery_,
};
