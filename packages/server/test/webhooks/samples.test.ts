import { loadDocument } from '@svc/contract';
import { describe, expect, test } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import { sampleEvent, workspaceEventTypes } from '../../src/webhooks/samples.js';
import { schemaErrors } from '../support/spec-schemas.js';

describe('webhooks: sample events', () => {
  const webhooks =
    (
      loadDocument() as {
        webhooks?: Record<
          string,
          { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }
        >;
      }
    ).webhooks ?? {};

  test('every workspace event type has a webhook entry in the spec', () => {
    expect(Object.keys(webhooks).sort()).toEqual(workspaceEventTypes().sort());
  });

  test.each(workspaceEventTypes())('%s: a sample valid against its webhook schema', (type) => {
    const workspaceId = newId();
    const event = sampleEvent(type, workspaceId, newId(), new Date());
    expect(event).toMatchObject({ type, workspace_id: workspaceId });
    const ref = webhooks[type]?.post.requestBody.content['application/json']?.schema.$ref ?? '';
    expect(schemaErrors(ref.replace('#/components/schemas/', ''), event)).toEqual([]);
  });
});
