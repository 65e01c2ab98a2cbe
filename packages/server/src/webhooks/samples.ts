import { loadDocument } from '@svc/contract';

// The sample events `POST …/webhook-endpoints/{webhook_endpoint}/test` sends: the type's example event
// from the spec (the workspace event stream's examples), else an event built around an example of its
// resource from the spec's GET answers, with a new id, the caller's workspace and the current time.

type Json = Record<string, unknown>;

/** The event types the spec lists (`WorkspaceEventType`). */
export function workspaceEventTypes(): string[] {
  const schema = loadDocument().components?.schemas?.WorkspaceEventType as { enum?: string[] } | undefined;
  return schema?.enum ?? [];
}

function streamExample(type: string): Json | undefined {
  const paths = loadDocument().paths as Record<string, Record<string, Json>>;
  const content = (paths['/workspaces/{workspace}/events']?.get as Json | undefined)?.responses as
    | Record<string, { content?: Record<string, { examples?: Record<string, { value?: unknown }> }> }>
    | undefined;
  const examples = content?.['200']?.content?.['text/event-stream']?.examples ?? {};
  for (const example of Object.values(examples))
    for (const item of (example.value as { event?: string; data?: string }[] | undefined) ?? [])
      if (item.event === type && typeof item.data === 'string') return JSON.parse(item.data) as Json;
  return undefined;
}

/** An example of the resource `noun` (`computer`, `service_account`…) from a GET answer of the spec. */
function resourceExample(noun: string): Json | undefined {
  const paths = loadDocument().paths as Record<string, Record<string, Json>>;
  for (const item of Object.values(paths)) {
    const responses = (item.get as Json | undefined)?.responses as
      | Record<string, { content?: Record<string, { examples?: Record<string, { value?: Json }> }> }>
      | undefined;
    for (const example of Object.values(responses?.['200']?.content?.['application/json']?.examples ?? {})) {
      const value = example.value;
      const one = value?.[noun];
      if (one && typeof one === 'object' && !Array.isArray(one)) return one as Json;
      const many = value?.[`${noun}s`];
      if (Array.isArray(many) && many[0] && typeof many[0] === 'object') return many[0] as Json;
    }
  }
  return undefined;
}

/**
 * A sample event of `type` for `workspaceId`: the spec's example with `id`, `workspace_id` and
 * `created_at` set (and the resource's `workspace_id` when it has one). `undefined` for a type the
 * spec has no example for.
 *
 * @example
 * const event = sampleEvent('computer.created', workspace.id, newId(), new Date());
 */
export function sampleEvent(type: string, workspaceId: string, id: string, at: Date): Json | undefined {
  const noun = type.slice(0, type.indexOf('.'));
  const base =
    streamExample(type) ??
    (() => {
      const resource = resourceExample(noun);
      return resource ? { sequence: 1, type, [noun]: resource } : undefined;
    })();
  if (!base) return undefined;
  const resource = base[noun] as Json | undefined;
  const shaped =
    resource && 'workspace_id' in resource
      ? { ...resource, workspace_id: workspaceId }
      : noun === 'workspace' && resource
        ? { ...resource, id: workspaceId }
        : resource;
  return {
    id,
    sequence: base.sequence ?? 1,
    type,
    workspace_id: workspaceId,
    created_at: at.toISOString(),
    [noun]: shaped,
  };
}
